"""Model vs model where results are read: ``serve``'s leaderboard and ``sweep``'s matrix carry
the paired comparison the report's headline uses (same numbers, same verdict rule)."""

from __future__ import annotations

from html import escape
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from foilbench import runner
from foilbench.data.format import Manifest, make_benchmark
from foilbench.models.base import CallableDualEncoder
from foilbench.models.tiny import TinyRandomEncoder
from foilbench.report import comparisons as cmp
from foilbench.report.build import load_runs
from foilbench.report.headline import headline_parts
from foilbench.report.server import leaderboard_page
from foilbench.runner.settings import RunSettings
from foilbench.runner.sweeps import model_comparisons, write_outputs
from foilbench.store.db import ResultsStore


def _bench(root: Path):
    rng = np.random.default_rng(0)
    rows = []
    for k in range(16):
        base = rng.integers(0, 255, (16, 16, 3), dtype=np.uint8)
        foil = base.copy()
        foil[4:10, 4:10] = 0
        Image.fromarray(base).save(root / f"{k}_b.png")
        Image.fromarray(foil).save(root / f"{k}_f.png")
        rows.append({"item_id": f"p{k}", "image_base": f"{k}_b.png", "image_foil": f"{k}_f.png",
                     "caption_base": f"a red cube {k}", "caption_foil": f"a blue cube {k}",
                     "scene_id": f"s{k % 4}",
                     "edit_type": ("modify_color", "swap_spatial")[k % 2]})
    return make_benchmark(Manifest(name="pairs-vs", kind="pair"), pd.DataFrame(rows), root)


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("versus")
    bench = _bench(tmp)
    second = TinyRandomEncoder(seed=1, spec="tiny-b")
    models = [TinyRandomEncoder(seed=0),
              CallableDualEncoder(second.embed_images, second.embed_texts, name="tiny-b")]
    settings = RunSettings(n_boot=300, progress=False)
    with ResultsStore(tmp / "runs.duckdb") as store:
        for model in models:
            runner.write_cell(store, runner.evaluate_cell(model, bench, settings))
    return tmp / "runs.duckdb"


def test_serve_leaderboard_has_the_paired_comparison(db):
    _, _, deltas = headline_parts(load_runs(db, []))
    [row] = cmp.rows(deltas)
    html = leaderboard_page(db, {})
    assert "Model vs model (paired, primary metric)" in html
    for cell in row[1:]:  # the same numbers and verdict the report's headline computes
        assert f">{escape(cell)}</td>" in html
    assert row[-1] == "too few scenes (< 30) to call"  # 4 scenes: nobody is called better
    assert "Model vs model" not in leaderboard_page(db, {"edit_type": "modify_color"})
    assert "Model vs model" in leaderboard_page(db, {"benchmark": "pairs-vs"})


def test_sweep_matrix_carries_the_comparisons(db, tmp_path):
    with ResultsStore(db, read_only=True) as store:
        runs = store.list_runs()
    cells = pd.DataFrame({"model": runs["model_spec"], "benchmark": runs["benchmark_name"],
                          "metric": "group", "value": 0.1, "ci_low": 0.0, "ci_high": 0.2,
                          "n": 16, "partial": False, "run_id": runs["run_id"]})
    versus = model_comparisons(db, cells)
    assert len(versus) == 1 and versus["unit"].iloc[0] == "items"
    paths = write_outputs(cells, tmp_path, list(runs["model_spec"]), ["pairs-vs"], versus)
    assert {p.name for p in paths} == {"matrix.csv", "matrix.md", "matrix.tex",
                                       "comparisons.csv"}
    md = (tmp_path / "matrix.md").read_text()
    assert "Model vs model (paired, primary metric):" in md
    assert "| pairs-vs | tiny-random | tiny-b |" in md
    assert pd.read_csv(tmp_path / "comparisons.csv")["delta"].iloc[0] == \
        pytest.approx(versus["delta"].iloc[0])


def test_serve_model_page_marks_the_primary_metric_first_and_collapses_breakdowns(db):
    import re

    from foilbench.report.model_page import model_page

    with ResultsStore(db, read_only=True) as store:
        fp = store.con.execute("SELECT model_fingerprint FROM runs LIMIT 1").fetchone()[0]
    html = model_page(db, fp)
    first = re.search(r"<table.*?</table>", html, re.S).group(0)
    metrics = re.findall(r"<tr class=\"\"><td>([^<]*)</td>", first)
    assert metrics == ["group *", "i2t", "t2i"]  # the primary first, marked; then the rest
    assert "<details><summary>group by edit_type (2)</summary>" in html
    assert html.count("<details>") == 2  # primary by edit type; other metrics by breakdown


def test_serve_leaderboard_marks_the_primary_metric_and_lists_it_first(db):
    import re

    from foilbench.report.server import leaderboard_frame

    frame = leaderboard_frame(db)
    assert set(frame.loc[frame["primary"], "metric"]) == {"group"}
    html = leaderboard_page(db, {})
    first = re.search(r'<table class="sortable" id="leaderboard-0">.*?</table>', html, re.S)
    metrics = re.findall(r"</a></td><td>([^<]*)</td>", first.group(0))
    assert metrics[:2] == ["group *", "group *"] and set(metrics[2:]) == {"i2t", "t2i"}
