"""``foilbench audit drift``: CompoSET App. C generator drift audit (sample, VLM flags,
manual verification, confirmed-drift rate); registered on the ``audit`` group."""

from __future__ import annotations

from pathlib import Path

import click

from foilbench.cli.options import JSON_OUT_OLD_NAME
from foilbench.display import NAME_LIMIT, safe_text
from foilbench.errors import FoilbenchError
from foilbench.jsonio import write_json

CAPTION_LIMIT = 1000  # a caption the verifier reads whole (a name is cut at NAME_LIMIT)


def _write_json(data: dict, path: str | None) -> None:
    if path:
        write_json(path, data, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o))
        click.echo(f"wrote {path}", err=True)


@click.command(short_help="CompoSET App. C drift audit: VLM flags, manual verification, rate.")
@click.argument("benchmark")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Audit folder (drift_audit.json); rerun with it to resume.")
@click.option("--vqa", default=None,
              help="VLM that flags each pair: hf-vlm:DIR or api:PROVIDER:MODEL (CompoSET used "
                   "Gemini 2.5 Flash). Omit to only verify or report.")
@click.option("--n", "n_pairs", default=300, show_default=True, help="Pairs in the sample.")
@click.option("--tier", default="short", show_default=True, help="Caption tier sampled.")
@click.option("--seed", default=0, show_default=True, help="Seed of the sample.")
@click.option("--max-spend", type=float, default=None,
              help="USD cap for API flags over every resume (default FOILBENCH_API_SPEND_CAP "
                   "or $5).")
@click.option("--device", default="auto", show_default=True, help="For hf-vlm.")
@click.option("--verify", is_flag=True, help="Label each unverified flag interactively.")
@click.option("--decide", "decisions", multiple=True,
              help="ITEM_ID=LABEL (repeatable): drift, disocclusion, lighting_or_blur, "
                   "no_change.")
@click.option("--json-out", "--json", "json_path", metavar="FILE", type=click.Path(dir_okay=False),
              help="Write the report as JSON to FILE." + JSON_OUT_OLD_NAME)
def drift(benchmark, out_dir, vqa, n_pairs, tier, seed, max_spend, device, verify, decisions,
          json_path) -> None:
    """CompoSET App. C: sample N pairs of TIER (seeded), let a VLM flag any change beyond
    the labeled edit, verify every flag by hand (--verify or --decide), then report the
    confirmed-drift rate with its Wilson interval and the flags per edit type."""
    from foilbench.audit import drift as d
    from foilbench.data.registry import resolve_benchmark
    from foilbench.review import drift_audit as ra

    bench = resolve_benchmark(benchmark)
    state = ra.load_state(out_dir)
    if state is None:
        state = ra.new_state(bench, d.drift_sample(bench, n_pairs, tier, seed), n_pairs, tier,
                             seed, vqa or "")
        ra.save_state(out_dir, state)
    ra.check_same(state, bench, n_pairs, tier, seed)
    if any("flag" not in p for p in state["pairs"]):
        if not vqa:
            raise FoilbenchError(f"{sum('flag' not in p for p in state['pairs'])} pair(s) are "
                                 "not flagged yet; give --vqa hf-vlm:DIR or api:PROVIDER:MODEL")
        _flag(state, bench, vqa, out_dir, max_spend, device)
    for item in decisions:
        item_id, sep, label = item.rpartition("=")
        if not sep:
            raise FoilbenchError(f"--decide {item!r}: give ITEM_ID=LABEL")
        ra.decide(state, item_id, label)
    if verify:
        for pair in ra.pending(state):
            shown = {k: safe_text(pair[k], CAPTION_LIMIT if k.startswith("caption") else NAME_LIMIT)
                     for k in ("item_id", "edit_type", "caption_base", "caption_foil")}
            base, foil = (safe_text(bench.image_path(pair[k]), CAPTION_LIMIT)
                          for k in ("image_base", "image_foil"))
            click.echo(f"\n{shown['item_id']} ({shown['edit_type']}): "
                       f"'{shown['caption_base']}' -> '{shown['caption_foil']}'"
                       f"\n  base {base}\n  foil {foil}")
            label = click.prompt("label", type=click.Choice(d.LABELS))
            ra.decide(state, pair["item_id"], label, click.prompt("note", default=""))
            ra.save_state(out_dir, state)
    ra.save_state(out_dir, state)
    from foilbench.cli._table import frame_table

    click.echo("VLM flags per edit type")
    click.echo(frame_table(d.flag_table(state["pairs"])))
    waiting = ra.pending(state)
    if waiting:
        click.echo(f"{len(waiting)} flag(s) await verification (--verify or --decide); no rate "
                   "yet")
        return
    rate = d.drift_rate(state["pairs"])
    click.echo(f"confirmed drift: {rate['confirmed_drift']}/{rate['n']} = {rate['rate']:.2%}, "
               f"Wilson 95% [{rate['ci_low']:.2%}, {rate['ci_high']:.2%}] "
               f"({rate['flagged']} flagged: {rate['labels']})")
    _write_json({"rate": rate, "pairs": state["pairs"]}, json_path)


def _flag(state, bench, vqa, out_dir, max_spend, device) -> None:
    from foilbench.audit import drift as d
    from foilbench.construct.backends.registry import resolve_backend
    from foilbench.construct.engine.ledger import SpendLedger
    from foilbench.review import drift_audit as ra

    # the audit folder's spend ledger: one cap over every resume and process (issue 24)
    ledger = SpendLedger(out_dir, max_spend) if vqa.startswith("api:") else None
    options = {"ledger": ledger, "cache_dir": Path(out_dir) / ".replies"} if ledger \
        else {"device": device}
    backend = resolve_backend("vqa", vqa, **options)
    d.flag_all(state, bench, backend, lambda s: ra.save_state(out_dir, s), ledger,
               log=lambda m: click.echo(m, err=True))
