"""Example items with their images: base and foil side by side, edit mask outlined, the four
similarities and pass/fail. Images are read from the benchmark root recorded with the run and
inlined, so the report stays one self-contained file."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image, ImageFilter

from foilbench.data.images import resolved_inside, servable_root
from foilbench.kinds import kind_of
from foilbench.report.html import esc, png_data_uri

THUMB = 170


def _thumb(root: Path, rel: str | None, mask_rel: str | None = None, size: int = THUMB) -> str:
    if not isinstance(rel, str):
        return ""
    base = servable_root(root)  # the rule serve applies (report/server.py)
    path = resolved_inside(base, rel) if base is not None else None
    if path is None or not path.is_file():
        return f'<span class="note">image not found: {esc(rel)}</span>'
    try:
        with Image.open(path) as im:
            im = im.convert("RGB")
            mask = resolved_inside(base, mask_rel) if isinstance(mask_rel, str) else None
            im.thumbnail((size, size))  # outline after resizing, so it stays one pixel thin
            if mask is not None and mask.is_file():
                im = _outline(im, mask)
            buf = io.BytesIO()
            im.save(buf, format="PNG")
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        return f'<span class="note">image unreadable: {esc(rel)}</span>'
    return f'<img alt="{esc(rel)}" src="{png_data_uri(buf.getvalue())}">'


def _outline(im: Image.Image, mask_path: Path) -> Image.Image:
    """The mask's boundary, one pixel thin, in magenta over a faded copy of the image: shown
    beside the pair so the edit itself is never covered."""
    with Image.open(mask_path) as m:
        mask = m.convert("L").resize(im.size, Image.NEAREST)
    inside = np.asarray(mask) > 127
    edge = (np.asarray(mask.filter(ImageFilter.FIND_EDGES)) > 0) & inside  # inner ring only
    faded = (np.asarray(im, dtype=np.float32) * 0.35 + 255 * 0.65).astype(np.uint8)
    faded[edge] = (230, 0, 200)
    return Image.fromarray(faded)


def _verdict(ok: float | None) -> str:
    if ok is None or ok != ok:
        return ""
    return '<span class="ok">pass</span>' if ok >= 1 else '<span class="bad">fail</span>'


def pick_examples(items: pd.DataFrame, n: int = 8, seed: int = 0) -> pd.DataFrame:
    """Half failures, half successes (by the primary outcome), drawn reproducibly."""
    col = "group" if "group" in items.columns else "r1"
    if col not in items.columns or items.empty:
        return items.head(0)
    fails = items[items[col] < 1]
    wins = items[items[col] >= 1]
    k = n // 2
    parts = [fails.sample(min(len(fails), k), random_state=seed),
             wins.sample(min(len(wins), n - min(len(fails), k)), random_state=seed)]
    return pd.concat(parts)


def pair_card(row: pd.Series, root: Path) -> str:
    s = np.asarray(row["scores"], dtype=float)
    sims = (f"s(c0,i0)={s[0]:.3f} s(c0,i1)={s[1]:.3f}<br>s(c1,i0)={s[2]:.3f} "
            f"s(c1,i1)={s[3]:.3f}") if len(s) == 4 else ""
    mask = row.get("mask")
    meta = " ".join(f'<span class="pill">{esc(row[c])}</span>'
                    for c in ("edit_type", "tier", "scene_id") if c in row and row[c] == row[c])
    return (
        '<div class="item">'
        f"<div>{_thumb(root, row.get('image_base'))} {_thumb(root, row.get('image_foil'))}"
        + (f" <span class='mask' title='edit mask'>"
           f"{_thumb(root, row.get('image_base'), mask, size=110)}</span>"
           if isinstance(mask, str) else "") + "</div>"
        f"<div>{meta}</div>"
        f"<div><b>c0</b> {esc(row.get('caption_base'))}</div>"
        f"<div><b>c1</b> {esc(row.get('caption_foil'))}</div>"
        f"<div class=\"note\">{sims}</div>"
        f"<div>I2T {_verdict(row.get('i2t'))} · T2I {_verdict(row.get('t2i'))} · "
        f"Group {_verdict(row.get('group'))}</div></div>"
    )


def choice_card(row: pd.Series, root: Path) -> str:
    s = np.asarray(row["scores"], dtype=float)
    captions = list(row.get("captions") or [])
    best_neg = int(np.argmax(s[1:])) + 1 if len(s) > 1 else None
    lines = [f"<div><b>+</b> {esc(captions[0])} <span class='note'>{s[0]:.3f}</span></div>"
             if captions else ""]
    if best_neg is not None and best_neg < len(captions):
        lines.append(f"<div><b>best −</b> {esc(captions[best_neg])} "
                     f"<span class='note'>{s[best_neg]:.3f}</span></div>")
    return (f'<div class="item"><div>{_thumb(root, row.get("image"))}</div>{"".join(lines)}'
            f"<div class='note'>{len(captions) - 1} negatives</div>"
            f"<div>R@1 {_verdict(row.get('r1'))}</div></div>")


def card_for(kind: str):
    """The card renderer for a kind's items (None: the kind has no card)."""
    spec = kind_of(kind)
    if spec.is_edit_pair:
        return pair_card
    if spec.has_caption_candidates:
        return choice_card
    return None


def examples_html(items: pd.DataFrame, kind: str, root: Path, n: int = 8) -> str:
    card = card_for(kind)
    if card is None:
        return ""
    cards = [card(r, root) for _, r in pick_examples(items, n).iterrows()]
    return '<div class="items">' + "".join(cards) + "</div>"
