"""``foilbench fetch``: download a published release the loaders read."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("fetch")
@click.argument("name", required=False, metavar="[NAME|hf://datasets/ORG/NAME@REV]")
@click.option("--to", "to", type=click.Path(path_type=Path), default=None,
              help="Folder for the releases (default: $FOILBENCH_HOME/releases).")
@click.option("--list", "list_only", is_flag=True, help="List the releases and exit.")
@click.option("--yes", is_flag=True, help="Accept a gated release's terms without asking.")
def fetch(name: str | None, to: Path | None, list_only: bool, yes: bool) -> None:
    """Download release NAME from its official source, resumably and checksum-verified, and
    print the --benchmark spec that reads it (then `--benchmark NAME` finds it too).

    \b
    Examples:
      foilbench fetch --list
      foilbench fetch sugarcrepe --to /data        (SugarCrepe JSON + COCO val2017)
      HF_TOKEN=hf_... foilbench fetch winoground   (gated: accept the terms on the Hub first)
      foilbench fetch hf://datasets/ORG/NAME@v1.0   (into the Hub cache; docs/hub.md)
    """
    if name is not None and name.startswith("hf://"):
        if to is not None:
            raise click.UsageError("--to does not apply to an hf:// spec: it is fetched into "
                                   "the Hugging Face cache (HF_HUB_CACHE)")
        _fetch_hub(name)
        return
    from foilbench.fetch import catalog
    from foilbench.fetch.fetcher import fetch_release, require_token, terms

    if list_only or name is None:
        for release in catalog.releases().values():
            click.echo(terms(release))
        click.echo(no_fetcher_line())
        return
    release = catalog.get(name)
    accept = True
    if release.gated and not yes:
        click.echo(terms(release))
        require_token(release)  # no token: refuse before asking anything
        accept = click.confirm("Do you accept these terms?", default=False)

    shown = {"gated": release.gated and not yes}

    def say(line: str) -> None:
        if shown["gated"] and line == terms(release):
            return  # already shown before asking
        click.echo(line)

    got = fetch_release(name, to, say=say, accept=accept)
    click.echo(f"fetched {name} into {got.folder}")
    if got.spec:
        click.echo(f"benchmark spec: {got.spec}")
        click.echo(f"  (or simply: --benchmark {name})")
        if release.also:
            click.echo(f"  also: {release.also.format(dir=got.folder, root=got.folder.parent)}")
    elif release.also:
        click.echo(release.also)


def _fetch_hub(spec: str) -> None:
    """Download a Hub benchmark spec now (a login node, before an offline run), printing
    the commit it resolved to and the pinned spec that reads exactly those files."""
    from foilbench.data.hub import parse_hub_spec, snapshot

    ref = parse_hub_spec(spec)
    folder, record = snapshot(ref)
    pinned = f"hf://datasets/{ref.repo_id}@{record['commit']}" + (f"/{ref.path}" if ref.path
                                                                  else "")
    click.echo(f"fetched {ref.spec} (commit {record['commit']}) into {folder}")
    click.echo(f"benchmark spec pinned to that commit: {pinned}")


def no_fetcher_line() -> str:
    """The loaders no release feeds, and what to do for them."""
    from foilbench.data.registry import loaders
    from foilbench.fetch import catalog

    fed = {(rel.spec or "").partition(":")[0] for rel in catalog.releases().values()}
    import textwrap

    rest = [n for n in loaders().names() if n not in fed and n not in catalog.releases()]
    return "\n" + textwrap.fill(
        "No fetcher (download the release as its authors publish it, then --benchmark "
        f"LOADER:PATH; `foilbench benchmarks` describes each): {', '.join(rest)}", width=79)
