"""``foilbench fetch``: download the published releases the loaders read, from each release's
official source, resumably (HTTP Range), verified against the checksum the source publishes,
with licence or gating terms shown first; the fetched-releases index under
``$FOILBENCH_HOME/releases/index.json`` lets ``--benchmark NAME`` find a fetched release.

Modules: catalog (releases.json: what each release is and where it lives), listing (the file
lists GitHub and the Hugging Face Hub publish, with checksums), download (one resumable,
verified file), unpack (safe zip/tar extraction), index (what was fetched where), fetcher
(one release end to end). Nothing here runs at import.
"""


def fetch_release(name, to=None, **kwargs):
    """Fetch release ``name`` (see :func:`foilbench.fetch.fetcher.fetch_release`)."""
    from foilbench.fetch.fetcher import fetch_release as _fetch

    return _fetch(name, to=to, **kwargs)
