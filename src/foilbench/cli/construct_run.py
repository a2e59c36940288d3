"""What every ``foilbench construct`` pipeline shares: the common options, the spend ledger
of ``--out``, the Ray session, and the build with its printed outcome (survival, drop causes,
spend), so :mod:`foilbench.cli.construct_cmd` holds only the four commands."""

from __future__ import annotations

import contextlib
import functools
import math
import sys
import warnings
from pathlib import Path

import click

from foilbench.cli._table import format_table
from foilbench.cli.config_option import CONFIG_PARAM, config_option, invocation
from foilbench.display import MESSAGE_LIMIT, safe_message, safe_text
from foilbench.models.device import DTYPES


def _finite(ctx, param, value):
    """A float option must be a number in its range (click's range lets NaN through)."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number", ctx=ctx, param=param)
    return value


def common_options(fn):
    @click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
                  help="Output folder (created; rerun with the same folder to resume).")
    @click.option("--seed", default=0, show_default=True, help="Seed of every sampled choice.")
    @click.option("--max-spend", type=float, default=None, callback=_check_cap,
                  help="Hard cap in USD for everything spent into --out: all API backends, "
                       "resumes and concurrent runs together, each request reserved at its "
                       "worst case (default: FOILBENCH_API_SPEND_CAP or 5).")
    @click.option("--price", "prices", multiple=True, metavar="MODEL=IN/OUT",
                  help="USD per million input/output tokens of a model not in the price list "
                       "(or to replace its list price), e.g. openai:my-model=1.25/10; an "
                       "image model takes USD per image, e.g. openai-image:my-imager=0.08.")
    @click.option("--allow-unpriced", is_flag=True,
                  help="Let models with no known price run (only with --max-spend; they are "
                       "reserved and billed at the dearest listed price).")
    @click.option("--retries", default=2, show_default=True, type=click.IntRange(0, 20),
                  help="Retries of an API request on 429 / 5xx / network errors (with backoff "
                       "and Retry-After); other errors drop the candidate at once, counted.")
    @click.option("--device", default="auto", show_default=True,
                  help="Device of local models (hf-lm, diffusers, hf-det, hf-vlm): auto, cpu, "
                       "cuda, cuda:N, mps.")
    @click.option("--dtype", default="float32", show_default=True, type=click.Choice(DTYPES),
                  help="Weights dtype of local models.")
    @click.option("--concurrency", type=click.IntRange(min=1), default=None,
                  help="API calls in flight per backend (default: a spec's ?concurrency=N, "
                       "FOILBENCH_API_CONCURRENCY, or 4). Local models run one call at a time.")
    @click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                  help="Where API backends cache replies and images across runs (default: "
                       "$FOILBENCH_HOME). The per-run call cache is always OUT/.construct.")
    @click.option("--progress/--no-progress", default=None,
                  help="Progress bar per stage (default: when stderr is a terminal).")
    @click.option("--dry-run", is_flag=True, help="Print the call and spend estimate; do nothing.")
    @click.option("--count-tokens", is_flag=True,
                  help="With --dry-run: ask the providers' free token-count endpoints for "
                       "each stage's fixed prompt, for a tighter bound (needs the API keys "
                       "and the network; nothing is billed).")
    @click.option("--ray", "ray_address", is_flag=False, flag_value="local", default=None,
                  metavar="[ADDRESS]",
                  help="Run the heavy stages (image generation, editing, detection, VQA, local "
                       "LMs, the world renderer) on Ray Data: alone, a local Ray instance; with "
                       "ADDRESS a running cluster (docs/scale-out.md). Needs foilbench[ray].")
    @click.option("--ray-gpus", type=click.FloatRange(min=0), default=None,
                  help="With --ray: GPUs per worker of a model backend (default: 1 with "
                       "--device cuda, or auto on a cluster with GPUs).")
    @click.option("--ray-max-workers", type=click.IntRange(min=1), default=None,
                  help="With --ray: workers per stage at most (default: what the cluster holds).")
    @config_option()
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        run_keys = ("out", "seed", "max_spend", "prices", "allow_unpriced", "retries", "device", "dtype", "concurrency",
                    "cache_dir", "progress", "dry_run", "count_tokens", "ray_address", "ray_gpus",
                    "ray_max_workers", CONFIG_PARAM)
        kwargs["run"] = {k: kwargs.pop(k) for k in run_keys}
        return fn(*args, **kwargs)

    return wrapper


def _check_cap(ctx, param, value):
    """--max-spend must be a finite, non-negative USD amount (the ledger's one rule)."""
    from foilbench.construct.engine.ledger import check_cap
    from foilbench.models.api.spend import SpendCapError

    if value is None:
        return value
    try:
        return check_cap(value, "--max-spend")
    except SpendCapError as e:
        raise click.BadParameter(str(e), ctx, param) from None


def spend_ledger(run: dict):
    """The --out folder's spend ledger with the run's cap and prices (issue 24)."""
    from foilbench.construct.engine.ledger import SpendLedger
    from foilbench.models.api.prices import PriceBook, PriceError, parse_price_option

    if run["allow_unpriced"] and run["max_spend"] is None:
        raise click.UsageError("--allow-unpriced needs an explicit --max-spend")
    try:
        overrides = dict(parse_price_option(p) for p in run["prices"])
    except PriceError as e:
        raise click.UsageError(str(e)) from None
    book = PriceBook(overrides, allow_unpriced=run["allow_unpriced"])
    return SpendLedger(run["out"], run["max_spend"], option="--max-spend", prices=book)


def _run(name: str, config, specs: dict[str, str | None], run: dict) -> None:
    from foilbench.construct.engine.resolve import resolve_backends

    if run["count_tokens"] and not run["dry_run"]:
        raise click.UsageError("--count-tokens only applies with --dry-run")
    run["ledger"] = spend_ledger(run)
    money = {"ledger": run["ledger"], "retries": run["retries"],
             "max_concurrency": run["concurrency"], "cache_dir": run["cache_dir"]}
    with ray_session_for(run) as ray_options:
        if ray_options is None:
            backends = resolve_backends(specs, device=run["device"], dtype=run["dtype"],
                                        **money)
        else:
            from foilbench.construct.engine.ray_backends import resolve_backends_on_ray

            backends = resolve_backends_on_ray(specs, ray_options, **money)
        _build(name, config, backends, run, ray_options)


@contextlib.contextmanager
def ray_session_for(run: dict):
    """No Ray without --ray; with it, Ray joined or started for the command (shut down after
    when started here) and the options of the heavy stages."""
    if run["ray_address"] is None:
        if run["ray_gpus"] is not None or run["ray_max_workers"] is not None:
            raise click.UsageError("--ray-gpus and --ray-max-workers only apply with --ray")
        yield None
        return
    from foilbench.construct.engine.ray_backends import RayConstructOptions
    from foilbench.ray_session import session

    with session(run["ray_address"]):
        yield RayConstructOptions(address=run["ray_address"], device=run["device"],
                                  dtype=run["dtype"], gpus=run["ray_gpus"],
                                  max_workers=run["ray_max_workers"])


def _build(name: str, config, backends: dict, run: dict, ray_options) -> None:
    from foilbench.construct.engine.cache import CacheDamageWarning
    from foilbench.construct.engine.log import SURVIVAL_HEADERS, account, read_log
    from foilbench.construct.engine.log import survival_cells as cells
    from foilbench.construct.engine.runner import run_pipeline
    from foilbench.construct.engine.stages import ConstructError
    from foilbench.errors import SpendCapReached

    out = run["out"]
    click.echo(f"{safe_text(name)}: " + ", ".join(f"{safe_text(r)}={safe_text(b.fingerprint)}"
                                              for r, b in backends.items()))
    progress = sys.stderr.isatty() if run["progress"] is None else run["progress"]
    kwargs = {"ledger": run["ledger"], "retries": run["retries"], "progress": progress, "ray": ray_options}
    summary = run_pipeline(name, config, backends, out, dry_run=True,
                           count_tokens=run["count_tokens"], **kwargs)
    kwargs["invocation"] = invocation()  # the resolved options, for construction.json
    click.echo("spend bound per stage and backend (at most, before the cache; each "
               "request's worst case):")
    click.echo("\n".join(safe_message(line) for line in summary.estimate.lines()))
    if run["dry_run"]:
        return
    echo_left_open(run["ledger"], out)
    try:
        with warnings.catch_warnings():  # printed once, below, from the summary
            warnings.simplefilter("ignore", CacheDamageWarning)
            summary = run_pipeline(name, config, backends, out, **kwargs)
    except (ConstructError, SpendCapReached) as e:
        survival, not_reached = e.survival, getattr(e, "not_reached", None)
        if survival:
            click.echo("\nsurvival per stage:")
            click.echo(format_table(SURVIVAL_HEADERS, cells(survival)))
        echo_drop_causes(e.drop_causes or [])
        if not_reached:
            click.echo(f"\n{not_reached} candidate(s) not reached: spend cap (survival "
                       f"tables written to {out})")
        raise
    click.echo("\nsurvival per stage:")
    click.echo(format_table(SURVIVAL_HEADERS, cells(summary.survival)))
    echo_drop_causes(summary.drop_causes)
    for what in summary.cache_damaged[:5]:
        click.echo(f"warning: damaged call-cache entry, treated as a miss: {safe_message(what)}",
                   err=True)
    calls = {k: sum(v.get(k, 0) for v in summary.calls.values())
             for k in ("called", "cached", "retried", "failed")}
    click.echo(f"\ncalls: {calls['called']} made, {calls['cached']} from the cache, "
               f"{calls['retried']} retried, {calls['failed']} failed; "
               f"billed ${summary.spent_usd:.4f} in this run "
               f"(${summary.spent_total_usd:.4f} committed into {out} so far over "
               f"{run['ledger'].requests} paid request(s) by every run, cap "
               f"${run['ledger'].cap:.2f} by {run['ledger'].option})")
    if summary.usage:
        per_role = ", ".join(f"{safe_text(role)} {use.get('http_requests', 0)}"
                             for role, use in summary.usage.items())
        hits = sum(use.get("cache_hits", 0) for use in summary.usage.values())
        billed = sum(use.get("spend_usd", 0.0) for use in summary.usage.values())
        click.echo(f"API: HTTP requests {per_role}; {hits} answered from the API cache; "
                   f"billed ${billed:.4f}")
    acct = account(read_log(out / "construction_log.jsonl"))
    for kind, c in acct["kinds"].items():
        parts = ", ".join(f"{safe_text(k)} {v}" for k, v in c.items() if k != "created")
        click.echo(f"{safe_text(kind)}: {c.get('created', 0)} created -> {parts}")
    if acct["problems"]:
        click.echo(f"warning: construction log problems: {safe_message(acct['problems'][:3])}",
                   err=True)
    bench = summary.benchmark
    assert bench is not None, "a run that is not a dry run writes its benchmark"
    click.echo(f"\nwrote {safe_text(bench.name)} ({bench.kind}, {len(bench)} items) to {out}")
    review = f"foilbench review {out}; " if bench.item_kind.is_edit_pair else ""
    click.echo(f"next: foilbench inspect {out}; {review}foilbench run --benchmark {out}")


def echo_left_open(ledger, out) -> None:
    """At the start of a resume: the reservations a killed run left open, which still count
    at their worst case, and how to release them once the dashboard shows they were not
    billed (issue 40)."""
    from foilbench.cli.construct_spend import open_lines

    rows = ledger.left_open()
    if not rows:
        return
    click.echo(f"{len(rows)} request(s) were in flight when an earlier run on {out} was killed; "
               f"${sum(r['usd'] for r in rows):.4f} stays committed at their worst case "
               "(their replies were lost, so they are sent again as needed):", err=True)
    click.echo("\n".join(open_lines(rows[:10])), err=True)
    click.echo(f"check the provider's dashboard; release those it did not bill with "
               f"foilbench construct spend {out} --release ID (or --all-open)", err=True)


def echo_drop_causes(causes: list[dict]) -> None:
    """Why candidates were dropped, per stage and reason, with the first causes verbatim."""
    if not causes:
        return
    click.echo("\nwhy candidates were dropped:")
    for c in causes:
        click.echo(f"  {safe_text(c['stage'])}: {safe_text(c['reason'], MESSAGE_LIMIT)} "
                   f"x{c['n']}")
        for example in c["examples"]:  # a provider's or a model's words, verbatim
            click.echo(f"      {safe_text(example, MESSAGE_LIMIT)}")
