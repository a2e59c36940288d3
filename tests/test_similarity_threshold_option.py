"""A similarity threshold outside (0, 1] is one sentence and exit 2, never a traceback, in
both COMPASS commands and in Python (issue 40: ``--similarity 2`` raised ValueError with a
traceback, ``-1`` and ``nan`` passed)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from foilbench.cli.main import cli
from foilbench.errors import FoilbenchError

BAD = ["2", "-1", "nan", "1.0001", "inf", "high"]


@pytest.mark.parametrize("value", BAD)
def test_construct_compass_refuses_an_out_of_range_similarity(tmp_path, value):
    res = CliRunner().invoke(cli, ["construct", "compass", "--similarity", value, "--dry-run",
                                   "--out", str(tmp_path / "o")])
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert "Traceback" not in res.output
    lines = [x for x in res.output.splitlines() if x.startswith("Error:")]
    assert lines == [f"Error: Invalid value for '--similarity': {value!r} is not a similarity "
                     "threshold: give a cosine in (0, 1], such as 0.8, or 0 to turn the "
                     "filter off"]
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("value", ["2", "-1", "nan"])
def test_compass_build_refuses_an_out_of_range_similarity(tmp_path, value):
    graphs, images = tmp_path / "g.json", tmp_path / "images"
    graphs.write_text("[]")
    images.mkdir()
    res = CliRunner().invoke(cli, ["compass", "build", str(graphs), str(images),
                                   str(tmp_path / "out"), "--similarity", value])
    assert res.exit_code == 2, res.output
    assert "is not a similarity threshold" in res.output and "Traceback" not in res.output


@pytest.mark.parametrize("value", ["0", "0.8", "1"])
def test_in_range_similarities_and_zero_for_off_are_taken(tmp_path, value):
    res = CliRunner().invoke(cli, ["construct", "compass", "--similarity", value, "--dry-run",
                                   "--n-scenes", "1", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("value", [2, -1, float("nan"), 0])
def test_python_refuses_it_before_any_call(value):
    from foilbench.construct.compass.pipeline import CompassConfig
    from foilbench.construct.compass.similarity import SimilarityFilter

    with pytest.raises(FoilbenchError, match=r"is not in \(0, 1\]"):
        CompassConfig(similarity=value)
    with pytest.raises(FoilbenchError, match=r"is not in \(0, 1\]"):
        SimilarityFilter(lambda texts: None, "x", value)
    assert CompassConfig(similarity=None).similarity is None


def test_autocomp_text_threshold_is_a_score_in_0_1(tmp_path):
    res = CliRunner().invoke(cli, ["construct", "autocomp", "--text-threshold", "2",
                                   "--dry-run", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "--text-threshold" in res.output, res.output

