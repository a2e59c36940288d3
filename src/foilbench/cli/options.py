"""The options ``foilbench run`` and ``foilbench sweep`` share, defined once.

:func:`evaluation_options` adds them to a command; :func:`settings_from` turns the parsed
values into a :class:`foilbench.runner.RunSettings` (removing them from the keyword dict), so
a command body only handles its own options.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from foilbench.models.device import DTYPES
from foilbench.runner.settings import DB_FILE, DEFAULT_OUT, MIN_N_BOOT, RunSettings
from foilbench.stats.bootstrap import DEFAULT_N_BOOT, DEFAULT_SEED
from foilbench.stats.breakdown import CI_METHODS
from foilbench.stats.units import DEFAULT_UNIT, UNIT_SETTINGS

# Commands that write JSON to a file take --json-out FILE (--json prints JSON to stdout);
# their old --json FILE still works for one release and says so in --help.
JSON_OUT_OLD_NAME = " (--json FILE is the old name of this option, kept until 0.5.)"

# COMPASS §3.2 filters "overly similar candidates using Sentence Transformers" and gives no
# threshold: both COMPASS commands keep a replacement when the MiniLM cosine is below 0.8
# (our choice), and 0 turns the filter off.
SIMILARITY_DEFAULT = 0.8
SIMILARITY_HELP = ("Near-synonym filter (COMPASS §3.2, Sentence Transformers): keep a "
                   "replacement when the MiniLM cosine of the replaced word and its replacement "
                   "is below this; 0 turns it off. Needs foilbench[audit].")


class SimilarityThreshold(click.ParamType):
    """``--similarity``: a cosine in (0, 1], or 0 for off (issue 40: 2 was a traceback, -1
    and nan passed); anything else is one sentence and exit 2."""

    name = "cosine"

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = float("nan")
        if number != 0 and not 0 < number <= 1:  # NaN fails both
            self.fail(f"{value!r} is not a similarity threshold: give a cosine in (0, 1], "
                      "such as 0.8, or 0 to turn the filter off", param, ctx)
        return number


SIMILARITY_TYPE = SimilarityThreshold()

SETTING_OPTIONS = ("device", "dtype", "batch_size", "n_boot", "seed", "ci_method",
                   "allow_partial", "cache_dir", "no_cache", "quiet", "progress", "threads",
                   "precision", "unit")


def evaluation_options(*, specs_required: bool,
                       out_help: str) -> Callable[[Callable], Callable]:
    """Decorator adding --model, --benchmark, --out and the settings options.

    ``specs_required`` makes --model and --benchmark mandatory (sweep); otherwise they default
    to the embedded models and suite (run). ``out_help`` says what else --out holds.
    """
    model_default = " Default: the three embedded models." if not specs_required else ""
    bench_default = " Default: the embedded synth suite." if not specs_required else ""
    options = [
        click.option("--model", "models", multiple=True, required=specs_required,
                     metavar="SPEC",
                     help="Model to evaluate (repeatable): a name from `foilbench models` "
                          "(tiny-random, foilbench-plain, ...) or SCHEME:REST, e.g. "
                          "openclip:ViT-B-32:/path/weights.pt or hf:/local/clip_dir; "
                          "@FILE reads one spec a line. Append ?label=NAME (or &label=NAME) "
                          "to name a model in tables; long specs get a short label and a "
                          "legend." + model_default),
        click.option("--benchmark", "benchmarks", multiple=True, required=specs_required,
                     metavar="SPEC",
                     help="Benchmark (repeatable): a suite or registered name (see `foilbench "
                          "benchmarks`), a foilbench-format folder, or LOADER:PATH such as "
                          "sugarcrepe:/data/sc?images=/data/val2017; @FILE reads one spec a "
                          "line." + bench_default),
        click.option("--out", "out_dir", default=DEFAULT_OUT, show_default=True,
                     type=click.Path(file_okay=False),
                     help=f"Folder for the results database ({DB_FILE}) and {out_help}."),
        click.option("--device", default="auto", show_default=True,
                     help="auto, cpu, cuda, cuda:N or mps."),
        click.option("--dtype", default="float32", show_default=True,
                     type=click.Choice(DTYPES),
                     help="Weights' dtype for local models (bfloat16/float16 on GPUs)."),
        click.option("--precision", default=None, type=click.Choice(("bf16", "fp16")),
                     help="Run the forward passes in bf16 or fp16 (open_clip models); the "
                          "run also makes a float32 pass and reports the share of outcomes "
                          "the precision changed."),
        click.option("--batch-size", default=64, show_default=True,
                     type=click.IntRange(min=1),
                     help="At most this many unique inputs per forward pass. A model's own "
                          "batch (?batch=N in its spec; 32 for open_clip) caps it, "
                          "length-trimmed caption batches may hold twice the model's batch, "
                          "and on CUDA image batches are fitted to free memory."),
        click.option("--n-boot", default=DEFAULT_N_BOOT, show_default=True,
                     type=click.IntRange(min=MIN_N_BOOT),
                     help="Bootstrap resamples for the scene-clustered intervals."),
        click.option("--bootstrap-seed", "--seed", "seed", default=DEFAULT_SEED,
                     show_default=True, type=int,
                     help="Seed of the bootstrap resamples of the intervals (--seed is the "
                          "old name, kept until 0.5; elsewhere --seed seeds what a command "
                          "builds or samples)."),
        click.option("--ci-method", default="auto", show_default=True,
                     type=click.Choice(CI_METHODS),
                     help="auto = scene-clustered bootstrap when items carry scene_id, "
                          "else Wilson."),
        click.option("--unit", default=DEFAULT_UNIT, show_default=True,
                     type=click.Choice(UNIT_SETTINGS),
                     help="Unit of n on tiered pair benchmarks (CompoSET format: tier and "
                          "foil_id/instance_id columns). paper: overall per instance, the "
                          "tiers' mean (CompoSET §5, n = instances), tier rows per tier "
                          "(Table 10), other breakdowns pooled over tiers (Table 9); "
                          "instance / pooled: every row but the tier rows so; tier: overall per "
                          "instance, other breakdowns within each tier. Other benchmarks "
                          "count items."),
        click.option("--allow-partial", is_flag=True,
                     help="Drop invalid items (reported with counts) instead of refusing the "
                          "benchmark; the run is marked partial (dagger) everywhere."),
        click.option("--cache", "cache_dir", default=None, type=click.Path(file_okay=False),
                     help="Embedding cache folder, shared by all benchmarks (default "
                          "$FOILBENCH_HOME/embeddings, ~/.cache/foilbench/embeddings)."),
        click.option("--no-cache", is_flag=True,
                     help="Do not read or write the embedding cache."),
        click.option("--progress/--no-progress", "progress", default=None,
                     help="The progress display on stderr (default: when stderr is a "
                          "terminal; a pipe or a CI log gets one plain line per stage)."),
        click.option("--quiet", is_flag=True,
                     help="Same as --no-progress (the old name, kept until 0.5)."),
        click.option("--log-level", default="info", show_default=True,
                     type=click.Choice(("debug", "info", "warning", "error")),
                     help="Least important message shown (also the level of the "
                          "'foilbench' logger)."),
        click.option("--threads", default=0, show_default=True, type=click.IntRange(min=0),
                     help="torch threads; 0 = the CPUs this process may use minus the load "
                          "of other processes (OMP_NUM_THREADS, when set, is used instead)."),
    ]

    def decorate(command: Callable) -> Callable:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def settings_from(params: dict[str, Any]) -> RunSettings:
    """Pop the shared settings options out of ``params`` into a :class:`RunSettings`."""
    p = {name: params.pop(name) for name in SETTING_OPTIONS}
    return RunSettings(device=p["device"], dtype=p["dtype"], batch_size=p["batch_size"],
                       n_boot=p["n_boot"], seed=p["seed"], ci_method=p["ci_method"],
                       allow_partial=p["allow_partial"], cache_dir=p["cache_dir"],
                       use_cache=not p["no_cache"], progress=show_progress(p["progress"],
                                                                           p["quiet"]),
                       threads=p["threads"],
                       precision=p["precision"], unit=p["unit"])


def show_progress(progress: bool | None, quiet: bool) -> bool:
    """--progress/--no-progress, --quiet (= --no-progress), else whether stderr is a terminal
    (the construct commands' rule)."""
    import sys

    if quiet:
        return False
    return sys.stderr.isatty() if progress is None else progress


RAY_OPTIONS = ("ray_address", "ray_retries", "ray_cpus", "ray_gpus", "ray_max_workers",
               "ray_shard_size", "ray_shared_cache")


def ray_options() -> Callable[[Callable], Callable]:
    """Decorator adding ``--ray [ADDRESS]`` and its tuning options (docs/scale-out.md)."""
    options = [
        click.option("--ray", "ray_address", is_flag=False, flag_value="local", default=None,
                     metavar="[ADDRESS]",
                     help="Compute the cells on Ray workers: alone, a local Ray instance with "
                          "this machine's CPUs and GPUs; with ADDRESS (auto, HOST:6379, "
                          "ray://HOST:10001) a running cluster. Needs foilbench[ray]."),
        click.option("--ray-retries", default=2, show_default=True, type=click.IntRange(min=0),
                     help="With --ray: retries of a cell whose worker process died, then it "
                          "fails (a cell of a lost node moves without using one)."),
        click.option("--ray-cpus", default=1.0, show_default=True,
                     type=click.FloatRange(min=0, min_open=True),
                     help="With --ray: CPUs each model worker reserves."),
        click.option("--ray-gpus", default=None, type=click.FloatRange(min=0),
                     help="With --ray: GPUs each model worker reserves (default: 1 when "
                          "--device is cuda, or auto on a cluster with GPUs; else 0)."),
        click.option("--ray-max-workers", default=None, type=click.IntRange(min=1),
                     help="With --ray: at most this many model workers at once."),
        click.option("--ray-shard-size", default=0, show_default=True,
                     type=click.IntRange(min=0),
                     help="With --ray: split a dual-encoder cell with more unique images + "
                          "texts than this across workers (0: never)."),
        click.option("--ray-shared-cache", is_flag=True,
                     help="With --ray: workers write the embedding cache folder themselves "
                          "(it must be on storage every node mounts); default: the driver's "
                          "node writes it."),
    ]

    def decorate(command: Callable) -> Callable:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def ray_from(params: dict[str, Any]) -> Any:
    """Pop the Ray options out of ``params``: a ``RayOptions``, or None without --ray."""
    p = {name: params.pop(name) for name in RAY_OPTIONS}
    if p["ray_address"] is None:
        ctx = click.get_current_context(silent=True)
        typed = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
        given = [f"--{n.replace('_', '-')}" for n in RAY_OPTIONS[1:]
                 if ctx is not None and ctx.get_parameter_source(n) in typed]
        if given:
            raise click.UsageError(f"{', '.join(given)} only apply with --ray")
        return None
    from foilbench.runner.ray.cluster import RayOptions

    return RayOptions(address=p["ray_address"], retries=p["ray_retries"],
                      cpus_per_model=p["ray_cpus"], gpus_per_model=p["ray_gpus"],
                      max_workers=p["ray_max_workers"], shard_size=p["ray_shard_size"],
                      shared_cache=p["ray_shared_cache"])
