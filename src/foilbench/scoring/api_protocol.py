"""Prompted pairwise selection for API models (CompoSET App. G.4).

An API model gives no scores, only choices between two options. Each kind turns an item into
two-option questions (:meth:`foilbench.kinds.base.ItemKind.api_asks`: a pair item into four,
choice and image_choice items with K = 1 into one) and combines their correctness into outcomes
and chance (:meth:`~foilbench.kinds.base.ItemKind.api_outcomes`; the formulas are in
:mod:`foilbench.kinds.pair` and :mod:`foilbench.kinds.ranking`).

Every question is asked twice, with the option order swapped, and its correctness is the mean
of the two binary correctnesses: a(x) in {0, 1/2, 1} (App. G.4: "We counterbalance every call
by issuing it twice with the option order swapped and averaging the binary correctness"). An
unparseable answer is wrong. The kinds report two rules side by side, each with its own
chance: the averaged one (``i2t``, ``t2i``, ``group``, ``r1``; App. G.4) and the
no-partial-credit one (``*_no_partial``: a question counts only when right in both orders;
CompoSET §3, "There is no partial credit"); Group's combination of the API answers is
foilbench's (the paper is silent), see :mod:`foilbench.kinds.pair`.

``scores[k]`` holds item k's per-question correctnesses in the kind's order (pair: [a(img0),
a(img1), a(cap0), a(cap1)]; choice/image_choice: [a]); ``stats`` holds position-bias figures:
the rate of choosing the first-listed option, the agreement between the two orders (the same
underlying option chosen both times), accuracy per order, and the unparseable count.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image

from foilbench.data.format import Benchmark
from foilbench.errors import FoilbenchError, ModelError
from foilbench.kinds import Ask, CaptionAsk
from foilbench.models.base import ApiChoiceModel, family_of
from foilbench.scoring.encode import open_rgb
from foilbench.scoring.progress import stage
from foilbench.scoring.result import EvalResult


class _Tally:
    """Collects every ask for the position-bias statistics."""

    def __init__(self) -> None:
        self.first = 0  # parseable answers that picked the first-listed option
        self.parsed = 0
        self.asks = 0
        self.unparseable = 0
        self.consistent = 0  # choices whose two orders picked the same underlying option
        self.both_parsed = 0
        self.correct_by_order = [0.0, 0.0]

    def choice(self, answers: tuple[int | None, int | None], correct_pos: tuple[int, int]
               ) -> float:
        """Two asks of one choice; ``correct_pos[o]`` is where the right option sat in order o.
        Returns the averaged correctness."""
        underlying: list[bool | None] = []
        right: list[float] = []
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


def _answer(adapter, tally: _Tally, bench: Benchmark, ask: Ask, images: dict) -> float:
    """Ask one question in both orders; its averaged correctness."""
    if isinstance(ask, CaptionAsk):
        return _caption_choice(adapter, tally, _open(bench, ask.image, images), ask.right,
                               ask.wrong)
    return _image_choice(adapter, tally, ask.caption, _open(bench, ask.right, images),
                         _open(bench, ask.wrong, images))


def _is_api_choice(adapter) -> bool:
    try:
        return family_of(adapter) is ApiChoiceModel
    except ModelError:
        return False


def evaluate(adapter, benchmark: Benchmark, progress: bool = True) -> EvalResult:
    """Run the App. G.4 protocol of ``adapter`` (an API choice model) on ``benchmark``."""
    if not _is_api_choice(adapter):
        raise FoilbenchError(f"api_protocol.evaluate needs an api_choice model, got "
                             f"{type(adapter).__name__} (family "
                             f"{getattr(adapter, 'family', None)!r})")
    kind = benchmark.item_kind
    items = benchmark.items
    images: dict[str, Image.Image] = {}
    tally = _Tally()
    scores: list[np.ndarray] = []
    bar = stage(progress, f"{adapter.info.spec} on {benchmark.name}", len(items), unit="item")
    try:
        for row in items.itertuples(index=False):
            scores.append(np.array([_answer(adapter, tally, benchmark, ask, images)
                                    for ask in kind.api_asks(row)]))
            bar.update(1)
    finally:
        bar.close()
    correct = np.vstack(scores) if scores else np.zeros((0, kind.api_ask_count))
    outcomes, chance = kind.api_outcomes(correct)
    ties = {m: np.zeros(len(scores), dtype=bool) for m in outcomes}
    stats = {"protocol": "composet_app_g4", **tally.stats(int(correct.size))}
    if hasattr(adapter, "usage"):
        stats.update(adapter.usage())
    return EvalResult(benchmark=benchmark, model=adapter.info, scores=scores,
                      outcomes=outcomes, ties=ties, chance=chance, stats=stats)
