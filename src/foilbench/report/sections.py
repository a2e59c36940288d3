"""The report's sections. Each takes the loaded runs and returns HTML ('' when it does not
apply), so a report over choice-only runs simply has no pair heatmap."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from foilbench.kinds import kind_of
from foilbench.models.text_limits import describe
from foilbench.report import figures
from foilbench.report.examples import examples_html
from foilbench.report.html import Raw, esc, figure_img, fmt_pct, section, table


def _overall(run) -> pd.DataFrame:
    m = run.metrics
    return m[(m["group_by"] == "") | m["group_by"].isna()]


def headline(runs) -> str:
    rows, classes = [], []
    for r in runs:
        primary = r.run.get("config", {}).get("primary_metric") or _default_metric(r)
        for _, m in _overall(r).iterrows():
            star = " *" if m["metric"] == primary else ""
            rows.append([r.run["model_spec"], r.run["benchmark_name"] + (
                " (partial)" if r.run.get("partial") else ""), m["metric"] + star,
                Raw(f'<span data-v="{m["value"]:.6f}">{fmt_pct(m["value"])}</span>'),
                f"[{fmt_pct(m['ci_low'])}, {fmt_pct(m['ci_high'])}]", fmt_pct(m["chance"]),
                int(m["ties"]), int(m["n"]), m["ci_method"]])
            classes.append("")
    body = table(["model", "benchmark", "metric", "%", "95% CI", "chance %", "ties", "n",
                  "CI method"], rows, row_classes=classes,
                 numeric=[False, False, False, True, False, True, True, True, False],
                 table_id="headline")
    note = ("Strict > everywhere: a tie is a failure and is counted in 'ties'. "
            "* marks the benchmark's primary metric.")
    return section("Headline results", body, "headline", note)


def _default_metric(run) -> str:
    from foilbench.data.kinds import KINDS

    if "r1_valid" in set(run.metrics["metric"]):  # items list true negatives: r1_valid leads
        return "r1_valid"
    return KINDS[run.run["benchmark_kind"]].default_metric


def forest(runs) -> str:
    rows = []
    for r in runs:
        for _, m in _overall(r).iterrows():
            rows.append({"label": f"{r.run['model_spec']} | {r.run['benchmark_name']} | "
                                  f"{m['metric']}", **m[["value", "ci_low", "ci_high",
                                                         "chance"]].to_dict()})
    if not rows:
        return ""
    img = figure_img(figures.forest_plot(pd.DataFrame(rows), "95% intervals per model"),
                     "forest plot")
    return section("Intervals per model", img, "forest")


def edit_tier_heatmap(runs) -> str:
    imgs = []
    for r in runs:
        it = r.items
        if not kind_of(r.run["benchmark_kind"]).is_edit_pair or not {"edit_type", "tier"} <= set(it.columns):
            continue
        grid = it.pivot_table(index="edit_type", columns="tier", values="group", aggfunc="mean")
        order = [t for t in ("short", "medium", "long") if t in grid.columns]
        grid = grid[order + [c for c in grid.columns if c not in order]]
        imgs.append(figure_img(figures.heatmap(grid, f"Group % — {r.label}"), "heatmap"))
    if not imgs:
        return ""
    return section("Group accuracy by edit type and tier", "".join(imgs), "heatmap")


def margins(runs) -> str:
    from foilbench.analysis.margins import pair_margins

    series = {}
    for r in runs:
        if not kind_of(r.run["benchmark_kind"]).is_edit_pair or r.items.empty:
            continue
        m = pair_margins(np.stack(r.items["scores"].to_numpy()).reshape(-1, 2, 2))
        series[f"I2T · {r.label}"] = m["i2t"]
        series[f"T2I · {r.label}"] = m["t2i"]
    if not series:
        return ""
    img = figure_img(figures.ecdf_plot(series, "Signed margins (CompoSET App. G.3)",
                                       "margin"), "margin ECDF")
    return section("Signed similarity margins", img, "margins",
                   "I2T margin = s(base image, base caption) - s(base image, foil caption); "
                   "T2I margin = s(base image, base caption) - s(foil image, base caption) "
                   "(CompoSET App. G.3). A pair decision compares both images, so a wrong "
                   "decision can have a positive margin; foilbench's decision margins (the "
                   "smaller comparison, > 0 exactly when correct) are in "
                   "`foilbench analyze margins`.")


def pixel_change(runs) -> str:
    seen, series = set(), {}
    for r in runs:
        it = r.items
        key = r.run["benchmark_checksum"]
        if "affected_fraction" in it.columns and key not in seen:
            seen.add(key)
            vals = it.drop_duplicates("image_foil")["affected_fraction"].astype(float)
            series[r.run["benchmark_name"]] = vals.to_numpy()
    if not series:
        return ""
    img = figure_img(figures.ecdf_plot(series, "Fraction of pixels affected per pair",
                                       "fraction affected", vline=None), "pixel ECDF")
    return section("Pixel change between base and foil", img, "pixels",
                   "Resize to 512x512, Gaussian blur sigma 1, channel-max difference above "
                   "10/255 (CompoSET section 4).")


def swap_confusion(runs) -> str:
    from foilbench.report.autocomp import autocomp_section

    return autocomp_section(runs)


def compass(runs) -> str:
    """The COMPASS tables the runner stored with each run (nothing is recomputed here)."""
    parts = []
    for r in runs:
        if "role" not in r.items.columns or "level" not in r.items.columns:
            continue
        if r.compass is None:
            parts.append(f"<p class='note'>{esc(r.label)}: no COMPASS tables stored with this "
                         "run (written before schema 2 or without the runner); run it again "
                         "with `foilbench run`.</p>")
            continue
        for name, key in (("table2", "table2"), ("gap", "gap"), ("table3", "skill_load")):
            df = _records(r.compass.get(key))
            if not df.empty:
                parts.append(f"<h3>{esc(name)} — {esc(r.label)}</h3>" + _frame(df))
        if r.compass.get("skill_load_note"):
            parts.append(f"<p class='note'>{esc(r.compass['skill_load_note'])}</p>")
    if not parts:
        return ""
    return section("COMPASS: integration gap and skill load", "".join(parts), "compass")


def _records(rows) -> pd.DataFrame:
    """A stored list of records as a frame, JSON nulls back to NaN."""
    df = pd.DataFrame.from_records(rows or [])
    return df.where(df.notna(), np.nan)


def blind_audit(runs) -> str:
    """The blind audit the runner stored per benchmark checksum (nothing is recomputed)."""
    parts, seen = [], set()
    for r in runs:
        key = r.run["benchmark_checksum"]
        if not kind_of(r.run["benchmark_kind"]).has_caption_candidates or key in seen:
            continue
        seen.add(key)
        name = esc(r.run["benchmark_name"])
        if r.blind is None:
            parts.append(f"<p class='note'>{name}: no blind audit stored for this benchmark "
                         "(computed by `foilbench run`; `foilbench audit blind` prints one)."
                         "</p>")
            continue
        if r.blind["audit"] is None:
            parts.append(f"<p class='note'>{name}: {esc(r.blind['note'] or 'no audit')}</p>")
            continue
        rows = [[scorer, "(all)" if t is None else t, fmt_pct(st["accuracy"]),
                 f"[{fmt_pct(st['ci_low'])}, {fmt_pct(st['ci_high'])}]", fmt_pct(st["chance"]),
                 st["n"]]
                for scorer, res in r.blind["audit"]["scorers"].items()
                for t, st in [(None, res["overall"]), *res["by_type"].items()]]
        parts.append(f"<h3>{name}</h3>"
                     + table(["scorer", "edit type", "accuracy %", "95% CI", "chance %", "n"],
                             rows))
    if not parts:
        return ""
    return section("Blind text-only audit", "".join(parts), "blind",
                   "How often a text-only scorer, its decision rule cross-fitted on other "
                   "folds, prefers the positive caption (SugarCrepe section 3).")


def examples(runs) -> str:
    parts = []
    for r in runs:
        html_items = examples_html(r.items, r.run["benchmark_kind"],
                                   Path(r.run["benchmark_root"]))
        if html_items:
            parts.append(f"<h3>{esc(r.label)}</h3>{html_items}")
    if not parts:
        return ""
    return section("Example items", "".join(parts), "examples",
                   "Half failures, half successes. The edit mask is outlined in magenta.")


def provenance(runs) -> str:
    cols = ["run_id", "created", "model_spec", "model_fingerprint", "benchmark_name",
            "benchmark_version", "benchmark_checksum", "package_version", "git_revision", "seed",
            "n_boot", "tie_policy", "ci_method"]
    rows = [[str(r.run.get(c, "")) for c in cols] + _text_cells(r.run) for r in runs]
    notes = [f"<p class='note'><b>{esc(r.label)}</b>: {esc(line)}</p>"
             for r in runs for line in _notes(r.run.get("eval_stats") or {}) if line]
    return section("Provenance", '<div class="scroll">'
                   + table([*cols, "captions truncated", "unknown tokens"], rows, cls="prov")
                   + "</div>" + "".join(notes), "provenance")


def _notes(stats: dict) -> list[str | None]:
    """What the runner printed about the run: truncation/unknown tokens, interval fallback."""
    return [describe(stats.get("text")), stats.get("interval_note")]


def _text_cells(run: dict) -> list[str]:
    """Truncated captions (of the unique ones) and unknown tokens, as the run stored them
    (``eval_stats.text``; "not measured" for models without a known tokenizer)."""
    text = (run.get("eval_stats") or {}).get("text")
    if not text:
        return ["not measured", "not measured"]
    return [f"{text['n_truncated']} of {text['n_texts']}", str(text["n_unknown"])]


def _frame(df: pd.DataFrame) -> str:
    df = df.reset_index() if not isinstance(df.index, pd.RangeIndex) else df
    rows = [[_cell(v) for v in row] for row in df.itertuples(index=False)]
    return table([str(c) for c in df.columns], rows)


def _cell(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)
