"""Plain-text tables for command output (aligned columns, no colour, pipe-friendly).

Every cell and header passes :func:`foilbench.display.safe_text`: a table's names, captions,
edit types and tiers come from a benchmark, a model or a provider, and a control or bidi
character in one must not reach the terminal (nor a million-character name stretch the
table); the full values stay in the commands' JSON/CSV outputs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from foilbench.display import safe_text


def cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return safe_text(value)


def format_table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """Columns padded to their widest cell; numbers right-aligned, text left-aligned."""
    body = [[cell(v) for v in row] for row in rows]
    widths = [max([len(safe_text(h))] + [len(r[i]) for r in body])
              for i, h in enumerate(headers)]
    numeric = [all(_is_number(r[i]) for r in body) and body != [] for i in range(len(headers))]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric, strict=True)).rstrip()

    out = [line([safe_text(h) for h in headers]), line(["-" * w for w in widths])]
    out += [line(r) for r in body]
    return "\n".join(out)


def _is_number(text: str) -> bool:
    try:
        float(text.split(" ")[0])
    except ValueError:
        return False
    return True


def acc_ci(stat: dict) -> str:
    """``0.712 [0.701, 0.721]`` from a STAT dict."""
    return f"{stat['accuracy']:.3f} [{stat['ci_low']:.3f}, {stat['ci_high']:.3f}]"


def frame_table(frame, columns: Sequence[str] | None = None) -> str:
    """:func:`format_table` of a DataFrame (all columns unless ``columns`` is given)."""
    if frame is None or len(frame) == 0:
        return "(no rows)"
    cols = list(columns) if columns else list(frame.columns)
    return format_table(cols, frame[cols].itertuples(index=False, name=None))
