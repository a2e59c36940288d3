"""Shared loader plumbing: spec options, count warnings, missing-file summaries, registry."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from foilbench.data.loaders import common
from foilbench.data.registry import loaders
from foilbench.registry import load_target


def test_split_spec_options_and_errors(tmp_path):
    assert common.split_spec(f"{tmp_path}?images=/a/b&split=test", ("images", "split")) == \
        (tmp_path, {"images": "/a/b", "split": "test"})
    assert common.split_spec(str(tmp_path)) == (tmp_path, {})
    with pytest.raises(ValueError, match="unknown loader option\\(s\\) x; known: images"):
        common.split_spec("d?x=1", ("images",))
    with pytest.raises(ValueError, match="this loader takes no options"):
        common.split_spec("d?x=1")


def test_check_counts_warns_per_value_and_total():
    findings = common.Findings("t")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        common.check_counts(findings, "edit_type", {"a": 2, "c": 1}, {"a": 2, "b": 3})
    assert findings.messages == [
        "edit_type 'b': 0 items, the published release has 3",
        "edit_type 'c': 1 items, not in the published release",
        "3 items in all, the published release has 5"]
    assert all(issubclass(w.category, common.LoaderWarning) for w in caught)
    quiet = common.Findings("t")
    common.check_counts(quiet, "x", {"a": 1}, {"a": 1})
    assert quiet.messages == []


def test_missing_part_refuses_unless_drop():
    with pytest.raises(common.BenchmarkError, match="--allow-partial"):
        common.Findings("t").missing_part("no b.json", "raise")
    findings = common.Findings("t")
    with pytest.warns(common.LoaderWarning):
        findings.missing_part("no b.json", "drop")
    assert findings.partial


def test_missing_files_summary_counts_distinct_files(tmp_path):
    (tmp_path / "here.png").write_bytes(b"x")
    items = pd.DataFrame({"image": [f"m{k % 12}.png" for k in range(30)] + ["here.png"]})
    text = common.missing_files_summary(items, "choice", tmp_path)
    assert text.startswith(f"12 of 13 distinct image files are missing under {tmp_path}:")
    assert "  - m0.png" in text and "  - m9.png" in text and "m10.png" not in text
    assert text.endswith("... and 2 more")


def test_every_registered_loader_imports_and_says_where_to_get_the_data():
    import importlib

    for entry in loaders().entries():
        assert callable(load_target(entry.target)), entry.name
        module = importlib.import_module(entry.target.partition(":")[0])
        assert "http" in module.DOWNLOAD_NOTE or "huggingface-cli" in module.DOWNLOAD_NOTE \
            or "CompoSET" in module.DOWNLOAD_NOTE, entry.name
