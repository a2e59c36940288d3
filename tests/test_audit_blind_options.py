"""Auto-Comp App. A.8: blind audits with at most 50 options per item (49 sampled negatives),
seeded; and `audit filters` / `analyze relations` reach their functions from the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from foilbench.audit.blind import blind_audit_captions
from foilbench.audit.blind_options import subsample_options
from foilbench.cli.main import cli


def test_subsample_keeps_positive_and_draws_distinct_negatives():
    caps = [["p"] + [f"n{i}" for i in range(728)], ["q", "x", "y"]]
    out = subsample_options(caps, 50, seed=3)
    assert out[0][0] == "p" and len(out[0]) == 50 and len(set(out[0])) == 50
    assert set(out[0][1:]) <= set(caps[0][1:])
    assert out[1] == ["q", "x", "y"]  # fewer than 50: untouched
    assert subsample_options(caps, 50, seed=3) == out  # seeded
    assert subsample_options(caps, 50, seed=4)[0] != out[0]
    # item 0's draw does not depend on the items after it
    assert subsample_options(caps[:1], 50, seed=3)[0] == out[0]
    assert subsample_options(caps, None) == caps
    with pytest.raises(ValueError, match="at least 2"):
        subsample_options(caps, 1)


def test_chance_after_subsampling_is_one_over_max_options():
    rng = np.random.default_rng(0)
    caps = [[f"pos {i}"] + [f"neg {i} {j} " + "w" * int(rng.integers(3)) for j in range(99)]
            for i in range(20)]
    res = blind_audit_captions(subsample_options(caps, 50), np.array(["t"] * 20),
                               np.arange(20), scorers=("length",), folds=2)
    assert res["scorers"]["length"]["overall"]["chance"] == pytest.approx(1 / 50)


@pytest.fixture(scope="module")
def autocomp_n3(tmp_path_factory):
    from foilbench.construct.autocomp.bench import build_autocomp
    from foilbench.data.format import write_benchmark

    root = tmp_path_factory.mktemp("ac3")
    benches = build_autocomp(root / "src", seed=0, n_concepts=6, size=32, ns=(3,),
                             tasks=("color",), progress=False)
    return write_benchmark(benches["confusion"], root / "confusion")


def test_cli_blind_max_options(autocomp_n3, tmp_path):
    out = tmp_path / "b.json"
    res = CliRunner().invoke(cli, ["audit", "blind", str(autocomp_n3), "--scorer", "length",
                                   "--folds", "2", "--max-options", "50", "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert "at most 50 options per item" in res.output
    overall = json.loads(out.read_text())["scorers"]["length"]["overall"]
    assert overall["chance"] == pytest.approx(1 / 50) and overall["n"] == 12


def test_cli_filters_on_offline_construction_log(tmp_path):
    from test_analysis_autocomp_filters import CONCEPTS, DROPS, _log

    (tmp_path / "construction_log.jsonl").write_text(
        "\n".join(json.dumps(r) for r in _log(CONCEPTS, DROPS)) + "\n")
    res = CliRunner().invoke(cli, ["audit", "filters", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "survival per stage" in res.output and "label_tv" in res.output
    res = CliRunner().invoke(cli, ["audit", "filters", str(tmp_path / "nothing")])
    assert res.exit_code == 2
