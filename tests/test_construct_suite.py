"""The embedded suite: byte-identical rebuilds, the index, the cache, skipped parts."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest

from foilbench.construct import suite as suite_module
from foilbench.construct.suite import SUITE_FILE, build_suite, embedded_suite, load_suite

TINY = {
    "pairs": {"n_scenes": 2, "foils_per_scene": 15},
    "autocomp": {"n_concepts": 1, "ns": (2, 3)},
    "autocomp-n1": {"n_concepts": 1},
    "compass": {"n_scenes": 2},
}


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_seed_gives_byte_identical_files(tmp_path):
    parts = ("autocomp", "autocomp-n1", "compass")
    build_suite(tmp_path / "a", seed=4, size=48, config={p: TINY[p] for p in parts},
                parts=parts, progress=False)
    build_suite(tmp_path / "b", seed=4, size=48, config={p: TINY[p] for p in parts},
                parts=parts, progress=False)
    a, b = _digests(tmp_path / "a"), _digests(tmp_path / "b")
    assert any(k.endswith("items.parquet") for k in a) and any(k.endswith(".png") for k in a)
    assert a == b
    c = _digests(build_and_return(tmp_path / "c", seed=5, parts=parts))
    assert c != a  # another seed, other bytes


def build_and_return(path: Path, seed: int, parts) -> Path:
    build_suite(path, seed=seed, size=48, config={p: TINY[p] for p in parts}, parts=parts,
                progress=False)
    return path


@pytest.mark.slow
def test_whole_suite_rebuild_is_byte_identical(tmp_path):
    """All parts, pairs included (its caption tokenizer import alone takes ~20 s)."""
    build_suite(tmp_path / "a", seed=1, size=48, config=TINY, progress=False)
    build_suite(tmp_path / "b", seed=1, size=48, config=TINY, progress=False)
    a, b = _digests(tmp_path / "a"), _digests(tmp_path / "b")
    assert a == b
    names = [x.name for x in load_suite(tmp_path / "a")]
    assert names == ["world-pairs", "autocomp-swap", "autocomp-confusion", "autocomp-n1",
                     "compass-synth"]


def test_index_lists_the_benchmarks_and_they_load(tmp_path):
    index = build_suite(tmp_path, seed=0, size=48, config={"autocomp": TINY["autocomp"]},
                        parts=("autocomp",), progress=False)
    assert index["benchmarks"] == ["autocomp-swap", "autocomp-confusion"]
    assert json.loads((tmp_path / SUITE_FILE).read_text())["benchmarks"] == index["benchmarks"]
    benches = load_suite(tmp_path)
    assert [b.name for b in benches] == index["benchmarks"]
    assert all(b.kind == "choice" and len(b) > 0 for b in benches)
    # each folder holds its own images (paths never escape the benchmark root)
    for b in benches:
        assert all((b.root / rel).exists() for rel in b.unique_images())


def test_missing_part_is_skipped_with_a_note(tmp_path, monkeypatch, capsys):
    ghost = suite_module.Part("ghost", "foilbench.no_such_module:build")
    monkeypatch.setattr(suite_module, "PARTS", (ghost,))
    index = build_suite(tmp_path, progress=False)
    assert index["benchmarks"] == [] and "ghost" in index["skipped"]
    assert "skipping ghost" in capsys.readouterr().err


def test_unknown_part_names_what_is_possible(tmp_path):
    with pytest.raises(ValueError, match="unknown suite part 'pears'; possible: pairs"):
        build_suite(tmp_path, config={"pears": {}})


def test_embedded_suite_builds_once_then_loads_from_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path))
    tiny_autocomp = replace(suite_module.PARTS[1], defaults=TINY["autocomp"])
    assert tiny_autocomp.name == "autocomp"
    monkeypatch.setattr(suite_module, "PARTS", (tiny_autocomp,))
    monkeypatch.setattr(suite_module, "DEFAULT_SIZE", 48)
    first = embedded_suite(check_images=True)
    target = suite_module.cache_dir(0)
    assert target.parent == tmp_path / "suite" and (target / SUITE_FILE).exists()
    assert [b.name for b in first] == ["autocomp-swap", "autocomp-confusion"]

    def refuse(*args, **kwargs):
        raise AssertionError("the cached suite was rebuilt")

    monkeypatch.setattr(suite_module, "build_suite", refuse)
    again = embedded_suite()
    assert [len(b) for b in again] == [len(b) for b in first]
    # no temporary build folders are left behind
    assert [p.name for p in (tmp_path / "suite").iterdir()] == [target.name]


def test_n1_part_is_in_the_suite_and_leaves_other_parts_unchanged(tmp_path):
    """Adding autocomp-n1 must not move a byte of the parts built before it."""
    alone = _digests(build_and_return(tmp_path / "alone", seed=2, parts=("autocomp",)))
    both = _digests(build_and_return(tmp_path / "both", seed=2,
                                     parts=("autocomp", "autocomp-n1")))
    assert {k: v for k, v in both.items() if k.startswith("autocomp-swap/")
            or k.startswith("autocomp-confusion/")} == {
        k: v for k, v in alone.items() if k != SUITE_FILE}
    names = [b.name for b in load_suite(tmp_path / "both")]
    assert names == ["autocomp-swap", "autocomp-confusion", "autocomp-n1"]
    n1 = load_suite(tmp_path / "both")[-1]
    assert len(n1) == 2 * 1 * 2 * 2 and set(n1.items["n_objects"]) == {1}  # x Vary Color, Object


def test_progress_false_draws_no_bar(tmp_path, capsys):
    """Every part takes the progress flag (the COMPASS part used to draw its bar anyway)."""
    parts = ("autocomp", "autocomp-n1", "compass")
    build_and_return(tmp_path, seed=0, parts=parts)
    assert capsys.readouterr().err == ""


# Items-table checksums (image bytes left out: PNG encoding may differ across zlib builds) of
# the TINY suite at seed 1, 48 px, recorded before the builder-contract refactor. A change here
# changes the suite's content: update the numbers only for an intended change, and say so.
# The autocomp-* numbers changed with issue 12's Auto-Comp fidelity (condition-worded captions,
# true/equivalent negative columns, Vary Color and Vary Object at N = 1); world-pairs with
# issue 14's agents (modify_action, swap_role, cast scenes); compass-synth with issue 12's
# COMPASS K = 4 rule (skill sets with fewer than four valid negatives are dropped);
# compass-synth again with issue 25's same-category replacements (COMPASS §3.2: cube -> sphere,
# never cube -> mug; translucent <-> transparent filtered as near-synonyms).
# All five changed with issue 28's world scale (object unit 0.10 -> 0.20 of the image, objects
# overlapping under the 60%-visible rule, a wider stage): positions, sizes and so captions and
# relations of every part change; the items' structure does not.
# compass-synth with issue 41's narrow categories (mug -> bottle or box, never chair or lamp;
# a spatial relation replaced on its own axis: left of -> right of, not in front of).
GOLDEN_ITEMS = {
    "world-pairs": "eac407c7e40183a0", "autocomp-swap": "ef9c4cbbdea4844d",
    "autocomp-confusion": "cc739287ca79f7ef", "autocomp-n1": "6ded07de066d19d3",
    "compass-synth": "c97a93edc3c8f5aa",
}


def test_suite_items_match_the_recorded_checksums(tmp_path):
    build_suite(tmp_path, seed=1, size=48, config=TINY, progress=False)
    got = {b.name: b.compute_checksum(include_images=False).removeprefix("sha256:")[:16]
           for b in load_suite(tmp_path)}
    assert got == GOLDEN_ITEMS


def test_quiet_runs_build_the_suite_without_bars(tmp_path, monkeypatch):
    """`foilbench run --quiet` reaches the suite build: its bars follow settings.progress."""
    from foilbench.construct import suite as suite_mod
    from foilbench.data.registry import resolve_benchmarks

    seen = []

    def fake_build(out, seed, size, progress):
        seen.append(progress)
        (out / suite_mod.SUITE_FILE).write_text('{"benchmarks": []}')

    monkeypatch.setattr(suite_mod, "cache_dir", lambda seed=0: tmp_path / "suite-0")
    monkeypatch.setattr(suite_mod, "build_suite", fake_build)
    assert resolve_benchmarks("synth", progress=False) == []
    (tmp_path / "suite-0" / suite_mod.SUITE_FILE).unlink()
    assert resolve_benchmarks("synth") == []
    assert seen == [False, True]
