"""A few SVG primitives for the report's figures, written as inline markup.

The report's figures are points, lines, bars and coloured cells; drawing them as inline SVG
costs microseconds, where importing matplotlib alone took most of a second of every run, and
the page stays one self-contained file that scales without blurring. Every text is escaped.
"""

from __future__ import annotations

import math
from html import escape

import numpy as np

FONT = "system-ui, -apple-system, 'Segoe UI', sans-serif"
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
CHAR_W = 6.3  # mean width of one 11 px character, to size label margins


def _f(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


class Canvas:
    """An SVG document built from primitives; :meth:`markup` returns it."""

    def __init__(self, width: float, height: float, label: str) -> None:
        self.width, self.height, self.label = width, height, label
        self.parts: list[str] = []

    def line(self, x1, y1, x2, y2, stroke="#333", width=1.0, dash: str | None = None) -> None:
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(f'<line x1="{_f(x1)}" y1="{_f(y1)}" x2="{_f(x2)}" y2="{_f(y2)}" '
                          f'stroke="{stroke}" stroke-width="{width}"{d}/>')

    def rect(self, x, y, w, h, fill, stroke: str | None = None, title: str = "") -> None:
        s = f' stroke="{stroke}"' if stroke else ""
        t = f"<title>{escape(title)}</title>" if title else ""
        self.parts.append(f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(max(w, 0))}" '
                          f'height="{_f(max(h, 0))}" fill="{fill}"{s}>{t}</rect>')

    def circle(self, cx, cy, r, fill, title: str = "") -> None:
        t = f"<title>{escape(title)}</title>" if title else ""
        self.parts.append(f'<circle cx="{_f(cx)}" cy="{_f(cy)}" r="{r}" fill="{fill}">{t}'
                          "</circle>")

    def path(self, points: list[tuple[float, float]], stroke, width=1.5) -> None:
        if not points:
            return
        d = "M" + " L".join(f"{_f(x)} {_f(y)}" for x, y in points)
        self.parts.append(f'<path d="{d}" fill="none" stroke="{stroke}" '
                          f'stroke-width="{width}"/>')

    def text(self, x, y, s: object, size=11, anchor="start", fill="#222", bold=False,
             rotate: float | None = None) -> None:
        w = ' font-weight="600"' if bold else ""
        r = f' transform="rotate({rotate} {_f(x)} {_f(y)})"' if rotate is not None else ""
        self.parts.append(f'<text x="{_f(x)}" y="{_f(y)}" font-size="{size}" '
                          f'text-anchor="{anchor}" fill="{fill}"{w}{r}>{escape(str(s))}</text>')

    def title(self, title: str, y: float = 16) -> None:
        """Draw ``title`` centred, widening the canvas first so it is never cut."""
        self.width = max(self.width, text_width(title, 12) + 24)
        self.text(self.width / 2, y, title, size=12, anchor="middle", bold=True)

    def markup(self) -> str:
        return (f'<svg xmlns="http://www.w3.org/2000/svg" class="fig" role="img" '
                f'aria-label="{escape(self.label)}" width="{_f(self.width)}" '
                f'height="{_f(self.height)}" viewBox="0 0 {_f(self.width)} {_f(self.height)}" '
                f'font-family="{FONT}">' + "".join(self.parts) + "</svg>")


class Scale:
    """A linear map from data [lo, hi] to pixels [a, b]."""

    def __init__(self, lo: float, hi: float, a: float, b: float) -> None:
        self.lo, self.hi, self.a, self.b = lo, hi if hi > lo else lo + 1.0, a, b

    def __call__(self, v: float) -> float:
        return self.a + (v - self.lo) / (self.hi - self.lo) * (self.b - self.a)


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten apart) covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    ticks, k = [], 0
    while first + k * step <= hi + 1e-9 * step:
        ticks.append(round(first + k * step, 10))
        k += 1
    return ticks


def tick_label(v: float) -> str:
    return f"{v:g}"


def label_width(labels, minimum: float = 40.0, maximum: float = 380.0) -> float:
    longest = max((len(str(s)) for s in labels), default=0)
    return min(max(minimum, longest * CHAR_W + 12), maximum)


def text_width(s: object, size: float = 11) -> float:
    """Estimated pixel width of ``s`` at font ``size`` (a generous mean glyph width, so a
    canvas sized by it does not cut the text)."""
    return len(str(s)) * CHAR_W * size / 11 * 1.08


def clip_label(s: object, width: float) -> str:
    """``s`` shortened with an ellipsis to fit ``width`` pixels."""
    s = str(s)
    room = max(4, int(width / CHAR_W))
    return s if len(s) <= room else s[: room - 1] + "…"


def diverging(v: float) -> str:
    """Red (0) - pale yellow (0.5) - green (1), as matplotlib's RdYlGn; grey for NaN."""
    if v != v:
        return "#dddddd"
    stops = ((0.0, (165, 0, 38)), (0.25, (244, 109, 67)), (0.5, (255, 255, 191)),
             (0.75, (102, 189, 99)), (1.0, (0, 104, 55)))
    v = min(max(float(v), 0.0), 1.0)
    for (p0, c0), (p1, c1) in zip(stops, stops[1:], strict=False):
        if v <= p1:
            t = (v - p0) / (p1 - p0)
            rgb = [round(a + t * (b - a)) for a, b in zip(c0, c1, strict=True)]
            return "#" + "".join(f"{c:02x}" for c in rgb)
    return "#006837"


def ecdf_points(values: np.ndarray, max_steps: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """(x, F(x)) of the empirical CDF at most ``max_steps`` steps: every value for a small
    sample, evenly spaced ranks for a large one (the drawn curve is the same to the pixel)."""
    v = np.sort(np.asarray(values, dtype=float))
    v = v[np.isfinite(v)]
    n = len(v)
    if n == 0:
        return v, v
    idx = np.arange(n) if n <= max_steps else \
        np.unique(np.linspace(0, n - 1, max_steps).round().astype(int))
    return v[idx], (idx + 1) / n
