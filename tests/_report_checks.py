"""Checks a rendered report page must pass in a browser: no chart title or label cut by its
SVG box, no heading wider than its box, and no raw data frame in a table (an ``index``
header, ``nan``/``None`` cells, unrounded floats). Shared by the report tests and
docs/report_screenshots.py."""

from __future__ import annotations

# every SVG <text> inside its <svg>'s box (1 px slack); every heading not overflowing
LAYOUT_JS = """() => {
  const bad = [];
  document.querySelectorAll('svg').forEach((svg, k) => {
    const box = svg.viewBox.baseVal;
    const w = box && box.width ? box.width : svg.width.baseVal.value;
    const h = box && box.height ? box.height : svg.height.baseVal.value;
    svg.querySelectorAll('text').forEach(t => {
      const b = t.getBBox();
      const ctm = t.transform.baseVal.consolidate();
      let pts = [[b.x, b.y], [b.x + b.width, b.y + b.height], [b.x + b.width, b.y],
                 [b.x, b.y + b.height]];
      if (ctm) { const m = ctm.matrix;
        pts = pts.map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]); }
      const out = pts.some(([x, y]) => x < -1 || y < -1 || x > w + 1 || y > h + 1);
      if (out) bad.push('svg ' + k + ' cuts "' + t.textContent + '"');
    });
  });
  document.querySelectorAll('h1, h2, h3').forEach(h => {
    if (h.scrollWidth > h.clientWidth + 1) bad.push('heading cut: ' + h.textContent);
  });
  return bad;
}"""

RAW_JS = r"""() => {
  const bad = [];
  document.querySelectorAll('table').forEach((t, k) => {
    t.querySelectorAll('th').forEach(th => {
      const s = th.textContent.trim();
      if (/^(index|level_\d+|Unnamed.*)$/.test(s)) bad.push('table ' + k + ' header ' + s);
    });
    t.querySelectorAll('td').forEach(td => {
      const s = td.textContent.trim();
      if (/(^|[^a-z])(nan|NaN|None|null)([^a-z]|$)/.test(s)) bad.push('table ' + k + ' cell ' + s);
      if (/\d\.\d{4,}/.test(s)) bad.push('table ' + k + ' unrounded ' + s);
    });
  });
  return bad;
}"""


OPEN_JS = "() => document.querySelectorAll('details').forEach(d => { d.open = true; })"


def open_sections(page) -> None:
    """Open every collapsed report section (a <details>), so what it holds is laid out."""
    page.evaluate(OPEN_JS)


def page_problems(page) -> list[str]:
    """Everything :data:`LAYOUT_JS` and :data:`RAW_JS` find on the loaded page, every
    collapsed section opened first (a closed one lays nothing out to check)."""
    open_sections(page)
    return page.evaluate(LAYOUT_JS) + page.evaluate(RAW_JS)
