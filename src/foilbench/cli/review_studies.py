"""``foilbench review concepts`` and ``review solvability``: Auto-Comp's human studies (§6,
App. A.10) in the terminal. ``review_cmd`` registers the commands; the studies live in
:mod:`foilbench.review.concepts` and :mod:`foilbench.review.solvability`."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from foilbench.cli._table import format_table
from foilbench.cli.review_serving import serve_page, warn_if_reachable


def study_options(*, report: str, exports: str, port: int):
    """The options both studies take after --n and --seed: --report (printing ``report``),
    --json, --export (writing ``exports``), --host and --port (default ``port``)."""
    options = [
        click.option("--report", "report_only", is_flag=True,
                     help=f"Print {report} so far and exit (no server)."),
        click.option("--json", "as_json", is_flag=True, help="With --report: print JSON."),
        click.option("--export", "export_dir", default=None,
                     type=click.Path(file_okay=False, path_type=Path),
                     help=f"Write {exports} to this new folder and exit."),
        click.option("--host", default="127.0.0.1", show_default=True,
                     help="Interface to bind (loopback only unless you mean to share it)."),
        click.option("--port", default=port, show_default=True, type=int,
                     help="0 picks a free port (the URL is printed)."),
    ]

    def decorate(f):
        for option in reversed(options):  # as if stacked in this order above ``f``
            f = option(f)
        return f

    return decorate


def _concepts_folder(folder: Path) -> bool:
    """A folder the concept check opens: a construction's, with the log it samples from."""
    from foilbench.cli.review_folder import has_columns
    from foilbench.review.concept_frame import LOG_FILE
    from foilbench.review.concepts import NEEDED

    return (folder / LOG_FILE).is_file() and has_columns(folder, NEEDED)


def _solvability_folder(folder: Path) -> bool:
    """A benchmark the solvability study opens: items with the columns it reads."""
    from foilbench.cli.review_folder import has_columns
    from foilbench.review.solvability import NEEDED

    return has_columns(folder, NEEDED)


# study -> (what the folders it opens are, how to tell one), for a wrong folder's error
STUDY_FOLDERS = {"concepts": ("Auto-Comp construction folder(s)", _concepts_folder),
                 "solvability": ("Auto-Comp benchmark(s)", _solvability_folder)}


def open_study(open_: Callable[..., Any], study: str, bench_dir: Path,
               review_dir: Path | None, n: int, seed: int) -> Any:
    """``open_(benchmark, folder, n=, seed=)`` on the Auto-Comp benchmark in ``bench_dir``
    (answers in ``review_dir``, default ``bench_dir/review``), once the folder is checked: a
    folder without a manifest is one error naming it and the folders inside that
    ``foilbench review <study>`` can open."""
    from foilbench.cli.review_folder import checked_bench_dir
    from foilbench.data.format import load_benchmark

    what, fits = STUDY_FOLDERS[study]
    checked = checked_bench_dir(bench_dir, fits, what, f"foilbench review {study}")
    return open_(load_benchmark(checked), review_dir or bench_dir / "review", n=n, seed=seed)


def run_study(study, *, export_dir: Path | None, report_only: bool, as_json: bool,
              export: Callable[[Path], str], lines: Callable[[dict], str],
              app: Callable[[], object], announce: Callable[[str], str], host: str,
              port: int) -> None:
    """What both study commands do with their open ``study``, closing it after: --export
    writes (``export(dir)`` says what), --report prints ``study.report()`` (JSON or
    ``lines``), else the page ``app()`` is served until Ctrl-C."""
    try:
        if export_dir is not None:
            click.echo(export(export_dir))
            return
        if report_only:
            rep = study.report()
            click.echo(json.dumps(rep, indent=2) if as_json else lines(rep))
            return
        warn_if_reachable(host, "the study page", "load it and record answers")
        serve_page(app(), host, port, announce)
    finally:
        study.close()


def _pct(r: dict) -> str:
    """``5/7 71.4% [35.9, 91.8]`` (Wilson 95%) or ``-`` when nothing was decided."""
    if r["rate"] is None:
        return "-"
    return (f"{r['k']}/{r['n']} {100 * r['rate']:.1f}% "
            f"[{100 * r['ci_low']:.1f}, {100 * r['ci_high']:.1f}]")


def concepts_lines(rep: dict) -> str:
    """The concordance report as a table (per task x N x condition, then all) and the
    precision of passes and of rejects; 80 columns wide."""
    def row(name: str, t: dict) -> tuple:
        c = t["confusion"]
        return (name, *(f"{c[v]['match']}/{c[v]['mismatch']}/{c[v]['unsure']}"
                        for v in ("pass", "reject")), t["pending"], _pct(t["agreement"]))

    rows = [row(g, t) for g, t in rep["by_group"].items()] + [row("all", rep["overall"])]
    o = rep["overall"]
    frame = rep.get("frame") or {}
    lines = textwrap.wrap(f"sample: {rep['sample']}", 79)
    if rep.get("design") != "passes-only":
        left = sum((frame.get("left_out") or {}).values())
        lines += textwrap.wrap(f"frame: {frame.get('images')} judged images ({frame.get('pass')} "
                               f"passed, {frame.get('reject')} rejected; {left} without a "
                               "verdict left out)", 79)
    lines += [format_table(("group", "pass m/x/u", "rej m/x/u", "pend",
                            "agreement [95% Wilson]"), rows),
              f"precision of passes (match / decided passes): {_pct(o['pass_precision'])}",
              f"precision of rejects (mismatch / decided rejects): "
              f"{_pct(o['reject_precision'])}",
              "m/x/u: human match/mismatch/unsure. agreement = (pass & match + reject &",
              "mismatch) / decided; unsure counted apart."]
    return "\n".join(lines)


def solvability_lines(rep: dict) -> str:
    """Accuracy per task x N x condition, one table per negative set, then overall."""
    def row(name: str, t: dict) -> tuple:
        chance = "-" if t["chance"] is None else f"{100 * t['chance']:.1f}%"
        return (name, t["pending"], _pct(t["accuracy"]), chance)

    lines = []
    for nset, total in rep["by_set"].items():
        rows = [row(g.replace(f" {nset} ", " "), t) for g, t in rep["by_group"].items()
                if f" {nset} " in g]
        lines += [f"{nset}:", format_table(("group", "pending", "accuracy [95% Wilson]",
                                            "chance"), [*rows, row("all", total)]), ""]
    o = rep["overall"]
    lines += [f"all sets: {_pct(o['accuracy'])}, pending {o['pending']}",
              f"options per item: at most {rep['max_options']} (Auto-Comp A.10), the true "
              "caption always",
              "among them; chance = mean 1/options over decided items."]
    return "\n".join(lines)


@click.command("solvability")
@click.argument("bench_dir", metavar="DIR", type=click.Path(exists=True, file_okay=False,
                                                            path_type=Path))
@click.option("--n", "n", default=200, show_default=True,
              help="Concepts in the sample, each with all its items (both conditions, Swap "
                   "and Confusion; Auto-Comp A.10: 200 concepts).")
@click.option("--seed", default=0, show_default=True,
              help="Seed of the sample, of the options kept past 50 and of their order.")
@study_options(report="the accuracy", port=8768,
               exports="solvability_report.json and solvability_decisions.parquet")
@click.option("--review-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the picks live (default DIR/review).")
def solvability(bench_dir: Path, n: int, seed: int, report_only: bool, as_json: bool,
                export_dir: Path | None, host: str, port: int, review_dir: Path | None) -> None:
    """Auto-Comp solvability (§6, A.10): pick the true caption of each sampled item among its
    Swap or Confusion options (at most 50, the true one always there, shuffled); --report
    gives accuracy per task x N x negative set x condition with Wilson intervals and chance."""
    from foilbench.review.solvability import SolvabilityStudy, export_solvability

    study = open_study(SolvabilityStudy, "solvability", bench_dir, review_dir, n, seed)

    def export(folder: Path) -> str:
        o = export_solvability(study, folder)["overall"]
        return f"wrote {folder}: {o['decided']} of {o['items']} items decided"

    def app():
        from foilbench.review.solvability_app import create_solvability_app

        return create_solvability_app(study, host)

    run_study(study, export_dir=export_dir, report_only=report_only, as_json=as_json,
              export=export, lines=solvability_lines, app=app, host=host, port=port,
              announce=lambda url: f"solvability study of {len(study.units)} items at {url} "
                                   f"(picks in {study.path})")
