"""COMPASS Table 2 and Table 3 laid out as the paper lays them out, from the tables the runner
stored with each run (nothing is recomputed).

Table 2 ("Compositional Integration (Aggregated)"): one row per structural level, one column
per model, each cell "mean ± standard deviation" of Delta = decomposed - composed accuracy in
percentage points across complexities. Table 3 ("Skill Load"): one row per (level, model), a
column group per negative type (Object, Attribute, Relation negatives), each with beta_O,
beta_A, beta_R in percentage points per unit count and the paper's * / ** marks; we add the
standard error in parentheses (the paper prints none). Cells the regression could not
estimate (a count constant within the level) show "-", as the paper's do.
"""

from __future__ import annotations

from foilbench.report.html import esc

SKILL_GROUPS = (("O", "Object negatives"), ("A", "Attribute negatives"),
                ("R", "Relation negatives"))
BETAS = (("b_O", "β<sub>O</sub>"), ("b_A", "β<sub>A</sub>"), ("b_R", "β<sub>R</sub>"))


def _text(value) -> str:
    """A stored cell as text: missing or NaN as '-' (the paper's blank)."""
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    text = str(value)
    return "-" if "nan" in text.lower() else text


def table2_html(per_model: dict[str, dict]) -> str:
    """Rows = levels, columns = models (``per_model``: model label -> stored tables)."""
    cells: dict[tuple[str, str], dict] = {}
    for model, tables in per_model.items():
        for rec in tables.get("table2") or []:
            cells[(str(rec["level"]), model)] = rec
    levels = list(dict.fromkeys(level for level, _ in cells))
    models = list(per_model)
    head = "<tr><th>Type</th>" + "".join(f"<th>{esc(m)}</th>" for m in models) + "</tr>"
    body = []
    for level in levels:
        row = [f"<td>{esc(level)}</td>"]
        for m in models:
            rec = cells.get((level, m))
            if rec is None:
                row.append('<td class="num">-</td>')
                continue
            value = _text(rec.get("delta_pp")).replace("± -", "± –")
            shade = ' class="num shade"' if value.startswith("-") else ' class="num"'
            title = (f"{int(rec.get('n_complexities', 0))} complexities, "
                     f"{int(rec.get('n_captions', 0))} captions")
            row.append(f'<td{shade} title="{esc(title)}">{esc(value)}</td>')
        body.append("<tr>" + "".join(row) + "</tr>")
    return ('<table class="paper" id="compass-table2"><thead>' + head + "</thead><tbody>"
            + "".join(body) + "</tbody></table>")


def table3_html(per_model: dict[str, dict]) -> str:
    """Rows = (level, model), column groups = negative type, sub-columns beta_O/A/R."""
    cells: dict[tuple[str, str, str], dict] = {}
    for model, tables in per_model.items():
        for rec in tables.get("skill_load") or []:
            cells[(str(rec["level"]), model, str(rec["skill"]))] = rec
    levels = list(dict.fromkeys(level for level, _, _ in cells))
    models = list(per_model)
    top = ('<tr><th rowspan="2">Type</th><th rowspan="2">Model</th>'
           + "".join(f'<th colspan="3">{name}</th>' for _, name in SKILL_GROUPS) + "</tr>")
    sub = "<tr>" + "".join(f"<th>{label}</th>" for _ in SKILL_GROUPS for _, label in BETAS) \
        + "</tr>"
    body = []
    for level in levels:
        present = [m for m in models if any((level, m, s) in cells for s, _ in SKILL_GROUPS)]
        for k, m in enumerate(present):
            first = (f'<td rowspan="{len(present)}">{esc(level)}</td>' if k == 0 else "")
            row = [first, f"<td>{esc(m)}</td>"]
            for skill, _ in SKILL_GROUPS:
                rec = cells.get((level, m, skill)) or {}
                for term, _ in BETAS:
                    value = _text(rec.get(term))
                    shade = " shade" if term[-1] == skill and "**" in value else ""
                    row.append(f'<td class="num{shade}">{esc(value)}</td>')
            body.append("<tr>" + "".join(row) + "</tr>")
    notes = [f"<li>{esc(level)} · {esc(m)} · {esc(dict(SKILL_GROUPS).get(s, s))}: "
             f"{esc(rec['note'])}</li>" for (level, m, s), rec in cells.items()
             if isinstance(rec.get("note"), str) and rec["note"]]
    said = f"<ul class='note fit-notes'>{''.join(notes)}</ul>" if notes else ""
    return ('<table class="paper" id="compass-table3"><thead>' + top + sub + "</thead><tbody>"
            + "".join(body) + "</tbody></table>" + said)


READING = ("Reading (COMPASS §5.1-5.2, as foilbench.analysis.compass_gap states): composed "
           "R@1 is the paper's equation, 1[s(I,c) > s(I,c~_i) for all i], strict >. Our copy of "
           "the paper prints no equation for decomposed R@1 or Delta, so we read §5.1 (\"success "
           "requires the model to retrieve every decomposed primitive against its respective "
           "negative independently\"): a caption's decomposed outcome is 1 only when every "
           "primitive beats its own negative, and Delta = decomposed - composed (Table 2's "
           "caption), per complexity N, then the unweighted mean over complexities ('all').")


def decomposed_html(per_model: dict[str, dict]) -> str:
    """Composed and decomposed R@1 beside Delta per (level, model): the stored ``gap`` rows
    with N = 'all' (means over complexities, as Table 2 aggregates)."""
    body = []
    for model, tables in per_model.items():
        for rec in tables.get("gap") or []:
            if str(rec.get("N")) != "all":
                continue
            cells = [esc(rec["level"]), esc(model), str(int(rec.get("n_complexities", 0))),
                     str(int(rec.get("n_captions", 0)))]
            for key in ("composed", "decomposed", "gap"):
                v = rec.get(key)
                cells.append("-" if v is None or v != v else f"{100 * float(v):.1f}")
            num = ' class="num"'
            body.append("<tr>" + "".join(f"<td{num if k > 1 else ''}>{c}</td>"
                                         for k, c in enumerate(cells)) + "</tr>")
    if not body:
        return ""
    head = ("<tr><th>Type</th><th>Model</th><th>complexities</th><th>captions</th>"
            "<th>composed R@1 %</th><th>decomposed R@1 %</th><th>Delta pp</th></tr>")
    return ('<table class="paper" id="compass-decomposed"><thead>' + head + "</thead><tbody>"
            + "".join(body) + "</tbody></table>")
