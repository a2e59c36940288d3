"""``foilbench run``: evaluate models on benchmarks, store every run, write summary.json.

Parses options and prints; the work is :func:`foilbench.runner.run`.
"""

from __future__ import annotations

import click

from foilbench.cli.config_option import config_option
from foilbench.cli.options import evaluation_options, ray_from, ray_options, settings_from
from foilbench.scoring.prepared import summary_line


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@evaluation_options(specs_required=False,
                    out_help="one subfolder per invocation holding summary.json")
@ray_options()
@config_option()
@click.option("--no-report", is_flag=True, help="Skip the HTML report.")
@click.option("--rerun", is_flag=True,
              help="Compute a run again even when the store holds one with the same model "
                   "fingerprint, benchmark checksum and settings (reused by default); the "
                   "new run is marked a repeat.")
def run(models: tuple[str, ...], benchmarks: tuple[str, ...], out_dir: str, no_report: bool,
        rerun: bool, **options) -> None:
    """Evaluate every --model on every --benchmark, one stored run per pair.

    Pair benchmarks report I2T, T2I and Group (CompoSET Eq. 1-3); choice benchmarks report R@1.
    Ties count as failures (strict >) and are reported. Each metric comes with a 95% interval
    and its chance level.

    \b
    Examples:
      foilbench run
      foilbench run --model tiny-random --benchmark tiny-builtin --out /tmp/fb
      foilbench run --model openclip:ViT-B-32:/w/vitb32.pt --benchmark ./my_bench
      foilbench run --config run.toml --n-boot 2000   (flags override the file)
      foilbench run --model @models.txt --benchmark @benchmarks.txt   (one spec a line)
      foilbench run --model 'openclip:ViT-B-32:laion2b_s34b_b79k?label=b32'
      foilbench run --ray --model tiny-random --benchmark tiny-builtin   (docs/scale-out.md)
    """
    # imported here, not at module level, so `foilbench run --help` stays light
    from rich.console import Console

    from foilbench.cli.log_level import log_from
    from foilbench.cli.run_output import print_autocomp, print_markdown, print_tables
    from foilbench.models.labels import short_labels, split_labels
    from foilbench.runner import run as run_benchmarks
    err = Console(stderr=True)
    ray = ray_from(options)
    config = options.pop("config_file")
    specs, given = split_labels(models)
    outcome = run_benchmarks(specs or None, benchmarks, out_dir,
                             settings=settings_from(options), report=not no_report,
                             log=log_from(options, err), ray=ray, config=config, rerun=rerun)
    labels = short_labels([rec.result.model.spec for rec in outcome.records], given)
    out = Console()
    print_tables(out, outcome.records, outcome.reference, labels)
    for rec in outcome.records:
        if rec.compass is not None:
            label = labels.get(rec.result.model.spec, rec.result.model.spec)
            out.print(f"\nCOMPASS integration gap by level ({label}; by N in summary.json and "
                      "the report):", markup=False, highlight=False)
            print_markdown(out, rec.compass["gap_by_level_markdown"])
            out.print(f"\nCOMPASS skill load ({label}):", markup=False, highlight=False)
            print_markdown(out, rec.compass["skill_load_markdown"])
    print_autocomp(out, outcome.records, outcome.summary.get("autocomp", {}), labels)
    reused = sum(bool(r.provenance.get("reused")) for r in outcome.records)
    kept = (f" (reused {reused} identical: same model fingerprint, benchmark checksum and "
            "settings; --rerun computes them again)") if reused else ""
    err.print(f"stored {len(outcome.records) - reused} run(s){kept} in {outcome.db_path}; "
              f"summary: {outcome.summary_path}")
    if outcome.report_path is not None:
        err.print(f"report: {outcome.report_path}")
    images = summary_line(outcome.preparation)
    if images:
        err.print(images)
