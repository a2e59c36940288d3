"""Small HTML building blocks. Every piece of dataset text goes through :func:`esc`."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable, Sequence

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2330;
background:#f6f7f9}
header{background:#1f3a5f;color:#fff;padding:18px 28px}
header h1{margin:0;font-size:22px} header p{margin:4px 0 0;opacity:.85}
main{max-width:1200px;margin:0 auto;padding:12px 28px 40px}
section{background:#fff;border:1px solid #e1e4ea;border-radius:8px;margin:18px 0;padding:14px 18px}
h2{font-size:17px;margin:4px 0 10px} h3{font-size:14px;margin:14px 0 6px}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{border-bottom:1px solid #eceef2;padding:4px 9px;text-align:left;vertical-align:top}
th{background:#f0f2f6;cursor:pointer;user-select:none} td.num{text-align:right;white-space:nowrap;
font-variant-numeric:tabular-nums}
tr.ref td{color:#6a7385;font-style:italic}
.ok{color:#127a3a;font-weight:600}.bad{color:#b3261e;font-weight:600}
.note{color:#5b6476;font-size:12.5px}.fig{max-width:100%}svg.fig{height:auto}figure.fig{margin:8px 0}
.items{display:flex;flex-wrap:wrap;gap:14px}
.item{border:1px solid #e1e4ea;border-radius:6px;padding:8px;width:480px;font-size:12.5px}
img{image-orientation:none} .item img{width:170px;height:170px;object-fit:contain;background:#fafafa}
.pill{display:inline-block;padding:1px 7px;border-radius:9px;background:#eef1f6;margin:1px}
.scroll{overflow-x:auto}
code{background:#f0f2f6;padding:1px 4px;border-radius:3px}
ul.findings{margin:6px 0 10px;padding-left:20px;font-size:14px;line-height:1.45}
table.paper th{text-align:center;cursor:default} table.paper td.shade{background:#e8eef8}
.item .mask img{width:110px;height:110px;opacity:1}
section>details>summary{cursor:pointer}
section>details>summary h2{display:inline;font-size:17px;margin:4px 0 10px}
section>details[open]>summary{margin-bottom:8px} section>details{overflow-x:auto}
nav#contents{background:#fff;border:1px solid #e1e4ea;border-radius:8px;margin:18px 0;
padding:10px 18px;font-size:13.5px} nav#contents ol{columns:2 260px;margin:6px 0 0}
nav#contents button{font-size:12px}
@media (max-width:900px){main{padding:8px 10px 30px} section{padding:10px 10px}
.item{width:100%;box-sizing:border-box}}
"""

SORT_JS = """
document.querySelectorAll('table.sortable th').forEach(function(th){
  th.addEventListener('click',function(){
    var table=th.closest('table'),body=table.tBodies[0],i=Array.prototype.indexOf.call(
      th.parentNode.children,th),asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';
    var rows=Array.prototype.slice.call(body.rows);
    rows.sort(function(a,b){var x=a.cells[i].dataset.v||a.cells[i].textContent,
      y=b.cells[i].dataset.v||b.cells[i].textContent,fx=parseFloat(x),fy=parseFloat(y);
      var c=(!isNaN(fx)&&!isNaN(fy))?fx-fy:x.localeCompare(y);return asc?c:-c;});
    rows.forEach(function(r){body.appendChild(r);});});});
"""


def esc(value: object) -> str:
    """Escape anything for HTML text or attribute context."""
    return html.escape("" if value is None else str(value), quote=True)


def fmt_pct(x: float | None, digits: int = 1) -> str:
    if x is None or x != x:  # None or NaN
        return "–"
    return f"{100 * x:.{digits}f}"


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], *, cls: str = "sortable",
          row_classes: Sequence[str] | None = None, numeric: Sequence[bool] | None = None,
          table_id: str = "") -> str:
    """A table; cells are escaped unless given as ``Raw``."""
    rows = list(rows)
    numeric = numeric or [False] * len(headers)
    out = [f'<table class="{esc(cls)}"' + (f' id="{esc(table_id)}"' if table_id else "") + ">"]
    out.append("<thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in headers) + "</tr></thead>")
    out.append("<tbody>")
    for k, row in enumerate(rows):
        rc = row_classes[k] if row_classes else ""
        cells = []
        for j, cell in enumerate(row):
            attrs = ' class="num"' if numeric[j] else ""
            text = cell.html if isinstance(cell, Raw) else esc(cell)
            cells.append(f"<td{attrs}>{text}</td>")
        out.append(f'<tr class="{esc(rc)}">' + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


class Raw:
    """Trusted HTML (built by this package from escaped parts)."""

    def __init__(self, html_text: str) -> None:
        self.html = html_text


def png_data_uri(png_bytes: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png_bytes).decode("ascii")


def figure_img(fig, alt: str) -> str:
    """Place an SVG figure (:mod:`foilbench.report.figures`) inline in the page."""
    return f'<figure class="fig" title="{esc(alt)}">{fig.to_svg()}</figure>'


# sections shown open; every other one is collapsed (a <details>) under the table of contents
OPEN_SECTIONS = frozenset({"summary", "differences"})


def section(title: str, body: str, sid: str, note: str = "") -> str:
    """A report section: a <details> whose <summary> is its title, open when ``sid`` is in
    :data:`OPEN_SECTIONS` (the top of the report), collapsed otherwise."""
    note_html = f'<p class="note">{esc(note)}</p>' if note else ""
    shown = " open" if sid in OPEN_SECTIONS else ""
    return (f'<section id="{esc(sid)}"><details{shown}><summary><h2>{esc(title)}</h2>'
            f"</summary>{note_html}{body}</details></section>")


SECTION_HEAD = re.compile(r'<section id="([^"]+)"><details(?: open)?><summary><h2>(.*?)</h2>')


def contents(body: str) -> str:
    """The table of contents of ``body``'s sections (links; a collapsed one opens when
    followed), with buttons that open or close them all."""
    links = "".join(f'<li><a href="#{sid}">{title}</a></li>'
                    for sid, title in SECTION_HEAD.findall(body))
    if not links:
        return ""
    return ('<nav id="contents"><b>Contents</b> <button type="button" data-all="1">open all'
            '</button> <button type="button" data-all="0">close all</button>'
            f"<ol>{links}</ol></nav>")


DETAILS_JS = """
function openAt(hash){var el=hash&&document.getElementById(hash.slice(1));
  if(el){var d=el.querySelector('details');if(d)d.open=true;}}
window.addEventListener('hashchange',function(){openAt(location.hash);});
openAt(location.hash);
document.querySelectorAll('#contents a').forEach(function(a){
  a.addEventListener('click',function(){openAt(a.getAttribute('href'));});});
document.querySelectorAll('#contents button').forEach(function(b){
  b.addEventListener('click',function(){var open=b.dataset.all==='1';
    document.querySelectorAll('main section > details').forEach(function(d){d.open=open;});});});
"""


def page(title: str, subtitle: str, body: str, script: str = SORT_JS) -> str:
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "img-src data: 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f"<header><h1>{esc(title)}</h1><p>{esc(subtitle)}</p></header><main>{body}</main>"
        f"<script>{script}</script></body></html>"
    )
