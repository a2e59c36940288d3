"""``foilbench review``: human QC of a pair benchmark in the browser, then export what passed."""

from __future__ import annotations

import json
from pathlib import Path

import click

from foilbench.cli._table import format_table
from foilbench.cli.review_folder import checked_bench_dir
from foilbench.cli.review_serving import serve_page, warn_if_reachable
from foilbench.cli.review_studies import (
    concepts_lines,
    open_study,
    run_study,
    solvability,
    study_options,
)

SUBCOMMANDS = ("serve", "status", "export", "concepts")
SUBCOMMANDS += ("solvability",)  # Auto-Comp A.10 (cli/review_studies.py)


class ReviewGroup(click.Group):
    """``foilbench review DIR`` means ``foilbench review serve DIR``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in (*SUBCOMMANDS, *self.commands) and \
                args[0] not in ("-h", "--help"):
            args = ["serve", *args]
        return super().parse_args(ctx, args)


def _bench_dir(path: Path) -> Path:
    """The pair benchmark folder, with a helpful error for a suite folder."""
    from foilbench.cli.review_choice import folder_kind

    return checked_bench_dir(path, lambda p: getattr(folder_kind(p), "is_edit_pair", False),
                             "pair benchmark(s)", "foilbench review")


def review_dir_option(f):
    return click.option("--review-dir", type=click.Path(file_okay=False, path_type=Path),
                        default=None,
                        help="Where the decisions live (default DIR/review); use it when DIR "
                             "is read-only or to keep two reviewers apart.")(f)


def _session(path: Path, review_dir: Path | None = None, read_only: bool = False):
    from foilbench.review.app import open_session, stale_units

    session = open_session(_bench_dir(path), review_dir, read_only=read_only)
    stale = stale_units(session)
    if stale:
        click.echo(f"warning: {len(stale)} stored decision(s) name units this benchmark no "
                   f"longer has (first: {stale[0][0]} {stale[0][1]!r}); they are ignored",
                   err=True)
    changed = session.changed()
    if changed:
        listed = ", ".join(f"{p} {k!r}" for p, k in changed[:5])
        click.echo(f"warning: {len(changed)} unit(s) changed since they were decided (images "
                   f"or captions differ); their decisions are not applied and they are pending "
                   f"again, for re-review: {listed}" + (" ..." if len(changed) > 5 else ""),
                   err=True)
    return session


def _status_lines(session) -> str:
    from foilbench.review.report_md import pct
    from foilbench.review.rubric import PHASES

    s = session.snapshot().summary()
    rows = [(p.title, s["phases"][p.key]["units"], s["phases"][p.key]["accept"],
             s["phases"][p.key]["reject"], s["phases"][p.key]["invalidated"],
             s["phases"][p.key]["pending"] + s["phases"][p.key]["waiting"],
             pct(s["phases"][p.key]["discard"])) for p in PHASES]
    table = format_table(("phase", "units", "accepted", "rejected", "invalidated", "pending",
                          "discard"), rows)
    o, pr = s["overall"], s["progress"]
    return (f"{session.units.bench.name}: {pr['done']}/{pr['total']} decisions "
            f"({100 * pr['fraction']:.0f}%); kept {o['kept']}, discarded {o['discarded']}, "
            f"pending {o['pending']} of {o['instances']} instances; discard rate over final "
            f"outcomes so far {pct(o['discard'])}\n{table}")


@click.group(cls=ReviewGroup)
def review() -> None:
    """Review a benchmark by hand in the browser, then export what passed.

    \b
      foilbench review DIR                       open the review app (http://127.0.0.1:8766/)
      foilbench review status DIR                progress and discard rates in the terminal
      foilbench review export DIR --out OUT      accepted benchmark + QC report
      foilbench review concepts DIR              Auto-Comp concept agreement (App. A.10)
      foilbench review solvability DIR           Auto-Comp human accuracy (App. A.10)

    \b
    What DIR is decides the review:
      a pair benchmark   CompoSET's three QC phases (App. B.4), below; e.g.
                         S/world-pairs of `foilbench build synth --out S`, or
                         `foilbench construct composet --out DIR`
      a choice benchmark SugarCrepe's negative validation (§4.1 Stage 2): each
                         negative judged false of the image / true or ambiguous /
                         not fluent; e.g. `foilbench construct sugarcrepe --no-refine`
      an Auto-Comp one   `review concepts DIR`: is each rendered concept right?
                         (agreement with the validator, passes and rejects);
                         `review solvability DIR`: pick the true caption
    The app, `status` and `export` need foilbench[review] (starlette, uvicorn):
    pip install 'foilbench[review]'.
    \b
    Phases (each decision names the failed criteria of a reject):
      1 base review       base caption(s) against the base image; a reject
                          invalidates every instance of the scene
      2 instance review   base and foil side by side with the edit mask and a
                          pixel-drift heatmap; (i) count preserved, (ii) nothing
                          else added/removed/moved/occluded, (iii) visual edit
                          matches caption edit, (iv) ambiguous target disambiguated
      3 verbosity review  medium and long captions keep the short edit phrase
    \b
    Keys: a accept, 1-4 mark failed criterion, r reject, u undo, j/k next/previous,
    n next pending, b/i/v phase, m mask, d drift on foil, c note.
    Decisions are committed one by one to DIR/review/decisions.sqlite: closing the tab
    or killing the server loses nothing, and the next `foilbench review DIR` resumes at
    the first pending unit.
    """


from foilbench.cli.review_compare import compare as _compare  # noqa: E402

review.add_command(_compare)  # SugarCrepe App. E.2: `foilbench review compare A B --out DIR`


@review.command("serve")
@click.argument("bench_dir", metavar="DIR", type=click.Path(exists=True, file_okay=False,
                                                            path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to bind. Anything but loopback exposes the app (it writes) to "
                   "your network; a warning is printed.")
@click.option("--port", default=8766, show_default=True, type=int,
              help="0 picks a free port (the URL is printed).")
@click.option("--open/--no-open", "open_browser", default=False, show_default=True,
              help="Open the app in the default web browser.")
@review_dir_option
def serve(bench_dir: Path, host: str, port: int, open_browser: bool,
          review_dir: Path | None) -> None:
    """Open the review app on DIR (same as `foilbench review DIR`); on a choice benchmark,
    the negative-validation phase (SugarCrepe §4.1 Stage 2, keys 1/2/3)."""
    from foilbench.cli.review_choice import is_choice, serve_choice

    if is_choice(bench_dir):
        return serve_choice(bench_dir, host, port, open_browser, review_dir)
    try:
        from foilbench.review.app import create_app
    except ImportError as e:
        raise click.ClickException(f"the review app needs its web stack ({e.name} is missing):"
                                   " pip install 'foilbench[review]'") from None
    session = _session(bench_dir, review_dir)
    warn_if_reachable(host, "the review app", "load the page and record decisions")
    click.echo(_status_lines(session))
    try:
        serve_page(create_app(session, host=host), host, port,
                   lambda url: f"serving the review of {bench_dir} at {url} (Ctrl-C stops; "
                               f"decisions are saved in {session.store.path} as you make them)",
                   open_browser)
    finally:
        session.store.close()


@review.command("status")
@click.argument("bench_dir", metavar="DIR", type=click.Path(exists=True, file_okay=False,
                                                            path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the full summary as JSON.")
@review_dir_option
def status(bench_dir: Path, as_json: bool, review_dir: Path | None) -> None:
    """Progress, discard rates and where the review resumes (needs foilbench[review]:
    pip install 'foilbench[review]')."""
    from foilbench.cli.review_choice import is_choice, status_choice

    if is_choice(bench_dir):
        return status_choice(bench_dir, as_json, review_dir)
    session = _session(bench_dir, review_dir, read_only=True)  # status only reads
    try:
        if as_json:
            click.echo(json.dumps(session.snapshot().summary(), indent=2))
            return
        click.echo(_status_lines(session))
        resume = session.snapshot().resume_position()
        click.echo(f"resumes at: {resume['phase']} {resume['key']!r}" if resume else
                   "review complete: run `foilbench review export DIR --out OUT`")
    finally:
        session.store.close()


@review.command("export")
@click.argument("bench_dir", metavar="DIR", type=click.Path(exists=True, file_okay=False,
                                                            path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False,
                                                                 path_type=Path),
              help="New folder for the accepted benchmark and qc_report.{json,md}.")
@click.option("--allow-pending", is_flag=True,
              help="Export an unfinished review: pending instances are left out and the "
                   "manifest is marked partial.")
@click.option("--min-foils", type=click.IntRange(min=0), default=None,
              help="Scene floor re-applied after review (CompoSET §3: \"each scene "
                   "contributes at least 15 foils\"): a scene with fewer kept foils is left "
                   "out whole and counted. Default: the floor the construction recorded "
                   "(15 for `construct composet`), or none for a benchmark that records "
                   "none; 0 turns it off.")
@review_dir_option
def export(bench_dir: Path, out_dir: Path, allow_pending: bool, min_foils: int | None,
           review_dir: Path | None) -> None:
    """Write the kept instances (every tier) as a validated benchmark, plus the QC report:
    discard rates per phase, edit type and criterion (CompoSET reports 22.4% in phase 2).
    On a choice benchmark: the negatives judged false of the image, validated = True."""
    from foilbench.cli.review_choice import export_choice, is_choice

    if is_choice(bench_dir):
        return export_choice(bench_dir, out_dir, allow_pending, review_dir)
    from foilbench.review.export import REPORT_MD, export_review
    from foilbench.review.report_md import pct

    session = _session(bench_dir, review_dir)
    try:
        report = export_review(session, out_dir, allow_pending=allow_pending,
                               min_foils=min_foils)
    finally:
        session.store.close()
    o = report["overall"]
    click.echo(f"wrote {report['n_items']} items ({o['kept']} of {o['instances']} instances) "
               f"to {out_dir}")
    sf = report["scene_floor"]
    click.echo(f"scene floor ({sf['source']}): {sf['min_foils']} foils; "
               f"{sf['scenes_below_floor']} scene(s) below it left out "
               f"({sf['instances_dropped']} kept instance(s)), {sf['scenes_kept']} kept")
    click.echo(f"discard rate: overall {pct(o['discard'])}, instance review "
               f"{pct(report['phases']['instance']['discard'])}")
    rows = [(et, s["instances"], s["kept"], pct(s["instance_discard"]))
            for et, s in sorted(report["by_edit_type"].items())]
    click.echo(format_table(("edit type", "instances", "kept", "instance discard"), rows))
    click.echo(f"QC report: {out_dir / REPORT_MD}")


@review.command("concepts")
@click.argument("bench_dir", metavar="DIR", type=click.Path(exists=True, file_okay=False,
                                                            path_type=Path))
@click.option("--n", "n", default=200, show_default=True,
              help="Concepts in the sample, each with its Minimal and Contextual image "
                   "(Auto-Comp A.10: 200 concepts, 400 images).")
@click.option("--seed", default=0, show_default=True, help="Seed of the balanced sample.")
@study_options(report="the agreement", port=8767,
               exports="concept_checks_report.json and concept_checks_decisions.parquet")
@review_dir_option
def concepts(bench_dir: Path, n: int, seed: int, report_only: bool, as_json: bool,
             export_dir: Path | None, host: str, port: int, review_dir: Path | None) -> None:
    """Auto-Comp human validation (§6, A.10): check a seeded sample of concepts, balanced
    over task x N and drawn before the validator's verdict (images it passed and rejected, from
    DIR's construction log), against their images (m match, x mismatch, u unsure); --report
    gives the agreement with the validator overall and per task x N x condition, with the
    confusion counts and the precision of passes and of rejects."""
    from foilbench.review.concepts import ConceptChecks

    checks = open_study(ConceptChecks, "concepts", bench_dir, review_dir, n, seed)

    def export(folder: Path) -> str:
        from foilbench.review.concepts import export_concepts

        o = export_concepts(checks, folder)["overall"]
        return f"wrote {folder}: {o['images'] - o['pending']} of {o['images']} images decided"

    def app():
        from foilbench.review.concepts_app import create_concepts_app

        return create_concepts_app(checks, host)

    run_study(checks, export_dir=export_dir, report_only=report_only, as_json=as_json,
              export=export, lines=concepts_lines, app=app, host=host, port=port,
              announce=lambda url: f"concept check of {len(checks.units)} images at {url} "
                                   f"(decisions in {checks.path})")


review.add_command(solvability)  # Auto-Comp A.10, cli/review_studies.py
