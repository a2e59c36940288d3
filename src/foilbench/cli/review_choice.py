"""``foilbench review`` on a ``choice`` benchmark: the negative-validation phase (SugarCrepe
§4.1 Stage 2; :mod:`foilbench.review.choice`). ``review_cmd`` hands over here by kind."""

from __future__ import annotations

import json
from pathlib import Path

import click

from foilbench.cli._table import format_table
from foilbench.cli.review_serving import serve_page


def folder_kind(bench_dir: Path):
    """The item kind a benchmark folder's manifest names, or None (no manifest, unknown
    kind): the kind object is asked what it is, never its name compared."""
    from foilbench.kinds import KINDS

    manifest = Path(bench_dir) / "manifest.json"
    if not manifest.is_file():
        return None
    name = json.loads(manifest.read_text()).get("kind")
    return KINDS.get(name) if isinstance(name, str) else None


def is_choice(bench_dir: Path) -> bool:
    """Items are one image with a positive caption and ranked negatives: the negative
    validation (not the pair review) applies."""
    kind = folder_kind(bench_dir)
    return kind is not None and kind.has_caption_candidates


def _pct(r: dict) -> str:
    return "-" if r["rate"] is None else f"{100 * r['rate']:.1f}%"


def summary_lines(summary: dict) -> str:
    rows = [(t, e["n"], e["discard"]["n"], e["counts"]["false"], _pct(e["discard"]))
            for t, e in summary["by_edit_type"].items()]
    o = summary["overall"]
    rows.append(("all", o["n"], o["discard"]["n"], o["counts"]["false"], _pct(o["discard"])))
    return format_table(("type", "items", "judged", "kept", "discard"), rows)


def serve_choice(bench_dir: Path, host: str, port: int, open_browser: bool,
                 review_dir: Path | None) -> None:
    from foilbench.review.choice import ChoiceSession
    from foilbench.review.choice_app import create_choice_app

    session = ChoiceSession(bench_dir, review_dir)
    click.echo(summary_lines(session.summary()))
    try:
        serve_page(create_choice_app(session, host), host, port,
                   lambda url: f"serving the negative validation of {bench_dir} at {url} "
                               f"(keys 1/2/3; Ctrl-C stops; verdicts are saved in "
                               f"{session.store.path})", open_browser)
    finally:
        session.store.close()


def status_choice(bench_dir: Path, as_json: bool, review_dir: Path | None) -> None:
    from foilbench.review.choice import ChoiceSession

    session = ChoiceSession(bench_dir, review_dir)
    try:
        summary = session.summary()
        click.echo(json.dumps(summary, indent=2) if as_json else summary_lines(summary))
    finally:
        session.store.close()


def export_choice(bench_dir: Path, out_dir: Path, allow_pending: bool,
                  review_dir: Path | None) -> None:
    from foilbench.review.choice import ChoiceSession
    from foilbench.review.choice_export import REPORT_JSON, export_validated

    session = ChoiceSession(bench_dir, review_dir)
    try:
        report = export_validated(session, out_dir, allow_pending=allow_pending)
    finally:
        session.store.close()
    click.echo(f"wrote {report['n_items']} validated items to {out_dir}")
    click.echo(summary_lines(report))
    click.echo(f"report: {out_dir / REPORT_JSON}; next: {next_command(out_dir)}")


def next_command(out_dir: Path) -> str:
    """The command that runs Algorithm 1 on the validated set (its folder as CAPTIONS)."""
    return (f"foilbench construct sugarcrepe {out_dir} --out FINAL (Algorithm 1 on the "
            "validated set)")
