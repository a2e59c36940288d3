"""Prompted pairwise selection for API models (CompoSET App. G.4).

An API model gives no scores, only choices between two options. A pair item (i0, i1, c0, c1;
index 0 the base, 1 the foil) becomes four two-option choices:

    img0:  image i0, captions (c0, c1), correct c0       img1:  image i1, correct c1
    cap0:  caption c0, images (i0, i1), correct i0       cap1:  caption c1, correct i1

Every choice is asked twice, with the option order swapped, and its correctness is the mean
of the two binary correctnesses: a(x) in {0, 1/2, 1}. An unparseable answer is wrong.

Per item (documented combination; reduces exactly to CompoSET Eq. 1-3 when both orders agree):

    I2T   = a(img0) * a(img1)
    T2I   = a(cap0) * a(cap1)
    Group = I2T * T2I

i.e. the probability that the item is solved when, for each choice independently, one of its
two asked orders is drawn at random. Chance for a guesser (each ask right with probability
1/2, independently): E[a] = 1/2, so I2T = T2I = 1/4 and Group = 1/16 (not 1/6: these are
independent binary choices, not a ranking of four scores).

Choice items (1 image, captions [positive, negative]) and image_choice items (1 caption,
images [positive, negative]) with K = 1 negative: R@1 = a(the single choice), chance 1/2.

``scores[k]`` holds the per-choice correctnesses (pair: [a(img0), a(img1), a(cap0), a(cap1)];
choice/image_choice: [a]); ``stats`` holds position-bias figures: the rate of choosing the
first-listed option, the agreement between the two orders (the same underlying option chosen
both times), accuracy per order, and the unparseable count.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image
from tqdm import tqdm

from foilbench.data.format import Benchmark
from foilbench.errors import BenchmarkError, FoilbenchError
from foilbench.scoring.encode import open_rgb
from foilbench.scoring.result import EvalResult

PAIR_CHANCE_API = {"i2t": 1 / 4, "t2i": 1 / 4, "group": 1 / 16}


class _Tally:
    """Collects every ask for the position-bias statistics."""

    def __init__(self) -> None:
        self.first = 0  # parseable answers that picked the first-listed option
        self.parsed = 0
        self.asks = 0
        self.unparseable = 0
        self.consistent = 0  # choices whose two orders picked the same underlying option
        self.both_parsed = 0
        self.correct_by_order = [0, 0]

    def choice(self, answers: tuple[int | None, int | None], correct_pos: tuple[int, int]
               ) -> float:
        """Two asks of one choice; ``correct_pos[o]`` is where the right option sat in order o.
        Returns the averaged correctness."""
        underlying = []
        right = []
        for order, (ans, pos) in enumerate(zip(answers, correct_pos, strict=True)):
            self.asks += 1
            if ans is None:
                self.unparseable += 1
                right.append(0.0)
                underlying.append(None)
                continue
            self.parsed += 1
            self.first += ans == 0
            ok = float(ans == pos)
            self.correct_by_order[order] += ok
            right.append(ok)
            underlying.append(ans == pos)
        if None not in underlying:
            self.both_parsed += 1
            self.consistent += underlying[0] == underlying[1]
        return float(np.mean(right))

    def stats(self, n_choices: int) -> dict[str, Any]:
        rate = lambda a, b: (a / b) if b else float("nan")  # noqa: E731
        return {
            "asks": self.asks,
            "unparseable": self.unparseable,
            "first_option_rate": rate(self.first, self.parsed),
            "order_agreement": rate(self.consistent, self.both_parsed),
            "accuracy_original_order": rate(self.correct_by_order[0], n_choices),
            "accuracy_swapped_order": rate(self.correct_by_order[1], n_choices),
        }


def _open(bench: Benchmark, rel: str, cache: dict) -> Image.Image:
    """Each image decoded once per run (an image recurs across an item's four choices)."""
    if rel not in cache:
        cache[rel] = open_rgb(bench.image_path(rel))
    return cache[rel]


def _caption_choice(adapter, tally: _Tally, image, right: str, wrong: str) -> float:
    answers = (adapter.choose_caption(image, [right, wrong]),
               adapter.choose_caption(image, [wrong, right]))
    return tally.choice(answers, (0, 1))


def _image_choice(adapter, tally: _Tally, caption: str, right, wrong) -> float:
    answers = (adapter.choose_image([right, wrong], caption),
               adapter.choose_image([wrong, right], caption))
    return tally.choice(answers, (0, 1))


def evaluate(adapter, benchmark: Benchmark, progress: bool = True) -> EvalResult:
    """Run the App. G.4 protocol of ``adapter`` (family "api_choice") on ``benchmark``."""
    if getattr(adapter, "family", None) != "api_choice":
        raise FoilbenchError(f"api_protocol.evaluate needs an api_choice model, got family "
                             f"{getattr(adapter, 'family', None)!r}")
    kind = benchmark.kind
    items = benchmark.items
    images: dict[str, Image.Image] = {}
    tally = _Tally()
    scores: list[np.ndarray] = []
    rows = tqdm(items.itertuples(index=False), total=len(items), disable=not progress,
                desc=f"{adapter.info.spec} on {benchmark.name}", unit="item")
    for row in rows:
        if kind == "pair":
            i0, i1 = (_open(benchmark, row.image_base, images),
                      _open(benchmark, row.image_foil, images))
            c0, c1 = row.caption_base, row.caption_foil
            scores.append(np.array([
                _caption_choice(adapter, tally, i0, c0, c1),
                _caption_choice(adapter, tally, i1, c1, c0),
                _image_choice(adapter, tally, c0, i0, i1),
                _image_choice(adapter, tally, c1, i1, i0),
            ]))
        elif kind == "choice":
            caps = list(row.captions)
            _require_k1(len(caps), row.item_id, "captions")
            image = _open(benchmark, row.image, images)
            scores.append(np.array([_caption_choice(adapter, tally, image, caps[0], caps[1])]))
        elif kind == "image_choice":
            paths = list(row.images)
            _require_k1(len(paths), row.item_id, "images")
            right, wrong = (_open(benchmark, p, images) for p in paths)
            scores.append(np.array([_image_choice(adapter, tally, row.caption, right, wrong)]))
        else:
            raise BenchmarkError(f"api protocol: unsupported item kind {kind!r}")
    outcomes, chance = _outcomes(kind, scores)
    ties = {m: np.zeros(len(scores), dtype=bool) for m in outcomes}
    n_choices = len(scores) * (4 if kind == "pair" else 1)
    stats = {"protocol": "composet_app_g4", **tally.stats(n_choices)}
    if hasattr(adapter, "usage"):
        stats.update(adapter.usage())
    return EvalResult(benchmark=benchmark, model=adapter.info, scores=scores,
                      outcomes=outcomes, ties=ties, chance=chance, stats=stats)


def _require_k1(n: int, item_id, what: str) -> None:
    if n != 2:
        raise BenchmarkError(f"item {item_id}: the API protocol asks two-option choices, so it "
                             f"needs exactly 2 {what} (K = 1 negative); this item has {n}")


def _outcomes(kind: str, scores: list[np.ndarray]) -> tuple[dict, dict]:
    """Combine per-choice correctness into item outcomes (formulas in the module docstring)."""
    n = len(scores)
    a = np.vstack(scores) if n else np.zeros((0, 4 if kind == "pair" else 1))
    if kind == "pair":
        i2t = a[:, 0] * a[:, 1]
        t2i = a[:, 2] * a[:, 3]
        outcomes = {"i2t": i2t, "t2i": t2i, "group": i2t * t2i}
        chance = {m: np.full(n, p) for m, p in PAIR_CHANCE_API.items()}
        return outcomes, chance
    return {"r1": a[:, 0]}, {"r1": np.full(n, 0.5)}
