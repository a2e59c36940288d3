"""``foilbench review compare A B --out DIR``: two benchmarks' hard negatives side by side
(SugarCrepe App. E.2; :mod:`foilbench.review.compare`)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from foilbench.cli._table import format_table
from foilbench.cli.review_serving import serve_page, warn_if_reachable


def rate_rows(report: dict) -> list[tuple]:
    """One row per (type, criterion, answer): long, so it stays narrow."""
    from foilbench.review.compare import CRITERIA

    rows = []
    for family, e in [*report["by_family"].items(), ("all", report["overall"])]:
        for c in CRITERIA:
            for key, label in (("a_better", "A better"), ("tie", "tie"),
                               ("b_better", "B better")):
                r = e[c][key]
                shown = ("-", "-") if r["rate"] is None else (
                    f"{100 * r['rate']:.1f}%",
                    f"[{100 * r['ci_low']:.1f}, {100 * r['ci_high']:.1f}]")
                rows.append((family, c, label, f"{r['k']} / {r['n']}", *shown))
    return rows


def report_table(report: dict) -> str:
    """Two tables that fit 80 columns: counts and net, then the rates with intervals."""
    from foilbench.display import safe_text
    from foilbench.review.compare_export import report_rows

    rows = report_rows(report)
    counts = format_table(("type", "criterion", "decided", "pending", "A better", "tie",
                           "B better", "net (B - A)"),
                          [(*r[:7], r[10]) for r in rows])
    rates = format_table(("type", "criterion", "answer", "k / n", "rate", "Wilson 95%"),
                         rate_rows(report))
    m = report["overall"]["matches"]
    return (f"A = {safe_text(report['a'], 76)}\nB = {safe_text(report['b'], 76)}\n{counts}\n\n"
            f"rates over decided pairs\n{rates}\n"
            f"pairs matched by shared positive {m['positive']}, by shared image "
            f"{m['image']}, sampled within the type {m['sampled']}")


@click.command("compare")
@click.argument("spec_a", metavar="A")
@click.argument("spec_b", metavar="B")
@click.option("--out", "out_dir", required=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Folder of the comparison: its pairs and decisions "
                   "(compare_decisions.sqlite) and, with --export, its report.")
@click.option("--n", "n", default=100, show_default=True, type=click.IntRange(min=1),
              help="Pairs per hard-negative type (App. E.2: 100 examples per type).")
@click.option("--seed", default=0, show_default=True, help="Seed of the pairing and sides.")
@click.option("--family", "aliases", multiple=True, metavar="FROM=TO",
              help="Count type family FROM as TO in both benchmarks (repeatable), e.g. "
                   "shuffle=swap for ARO's Order sets; negate=add is always on (App. E.2).")
@click.option("--report", "report_only", is_flag=True,
              help="Print the rates so far and exit (no server).")
@click.option("--json", "as_json", is_flag=True, help="With --report: print JSON.")
@click.option("--export", "export", is_flag=True,
              help="Write compare_report.{json,md} and compare_decisions.parquet into --out "
                   "and exit.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to bind (loopback only unless you mean to share it).")
@click.option("--port", default=8768, show_default=True, type=int,
              help="0 picks a free port (the URL is printed).")
@click.option("--open/--no-open", "open_browser", default=False, show_default=True,
              help="Open the app in the default web browser.")
def compare(spec_a: str, spec_b: str, out_dir: Path, n: int, seed: int, aliases: tuple[str, ...],
            report_only: bool, as_json: bool, export: bool, host: str, port: int,
            open_browser: bool) -> None:
    """Compare the hard negatives of benchmarks A and B side by side (SugarCrepe App. E.2:
    ARO+CREPE vs SugarCrepe; give the newer benchmark as B). Up to --n pairs per type
    (replace / swap / add, Negate counted as Add), matched by shared positive caption, else
    shared image, else sampled; a person answers which negative is better, or tie, for
    commonsense (keys 1/2/3) and grammatical correctness (4/5/6). The pairs are drawn once
    into --out and the review resumes there. A and B: folders, LOADER:PATH, names. The
    page needs foilbench[review] (starlette, uvicorn); --report and --export do not."""
    from foilbench.data.registry import resolve_benchmark
    from foilbench.review.compare import CompareSession

    mapped = {}
    for pair in aliases:
        src, sep, dst = pair.partition("=")
        if not sep or not src.strip() or not dst.strip():
            raise click.BadParameter(f"{pair!r} is not FROM=TO (e.g. shuffle=swap)",
                                     param_hint="--family")
        mapped[src.strip()] = dst.strip()
    session = CompareSession(resolve_benchmark(spec_a, check_images=False),
                             resolve_benchmark(spec_b, check_images=False), out_dir,
                             n=n, seed=seed, aliases=mapped)
    try:
        if export:
            from foilbench.review.compare_export import REPORT_MD, export_compare

            session.close()
            click.echo(report_table(export_compare(out_dir)))
            click.echo(f"report: {out_dir / REPORT_MD}")
            return
        report = session.summary()
        if report_only:
            click.echo(json.dumps(report, indent=2) if as_json else report_table(report))
            return
        try:
            from foilbench.review.compare_app import create_compare_app
        except ImportError as e:
            raise click.ClickException(f"the comparison page needs its web stack ({e.name} is "
                                       "missing): pip install 'foilbench[review]'") from None

        warn_if_reachable(host, "the comparison", "record decisions")
        o = report["overall"]
        click.echo(f"{o['pairs']} pairs, {o['decided']} judged, {o['pending']} pending")
        serve_page(create_compare_app(session, host), host, port,
                   lambda url: f"serving the comparison at {url} (keys 1/2/3 and 4/5/6; "
                               f"Ctrl-C stops; decisions are saved in {session.store.path})",
                   open_browser)
    finally:
        session.close()
