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


def headline(runs, parts) -> str:
    """The ten-second view: the primary metric of every model on every benchmark against that
    benchmark's chance (figure) and one generated sentence per benchmark."""
    from foilbench.report.figures_ci import headline_plot

    prim, sentences, _ = parts
    fig = ""
    if not prim.empty:
        fig = figure_img(headline_plot(prim, "Primary metric per model against chance"),
                         "headline")
    said = ("<ul class='findings'>" + "".join(f"<li>{esc(t)}</li>" for t in sentences)
            + "</ul>") if sentences else ""
    note = ("Each benchmark is read against its own chance level, never against another "
            "benchmark. Strict > everywhere: a tie is a failure and is counted in 'ties'.")
    return section("Headline results", fig + said, "summary", note)


def every_metric(runs) -> str:
    """Every overall metric of every run, the primary one marked (*) and listed first."""
    from foilbench.report.headline import primary_metric
    from foilbench.report.units_view import unit_of

    rows = []
    for r in runs:
        primary = primary_metric(r)
        overall = _overall(r)
        overall = overall.assign(_first=overall["metric"] != primary).sort_values(
            "_first", kind="stable")
        for _, m in overall.iterrows():
            unit = unit_of(r, m)
            star = " *" if m["metric"] == primary else ""
            rows.append([r.run["model_spec"], r.run["benchmark_name"] + (
                " (partial)" if r.run.get("partial") else ""), m["metric"] + star,
                Raw(f'<span data-v="{m["value"]:.6f}">{fmt_pct(m["value"])}</span>'),
                f"[{fmt_pct(m['ci_low'])}, {fmt_pct(m['ci_high'])}]", fmt_pct(m["chance"]),
                int(m["ties"]), int(m["n"]), unit, m["ci_method"]])
    body = table(["model", "benchmark", "metric", "%", "95% CI", "chance %", "ties", "n",
                  "unit of n", "CI method"], rows,
                 numeric=[False, False, False, True, False, True, True, True, False, False],
                 table_id="headline")
    return section("Every metric", '<div class="scroll">' + body + "</div>", "metrics",
                   "* marks the benchmark's primary metric (listed first); ties are failures.")


def edit_type_bars(runs) -> str:
    """Per benchmark, the primary metric per edit type: one bar per model with its 95%
    interval and the edit type's own chance level."""
    from foilbench.report.figures_bars import hbars_ci
    from foilbench.report.headline import by_benchmark, model_labels, primary_metric

    labels = model_labels(runs)
    imgs = []
    for group in by_benchmark(runs).values():
        metric = primary_metric(group[0])
        rows = []
        for r in group:
            m = r.metrics
            hit = m[(m["group_by"] == "edit_type") & (m["metric"] == metric)]
            for _, g in hit.iterrows():
                rows.append({"group": str(g["group_value"]), "series": labels[r.run["run_id"]],
                             **{k: g[k] for k in ("value", "ci_low", "ci_high", "chance")}})
        if len({row["group"] for row in rows}) < 2:
            continue
        title = f"{group[0].run['benchmark_name']}: {metric} per edit type"
        imgs.append(figure_img(hbars_ci(pd.DataFrame(rows), title), title))
    if not imgs:
        return ""
    return section("Per edit type, with intervals and chance", "".join(imgs), "edit-types",
                   "Bars: percent correct (value and 95% interval printed beside each); "
                   "whiskers: 95% interval; red tick on each bar: that edit type's chance "
                   "level. Unit of n: every item row of the edit type "
                   "(caption tiers pooled, n = tiers x instances; see 'Unit of n').")


def differences(parts) -> str:
    """Model vs model on the same items (or CompoSET instances), with paired 95% intervals
    and one verdict per pair (``parts``: :func:`foilbench.report.headline.headline_parts`;
    rows and rule: :mod:`foilbench.report.comparisons`)."""
    from foilbench.report import comparisons as cmp
    from foilbench.report.figures_ci import delta_plot

    _, _, deltas = parts
    if deltas.empty:
        return ""
    rows = deltas.assign(label=[f"{d['a']} - {d['b']} · {d['benchmark']} ({d['metric']})"
                                for _, d in deltas.iterrows()])
    img = figure_img(delta_plot(rows, "Paired differences between models"), "differences")
    tab = table(cmp.HEADERS, cmp.rows(deltas), table_id="versus",
                numeric=[False, False, False, True, False, True, False, True, False])
    return section("Model vs model", img + '<div class="scroll">' + tab + "</div>",
                   "differences", cmp.NOTE + " Green/red in the figure: the interval "
                   "excludes 0; p is the two-sided bootstrap p-value.")


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
    return section("Group accuracy by edit type and tier", "".join(imgs), "heatmap",
                   "Unit of n: per tier (each cell: the instances of one edit type in one "
                   "tier).")


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
                   "`foilbench analyze margins`. Unit: one point per item row (caption tiers "
                   "pooled).")


def pixel_change(runs) -> str:
    seen, series = set(), {}
    for r in runs:
        it = r.items
        key = r.run["benchmark_checksum"]
        if "affected_fraction" in it.columns and key not in seen:
            seen.add(key)
            vals = it.drop_duplicates("image_foil")["affected_fraction"].astype(float)
            series[r.run["benchmark_name"]] = 100 * vals.to_numpy()  # percent, as elsewhere
    if not series:
        return ""
    img = figure_img(figures.ecdf_plot(series, "Fraction of pixels affected per pair",
                                       "percent of pixels affected", vline=None),
                     "pixel ECDF")
    return section("Pixel change between base and foil", img, "pixels",
                   "Resize to 512x512, Gaussian blur sigma 1, channel-max difference above "
                   "10/255 (CompoSET section 4). Unit: one point per foil image (an "
                   "instance's tiers share it).")


def swap_confusion(runs) -> str:
    from foilbench.report.autocomp import autocomp_section

    return autocomp_section(runs)


def compass(runs) -> str:
    """COMPASS Table 2 and Table 3 in the paper's layout, from the tables the runner stored
    with each run (nothing is recomputed)."""
    from foilbench.report.compass_view import READING, decomposed_html, table2_html, table3_html
    from foilbench.report.headline import by_benchmark, model_labels

    labels = model_labels(runs)
    parts = []
    for group in by_benchmark(runs).values():
        group = [r for r in group if {"role", "level"} <= set(r.items.columns)]
        if not group:
            continue
        name = esc(group[0].run["benchmark_name"])
        missing = [r for r in group if r.compass is None]
        for r in missing:
            parts.append(f"<p class='note'>{esc(r.label)}: no COMPASS tables stored with this "
                         "run (written before schema 2 or without the runner); run it again "
                         "with `foilbench run`.</p>")
        stored = {labels[r.run["run_id"]]: r.compass for r in group if r.compass is not None}
        if not stored:
            continue
        parts.append(f"<h3>Table 2: compositional integration (aggregated) — {name}</h3>"
                     + table2_html(stored)
                     + "<p class='note'>Delta = decomposed - composed R@1 in percentage "
                       "points, mean ± standard deviation across complexities (COMPASS Table "
                       "2); shaded: composed easier than decomposed. Hover a cell for the "
                       "complexities and captions behind it.</p>")
        decomposed = decomposed_html(stored)
        if decomposed:
            parts.append(f"<h3>Composed and decomposed R@1 — {name}</h3>" + decomposed
                         + f"<p class='note'>{esc(READING)}</p>")
        parts.append(f"<h3>Table 3: skill load — {name}</h3>" + table3_html(stored))
        note = next((c.get("skill_load_note") for c in stored.values()
                     if c.get("skill_load_note")), "")
        if note:
            parts.append(f"<p class='note'>{esc(note)} Shaded: a self-load coefficient "
                         "significant at p < 0.001.</p>")
        dropped = {m: (c.get("dropped_incomplete", 0), c.get("dropped_k", 0))
                   for m, c in stored.items() if c.get("dropped_incomplete") or c.get("dropped_k")}
        for m, (inc, k) in dropped.items():
            parts.append(f"<p class='note'>{esc(m)}: {inc} caption(s) without all their "
                         f"decomposed items and {k} skill item(s) without K = 4 negatives "
                         "left out.</p>")
    if not parts:
        return ""
    return section("COMPASS: integration gap and skill load", "".join(parts), "compass")


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
        rows = _blind_rows(r.blind["audit"])
        parts.append(f"<h3>{name}</h3>"
                     + table(["scorer", "edit type", "accuracy %", "95% CI", "chance %",
                              "ties", "n"], rows,
                             numeric=[False, False, True, False, True, True, True]))
    if not parts:
        return ""
    return section("Blind text-only audit", "".join(parts), "blind",
                   "How often a text-only scorer, its decision rule cross-fitted on other "
                   "folds, prefers the positive caption (SugarCrepe section 3).")


def _blind_rows(audit: dict) -> list[list]:
    """One row per scorer overall ("all types") and per edit type; a benchmark with a single
    edit type (or none, stored as 'all') gets one row, named by that type. Ties (a tie is a failure)
    come from the audit's ``ties:SCORER`` flags."""
    rows = []
    for scorer, res in audit["scorers"].items():
        tie_counts = audit.get("flags", {}).get(f"ties:{scorer}", {})
        by_type = res["by_type"]
        only = next(iter(by_type)) if len(by_type) == 1 else "all"
        entries = [("all types" if only == "all" else only, res["overall"],
                    sum(tie_counts.values()))]
        if len(by_type) > 1:
            entries += [(t, st, tie_counts.get(t, 0)) for t, st in by_type.items()]
        for label, st, ties in entries:
            rows.append([scorer, label, fmt_pct(st["accuracy"]),
                         f"[{fmt_pct(st['ci_low'])}, {fmt_pct(st['ci_high'])}]",
                         fmt_pct(st["chance"]), int(ties), int(st["n"])])
    return rows


def examples(runs) -> str:
    parts = []
    for r in runs:
        html_items = examples_html(r.items, r.run["benchmark_kind"],
                                   Path(r.run["benchmark_root"]))
        if html_items:  # one block per run, the first open: the cards are tall
            shown = "" if parts else " open"
            parts.append(f"<details class='run-examples'{shown}><summary><b>{esc(r.label)}"
                         f"</b></summary>{html_items}</details>")
    if not parts:
        return ""
    return section("Example items", "".join(parts), "examples",
                   "Half failures, half successes: base and foil as the model saw them, and "
                   "beside them the edit mask as a thin magenta outline over a faded base.")


def provenance(runs) -> str:
    cols = ["run_id", "created", "model_spec", "model_fingerprint", "benchmark_name",
            "benchmark_version", "benchmark_checksum", "package_version", "git_revision", "seed",
            "n_boot", "tie_policy", "ci_method"]
    rows = [[_plain(_seconds(r.run.get(c)) if c == "created" else r.run.get(c)) for c in cols]
            + _text_cells(r.run) + [_subset_cell(r.run)] for r in runs]
    notes = [f"<p class='note'><b>{esc(r.label)}</b>: {esc(line)}</p>"
             for r in runs for line in _notes(r.run.get("eval_stats") or {}) if line]
    return section("Provenance", '<div class="scroll">'
                   + table([*cols, "captions truncated", "unknown tokens", "subset"], rows,
                           cls="prov")
                   + "</div>" + "".join(notes), "provenance")


def _seconds(created):
    """A run's creation time to the second (it is stored to the microsecond, for order)."""
    return created.replace(microsecond=0) if hasattr(created, "microsecond") else created


def _notes(stats: dict) -> list[str | None]:
    """What the runner printed about the run: truncation/unknown tokens, interval fallback,
    the G.4 subset the run scored (CompoSET App. G.4) and its near ties."""
    from foilbench.provenance import describe_subset
    from foilbench.runner.notes import repeat_lines
    from foilbench.scoring.near_ties import near_tie_note

    return [describe(stats.get("text")), stats.get("interval_note"),
            describe_subset(stats.get("subset")), near_tie_note(stats), *repeat_lines(stats)]


def _subset_cell(run: dict) -> str:
    """``N of M (by COL+COL, seed S)`` when the run scored a G.4 subset, else 'full'."""
    sub = (run.get("eval_stats") or {}).get("subset")
    if not sub:
        return "full"
    by = f"by {'+'.join(sub['by'])}, " if sub["by"] else ""
    return f"{sub['n']} of {sub['parent_items']} ({by}seed {sub['seed']})"


def _text_cells(run: dict) -> list[str]:
    """Truncated captions (of the unique ones) and unknown tokens, as the run stored them
    (``eval_stats.text``; "not measured" for models without a known tokenizer)."""
    text = (run.get("eval_stats") or {}).get("text")
    if not text:
        return ["not measured", "not measured"]
    return [f"{text['n_truncated']} of {text['n_texts']}", str(text["n_unknown"])]


def _plain(v) -> str:
    """A provenance value as text: missing or NaN as '-', never 'nan' or 'None'."""
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    return str(v)
