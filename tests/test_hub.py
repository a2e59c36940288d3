"""Benchmarks on the Hugging Face Hub by name and revision (``hf://datasets/ORG/NAME@REV``,
``LOADER:hf://...``) and ``foilbench fetch`` through the Hub cache, against the strict fake
Hub of tests/_hub_server.py on 127.0.0.1 (never the network)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from _hub_server import TOKEN, Hub, serve_hub
from _release_fixtures import winoground_parquet
from foilbench.cli.main import cli
from foilbench.data.format import write_benchmark
from foilbench.data.hub import HubError, HubRef, parse_hub_spec
from foilbench.data.registry import resolve_benchmark
from foilbench.data.tiny import tiny_benchmark
from foilbench.extras import MissingExtraError
from foilbench.fetch import catalog

hf_constants = pytest.importorskip("huggingface_hub.constants")
SHARD = "data/test-00000-of-00001.parquet"
KNOWN = ("/api/datasets/", "/datasets/")


def _files(folder, prefix=""):
    return {prefix + p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """The fake Hub with a foilbench folder (org/tiny, under bench/) and gated Winoground."""
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    write_benchmark(tiny_benchmark(), tmp_path / "bench")
    fake = Hub()
    fake.add("org/tiny", {**_files(tmp_path / "bench", "bench/"), "README.md": b"# tiny"},
             branches=("main", "v1"))
    src = winoground_parquet(tmp_path / "wino-src")
    fake.add("facebook/winoground", {SHARD: (src / SHARD).read_bytes()}, gated=True)
    with serve_hub(fake) as url:
        monkeypatch.setenv("HF_ENDPOINT", url)
        # read by huggingface_hub at import: its telemetry would ask the real Hub (foilbench
        # passes the endpoint on every call, so HF_ENDPOINT set now is honoured)
        monkeypatch.setattr(hf_constants, "HF_HUB_DISABLE_TELEMETRY", True)
        # conftest sets HF_HUB_OFFLINE=1 for the suite; the fake on 127.0.0.1 is allowed
        monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)
        monkeypatch.setattr(catalog, "endpoints", lambda: {**catalog._data()["endpoints"],
                                                           "hf": url})
        yield fake, url, tmp_path
    assert all(r["path"].startswith(KNOWN) for r in fake.log), fake.log


def test_a_foilbench_folder_on_the_hub_by_name_and_revision(hub):
    fake, url, tmp = hub
    bench = resolve_benchmark("hf://datasets/org/tiny@v1/bench")
    assert len(bench) == len(tiny_benchmark())
    record = bench.manifest.extras["hub"]
    assert record == {"spec": "hf://datasets/org/tiny@v1/bench", "repo": "datasets/org/tiny",
                      "revision": "v1", "commit": fake.repos["org/tiny"].commit,
                      "path": "bench", "endpoint": url}
    asked = [r["path"] for r in fake.log]
    assert "/api/datasets/org/tiny/revision/v1" in asked
    assert not any(p.endswith("README.md") for p in asked)  # only the named folder
    cache = tmp / "hf" / "hub" / "datasets--org--tiny"
    assert (cache / "refs" / "v1").read_text() == record["commit"]
    assert cache not in bench.root.resolve().parents  # plain files, not the cache's links


def test_a_run_records_the_resolved_commit_in_provenance(hub):
    from foilbench import runner

    fake, _, tmp = hub
    outcome = runner.run(["tiny-random"], ["hf://datasets/org/tiny@main/bench"], tmp / "out",
                         n_boot=200, progress=False, report=False)
    source = outcome.summary["runs"][0]["provenance"]["benchmark_source"]
    assert source["commit"] == fake.repos["org/tiny"].commit
    assert source["revision"] == "main" and source["repo"] == "datasets/org/tiny"


def test_a_commit_pin_needs_no_revision_lookup_and_offline_reads_the_cache(hub, monkeypatch):
    fake, _, _ = hub
    commit = fake.repos["org/tiny"].commit
    resolve_benchmark(f"hf://datasets/org/tiny@{commit}/bench")
    assert not any("/revision/" in r["path"] for r in fake.log)
    fake.log.clear()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    bench = resolve_benchmark(f"hf://datasets/org/tiny@{commit}/bench")
    assert fake.log == [] and bench.manifest.extras["hub"]["commit"] == commit
    with pytest.raises(HubError, match="not in the Hub cache"):
        resolve_benchmark("hf://datasets/org/other@main")


@pytest.mark.parametrize(("spec", "message"), [
    ("hf://datasets/org/tiny@nope/bench", "has no revision 'nope'"),
    ("hf://datasets/org/tiny@main/missing", "has no folder 'missing'"),
    ("hf://datasets/org/absent@main", "no such dataset repository"),
    ("hf://datasets/org/tiny@main", "no manifest.json there"),
    ("hf://datasets/facebook/winoground@main", "gated"),
])
def test_hub_failures_are_one_sentence_naming_the_spec(hub, spec, message):
    with pytest.raises(HubError, match=message) as err:
        resolve_benchmark(spec)
    assert spec.split("@")[0] in str(err.value) and "\n" not in str(err.value)


def test_a_loader_reads_a_release_from_the_hub_with_the_token(hub, monkeypatch):
    fake, _, tmp = hub
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    bench = resolve_benchmark("winoground:hf://datasets/facebook/winoground@main")
    assert len(bench.items) == 2 and bench.name == "winoground"
    assert bench.manifest.extras["hub"]["commit"] == fake.repos["facebook/winoground"].commit
    assert all(r["auth"] == f"Bearer {TOKEN}" for r in fake.log)
    cache = tmp / "hf" / "hub"
    assert cache not in bench.root.resolve().parents  # embedded images written outside it
    assert not list(cache.rglob("_foilbench_images"))


def test_fetch_goes_through_the_hub_cache_and_hf_specs_reuse_it(hub, monkeypatch):
    fake, _, tmp = hub
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    res = CliRunner().invoke(cli, ["fetch", "winoground", "--to", str(tmp / "d"), "--yes"])
    assert res.exit_code == 0, res.output
    assert "via the Hub cache" in res.output and "SHA-256 published by the source" in res.output
    index = json.loads((tmp / "home" / "releases" / "index.json").read_text())
    assert index["winoground"]["hub"]["commit"] == fake.repos["facebook/winoground"].commit
    assert (tmp / "d" / "winoground" / SHARD).is_file()
    assert len(resolve_benchmark("winoground").items) == 2
    downloads = [r for r in fake.log if r["method"] == "GET" and r["path"].endswith(SHARD)]
    assert len(downloads) == 1
    fake.log.clear()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the same files, from the cache fetch filled
    bench = resolve_benchmark("winoground:hf://datasets/facebook/winoground@main")
    assert len(bench.items) == 2 and fake.log == []


def test_parse_hub_spec_and_its_errors():
    assert parse_hub_spec("hf://datasets/a/b") == HubRef("a/b", "main", "")
    assert parse_hub_spec("hf://datasets/a/b@v2/x/y/").path == "x/y"
    for bad in ("hf://models/a/b", "hf://datasets/a", "hf://datasets/a/b@", "hf://datasets/a/b/../c"):
        with pytest.raises(HubError):
            parse_hub_spec(bad)


def test_without_huggingface_hub_the_error_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "huggingface_hub", None)
    with pytest.raises(MissingExtraError, match=r"foilbench\[hub\]"):
        resolve_benchmark("hf://datasets/org/tiny@main")


def test_fetch_of_a_hub_spec_prints_the_commit_pinned_spec(hub, monkeypatch):
    fake, _, _ = hub
    res = CliRunner().invoke(cli, ["fetch", "hf://datasets/org/tiny@v1/bench"])
    assert res.exit_code == 0, res.output
    commit = fake.repos["org/tiny"].commit
    assert f"hf://datasets/org/tiny@{commit}/bench" in res.output
    fake.log.clear()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert len(resolve_benchmark(f"hf://datasets/org/tiny@{commit}/bench")) == len(
        tiny_benchmark())
    assert fake.log == []


def test_materialise_refuses_a_link_out_of_the_cache_and_keeps_linked_files(tmp_path):
    from foilbench.data.hub import materialise

    storage = tmp_path / "cache" / "datasets--o--n"
    snap = storage / "snapshots" / "c0ffee"
    (storage / "blobs").mkdir(parents=True)
    snap.mkdir(parents=True)
    (storage / "blobs" / "b1").write_bytes(b"manifest")
    (snap / "manifest.json").symlink_to(storage / "blobs" / "b1")
    out = materialise(snap, storage, tmp_path / "files", "hf://datasets/o/n@c0ffee")
    assert (out / "manifest.json").read_bytes() == b"manifest"
    assert not (out / "manifest.json").is_symlink()
    (tmp_path / "secret").write_bytes(b"x")
    (snap / "evil.png").symlink_to(tmp_path / "secret")
    with pytest.raises(HubError, match="outside the Hub cache folder"):
        materialise(snap, storage, tmp_path / "files2", "hf://datasets/o/n@c0ffee")
