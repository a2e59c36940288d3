"""``summary.json`` has a format version and a published JSON Schema
(docs/summary.schema.json) generated from :mod:`foilbench.runner.summary_schema`; a real
summary validates against it, and a document that breaks the format does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _reliability import choice_folder
from foilbench import runner
from foilbench.runner.summary_schema import SUMMARY_FORMAT_VERSION, Summary, schema_text

jsonschema = pytest.importorskip("jsonschema")  # the dev extra

SCHEMA_FILE = Path(__file__).resolve().parents[1] / "docs" / "summary.schema.json"


def test_the_checked_in_schema_is_the_generated_one():
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        "regenerate: python -m foilbench.runner.summary_schema docs/summary.schema.json")


@pytest.fixture(scope="module")
def summary(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("summary")
    mp = pytest.MonkeyPatch()
    mp.setenv("FOILBENCH_HOME", str(tmp / "home"))
    try:
        outcome = runner.run(["tiny-random"], ["tiny-builtin", str(choice_folder(tmp / "c", 6))],
                             tmp / "out", report=False, n_boot=100, progress=False,
                             use_cache=False, log=None)
    finally:
        mp.undo()
    return json.loads(outcome.summary_path.read_text(encoding="utf-8"))


def test_a_real_summary_validates_against_the_published_schema(summary):
    assert summary["format_version"] == SUMMARY_FORMAT_VERSION
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(summary)
    Summary.model_validate(summary)
    assert len(summary["runs"]) == 2 and summary["provenance"]["libraries"]["numpy"]


@pytest.mark.parametrize("breakage", ["no_version", "other_version", "unknown_field",
                                      "metric_as_text", "row_without_n"])
def test_a_summary_that_breaks_the_format_does_not_validate(summary, breakage):
    doc = json.loads(json.dumps(summary))
    if breakage == "no_version":
        del doc["format_version"]
    elif breakage == "other_version":
        doc["format_version"] = SUMMARY_FORMAT_VERSION + 1
    elif breakage == "unknown_field":
        doc["surprise"] = 1
    elif breakage == "metric_as_text":
        doc["results"][0]["value"] = "high"
    else:
        del doc["runs"][0]["metrics"][next(iter(doc["runs"][0]["metrics"]))]["n"]
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(doc)
