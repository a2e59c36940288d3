"""Console tables fit the terminal: at 80 and 120 columns no line is longer than the width,
every model is named by a whole label (never cut with an ellipsis), a legend maps labels to
their specs, and each interval stays on one line."""

from __future__ import annotations

import io
import json
import re
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from rich.console import Console

from foilbench.cli.main import cli
from foilbench.cli.run_output import print_tables
from foilbench.errors import ModelError
from foilbench.models.labels import MAX_LABEL, legend, short_labels, split_label, split_labels

LONG = ("openclip:ViT-B-32:laion2b_s34b_b79k", "openclip:ViT-L-14-quickgelu:metaclip_fullcc",
        "hf:/models/google/siglip-base-patch16-224?score=cosine")
INTERVAL = re.compile(r"\[\d+\.\d, \d+\.\d\]")


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """One real run of tiny-random on a tiered pair benchmark and on tiny-builtin."""
    from foilbench import runner
    from test_units_run import planted_folder

    tmp = tmp_path_factory.mktemp("width")
    bench = planted_folder(tmp / "planted")
    mp = pytest.MonkeyPatch()
    mp.setenv("FOILBENCH_HOME", str(tmp / "home"))
    try:
        out = runner.run(["tiny-random"], [str(bench), "tiny-builtin"], tmp / "out",
                         n_boot=200, progress=False, report=False)
    finally:
        mp.undo()
    return out


def as_model(rec, spec):
    """The record ``rec`` as if model ``spec`` had made it (the table reads only these)."""
    return SimpleNamespace(metrics=rec.metrics, result=SimpleNamespace(
        benchmark=rec.result.benchmark, model=SimpleNamespace(spec=spec)))


def render(width, records, reference, labels=None):
    buf = io.StringIO()
    print_tables(Console(file=buf, width=width, color_system=None), records, reference, labels)
    return buf.getvalue()


@pytest.mark.parametrize("width", [80, 120])
def test_run_tables_fit_with_whole_labels_and_a_legend(stored, width):
    records = [as_model(rec, spec) for rec in stored.records for spec in LONG]
    text = render(width, records, stored.reference)
    lines = text.splitlines()
    assert max(map(len, lines)) <= width, text
    assert "…" not in text
    labels = short_labels(list(LONG))
    for spec, label in labels.items():
        assert len(label) <= MAX_LABEL
        assert f"  {label} = {spec}" in lines[:4]
        # every table row of this model starts with its whole label
        assert sum(line.split()[0] == label for line in lines if line.strip()) >= 3
    rows = [line for line in lines if line.split()[:1] and line.split()[0] in labels.values()
            and " = " not in line]
    assert rows and all(INTERVAL.search(line) for line in rows)  # value and CI on one line
    assert "planted per tier" in text


def test_the_default_models_are_named_by_what_sets_them_apart(stored):
    specs = ["foilbench-plain", "foilbench-swapneg", "foilbench-confneg"]
    assert short_labels(specs) == {"foilbench-plain": "plain", "foilbench-swapneg": "swapneg",
                                   "foilbench-confneg": "confneg"}
    records = [as_model(rec, spec) for rec in stored.records for spec in specs]
    text = render(80, records, stored.reference)
    assert max(map(len, text.splitlines())) <= 80 and "…" not in text
    assert "plain = foilbench-plain" in text


def test_a_label_given_in_the_spec_is_kept_and_removed_from_the_spec():
    assert split_label("openclip:ViT-B-32:laion2b_s34b_b79k?label=b32") == (
        "openclip:ViT-B-32:laion2b_s34b_b79k", "b32")
    assert split_label("hf:/w/siglip?score=cosine&label=sig&batch=8") == (
        "hf:/w/siglip?score=cosine&batch=8", "sig")
    assert split_label("tiny-random") == ("tiny-random", None)
    specs, given = split_labels(["tiny-random?label=t", LONG[0]])
    assert specs == ["tiny-random", LONG[0]] and given == {"tiny-random": "t"}
    labels = short_labels(specs, given)
    assert labels["tiny-random"] == "t" and len(labels[LONG[0]]) <= MAX_LABEL
    assert legend({"a": "a", "b-long": "b"}) == ["b = b-long"]


@pytest.mark.parametrize("label", ["", "x" * (MAX_LABEL + 1), "a b", "-x", "é"])
def test_a_bad_label_is_named(label):
    with pytest.raises(ModelError, match="model label"):
        split_label(f"tiny-random?label={label}")


def test_short_specs_keep_their_names_and_clashes_get_numbers():
    assert short_labels(["tiny-random"]) == {"tiny-random": "tiny-random"}
    clash = ["openclip:A:/w/model.pt" + "x" * 10, "openclip:B:/v/model.pt" + "x" * 10]
    labels = short_labels(clash)
    assert sorted(labels.values()) == ["m1", "m2"]


def test_cli_run_uses_the_label_and_stores_the_spec_without_it(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    res = CliRunner().invoke(cli, ["run", "--model", "tiny-random?label=rnd", "--benchmark",
                                   "tiny-builtin", "--n-boot", "200", "--no-report", "--quiet",
                                   "--out", str(tmp_path / "o")], terminal_width=80)
    assert res.exit_code == 0, res.output
    assert "rnd = tiny-random" in res.output
    assert any(line.split()[:1] == ["rnd"] for line in res.output.splitlines())
    shown = CliRunner().invoke(cli, ["show", "--db", str(tmp_path / "o" / "foilbench.duckdb"),
                                     "--json"])
    assert [r["model_spec"] for r in json.loads(shown.output)] == ["tiny-random"]


@pytest.mark.parametrize("width", [80, 120])
def test_show_fits_and_names_the_model_whole(tmp_path, monkeypatch, width):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", str(width))
    db = tmp_path / "o" / "foilbench.duckdb"
    res = CliRunner().invoke(cli, ["run", "--model", "tiny-random", "--benchmark",
                                   "tiny-builtin", "--n-boot", "200", "--no-report", "--quiet",
                                   "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    listing = CliRunner().invoke(cli, ["show", "--db", str(db)], terminal_width=width)
    run_id = re.search(r"\b([0-9a-f]{8,})", listing.output.split("run_id", 1)[-1]).group(1)
    shown = CliRunner().invoke(cli, ["show", run_id, "--db", str(db)], terminal_width=width)
    for res in (listing, shown):
        assert res.exit_code == 0, res.output
        assert max(map(len, res.output.splitlines())) <= width, res.output
        assert "…" not in res.output
        assert "tiny-random" in res.output
    assert INTERVAL.search(shown.output)


def test_cells_from_outside_print_as_text_not_markup():
    from foilbench.cli.run_output import print_markdown

    buf = io.StringIO()
    print_markdown(Console(file=buf, width=80, color_system=None),
                   "| model | x |\n|---|---|\n| [red]m[/red] | [b]1[/b] |\nnote [i]x[/i]",
                   {})
    assert "[red]m[/red]" in buf.getvalue() and "[b]1[/b]" in buf.getvalue()
    assert "note [i]x[/i]" in buf.getvalue()


SKILL_LOAD = """| level | skill | b_O | b_A | b_R | a | n | R2 | se_type |
|---|---|---|---|---|---|---|---|---|
| L2-OA | A | +2.93 (4.20) | -22.50** (3.72) | - | +100.49** (19.71) | 27 | 0.454 | hc3 |
| L3-OAR | A | -3.05 (15.03) | -16.80 (9.34) | -9.06 (12.38) | +138.10 (49.18) | 18 | 0.174 | hc3 |
Coefficients in percentage points of R@1 per unit count (COMPASS Eq. 4), (standard error)."""
AUTOCOMP = """| model | negative_set | n_objects | n_items | with_true_negative | r1 % | r1_valid % * | chance_r1 % | chance_r1_valid % | paper_chance % |
|---|---|---|---|---|---|---|---|---|---|
| foilbench-confneg | confusion | 2 | 128 | 64 | 16.4 | 16.4 | 15.6 | 15.8 | 15.6 |
| foilbench-plain | vary_object | 1 | 64 | 0 | 62.5 | 62.5 | 17.1 | 17.1 | - |"""


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("text", [SKILL_LOAD, AUTOCOMP])
def test_analysis_tables_fit_and_keep_every_cell(text, width):
    from foilbench.cli.run_output import print_markdown

    labels = {"foilbench-confneg": "confneg", "foilbench-plain": "plain"}
    buf = io.StringIO()
    print_markdown(Console(file=buf, width=width, color_system=None), text, labels)
    out = buf.getvalue()
    assert max(map(len, out.splitlines())) <= width, out
    words = set(out.split())
    for line in text.splitlines()[2:]:
        if line.startswith("|"):
            for cell in line.strip("|").split(" | "):
                for word in labels.get(cell.strip(), cell).split():
                    assert word in words, (word, out)


def test_a_note_column_is_printed_under_its_table_not_cut():
    """The skill-load table's note column (why a fit is empty or extrapolated) was a narrow
    column cut with an ellipsis at 80 columns; its notes are whole lines under the table."""
    from io import StringIO

    from rich.console import Console

    from foilbench.cli.run_output import print_markdown

    note = ("no variance in n_r (always 0): not estimable (-); intercept 111.2 pts lies "
            "outside 0-100: R@1 at zero counts, extrapolated beyond the observed counts")
    md = ("| level | skill | b_o | intercept | note |\n|---|---|---|---|---|\n"
          f"| L2-OA | A | +10.43 | +111.23** | {note} |\n| L3 | O | -3.8 | +38.1 |  |\n")
    buf = StringIO()
    print_markdown(Console(file=buf, width=80), md)
    text = buf.getvalue()
    assert "…" not in text and all(len(line) <= 80 for line in text.splitlines())
    assert "note" not in text.splitlines()[0]
    assert " ".join(text.split()).endswith("L2-OA A: " + note)
