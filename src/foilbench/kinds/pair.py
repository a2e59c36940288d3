"""``pair``: base/foil image x base/foil caption, scored 2x2 (CompoSET, after Winoground).

Slots, 4 per item: ``[s(c0,i0), s(c0,i1), s(c1,i0), s(c1,i1)]`` (slot ``2c + i`` holds
caption ``c`` with image ``i``; index 0 is the base, 1 the foil), so ``sims[n, c, i]`` is the
row reshaped to (2, 2).

Outcomes (CompoSET Eq. 1-3):

    I2T(n)   = [s(c0,i0) > s(c1,i0)] and [s(c1,i1) > s(c0,i1)]        (Eq. 1)
    T2I(n)   = [s(c0,i0) > s(c0,i1)] and [s(c1,i1) > s(c1,i0)]        (Eq. 2)
    Group(n) = I2T(n) and T2I(n)                                       (Eq. 3)

Chance for a random score: 1/4, 1/4 and 1/6 (the correct matching must rank first among the
4! orderings of the four scores: 4 of 24 orderings satisfy both directions).

Margins (CompoSET App. G.3: "we compute the I2T margin as sim(img_a, cap_a) - sim(img_a,
cap_b) and the analogous T2I margin. Margins are signed; positive on a correctly-decided pair,
negative on an incorrectly-decided pair"). The paper gives one difference per direction; an
item's I2T decision makes two comparisons (one per image), so we take the smaller of the two,
the margin by which the whole decision would flip:

    I2T margin = min( s(c0,i0) - s(c1,i0),  s(c1,i1) - s(c0,i1) )
    T2I margin = min( s(c0,i0) - s(c0,i1),  s(c1,i1) - s(c1,i0) )

A margin > 0 exactly when the strict outcome is correct; 0 is a tie (a failure).

API protocol (CompoSET App. G.4: "Each 2x2 instance issues four API calls (two I2T, two T2I)
asking the model to choose between two candidate options ... We counterbalance every call by
issuing it twice with the option order swapped and averaging the binary correctness"):

    img0:  image i0, captions (c0, c1), correct c0       img1:  image i1, correct c1
    cap0:  caption c0, images (i0, i1), correct i0       cap1:  caption c1, correct i1

With a(x) in {0, 1/2, 1} the averaged correctness of question x, per item (our combination;
the paper does not say how the averaged calls combine into Group; this reduces exactly to Eq.
1-3 when both orders agree):

    I2T = a(img0) * a(img1)      T2I = a(cap0) * a(cap1)      Group = I2T * T2I

i.e. the probability that the item is solved when, for each question independently, one of its
two asked orders is drawn at random. Chance for a guesser (each ask right with probability 1/2,
independently): E[a] = 1/2, so I2T = T2I = 1/4 and Group = 1/16 (not 1/6: these are
independent binary choices, not a ranking of four scores).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from foilbench.kinds.asks import CaptionAsk, ImageAsk
from foilbench.kinds.base import ItemKind
from foilbench.kinds.slots import codes, fixed_layout

PAIR_CHANCE = {"i2t": 1 / 4, "t2i": 1 / 4, "group": 1 / 6}
PAIR_CHANCE_API = {"i2t": 1 / 4, "t2i": 1 / 4, "group": 1 / 16}


def _as_pair_sims(sims: np.ndarray) -> np.ndarray:
    sims = np.asarray(sims, dtype=np.float64)
    if sims.ndim != 3 or sims.shape[1:] != (2, 2):
        raise ValueError(f"pair sims must have shape (n, 2, 2) [caption, image], got {sims.shape}")
    return sims


def pair_outcomes(sims: np.ndarray) -> dict[str, np.ndarray]:
    """Boolean I2T, T2I and Group outcomes (Eq. 1-3) for ``sims`` of shape (n, 2, 2).

    >>> import numpy as np
    >>> out = pair_outcomes(np.array([[[0.9, 0.2], [0.1, 0.8]]]))
    >>> bool(out["i2t"][0]), bool(out["t2i"][0]), bool(out["group"][0])
    (True, True, True)
    """
    s = _as_pair_sims(sims)
    c0i0, c0i1, c1i0, c1i1 = s[:, 0, 0], s[:, 0, 1], s[:, 1, 0], s[:, 1, 1]
    i2t = (c0i0 > c1i0) & (c1i1 > c0i1)
    t2i = (c0i0 > c0i1) & (c1i1 > c1i0)
    return {"i2t": i2t, "t2i": t2i, "group": i2t & t2i}


def pair_ties(sims: np.ndarray) -> dict[str, np.ndarray]:
    """Per item: whether an exact tie in a comparison the metric uses was scored a failure."""
    s = _as_pair_sims(sims)
    c0i0, c0i1, c1i0, c1i1 = s[:, 0, 0], s[:, 0, 1], s[:, 1, 0], s[:, 1, 1]
    i2t = (c0i0 == c1i0) | (c1i1 == c0i1)
    t2i = (c0i0 == c0i1) | (c1i1 == c1i0)
    return {"i2t": i2t, "t2i": t2i, "group": i2t | t2i}


def pair_chance(n: int) -> dict[str, np.ndarray]:
    return {m: np.full(n, p) for m, p in PAIR_CHANCE.items()}


def pair_margins(sims: np.ndarray) -> dict[str, np.ndarray]:
    """I2T and T2I margins of ``sims`` (n, 2, 2) [caption, image].

    >>> pair_margins(np.array([[[0.9, 0.2], [0.1, 0.8]]]))["i2t"].round(3).tolist()
    [0.6]
    """
    s = np.asarray(sims, np.float64)
    c0i0, c0i1, c1i0, c1i1 = s[:, 0, 0], s[:, 0, 1], s[:, 1, 0], s[:, 1, 1]
    return {"i2t": np.minimum(c0i0 - c1i0, c1i1 - c0i1),
            "t2i": np.minimum(c0i0 - c0i1, c1i1 - c1i0)}


class PairKind(ItemKind):
    """2x2 base/foil items: I2T, T2I and Group."""

    name = "pair"
    image_columns = ("image_base", "image_foil")
    text_columns = ("caption_base", "caption_foil")
    metrics = ("i2t", "t2i", "group")
    default_metric = "group"
    rank = 0
    is_edit_pair = True
    api_ask_count = 4

    def layout(self, items, image_index, text_index):
        img = np.stack([codes(items["image_base"], image_index),
                        codes(items["image_foil"], image_index)], axis=1)
        txt = np.stack([codes(items["caption_base"], text_index),
                        codes(items["caption_foil"], text_index)], axis=1)
        # slot 2c + i holds s(c, i)
        return fixed_layout(img[:, [0, 1, 0, 1]], txt[:, [0, 0, 1, 1]])

    @staticmethod
    def sims(matrix: np.ndarray) -> np.ndarray:
        """(n, 2, 2) ``sims[n, caption, image]`` from the (n, 4) slot matrix."""
        return np.asarray(matrix, np.float64).reshape(-1, 2, 2)

    def outcomes(self, matrix, n_slots):
        sims = self.sims(matrix)
        out = pair_outcomes(sims)
        return ({m: v.astype(np.float64) for m, v in out.items()}, pair_ties(sims),
                pair_chance(len(sims)))

    def margins(self, matrix):
        return pair_margins(self.sims(matrix))

    def frame_fits(self, columns: Collection[str], score_lengths: Sequence[int]) -> bool:
        return "i2t" in columns and all(n == 4 for n in score_lengths)

    def api_asks(self, row):
        i0, i1, c0, c1 = row.image_base, row.image_foil, row.caption_base, row.caption_foil
        return [CaptionAsk(i0, c0, c1), CaptionAsk(i1, c1, c0),
                ImageAsk(c0, i0, i1), ImageAsk(c1, i1, i0)]

    def api_outcomes(self, correct):
        a = np.asarray(correct, np.float64).reshape(-1, self.api_ask_count)
        i2t = a[:, 0] * a[:, 1]
        t2i = a[:, 2] * a[:, 3]
        chance = {m: np.full(len(a), p) for m, p in PAIR_CHANCE_API.items()}
        return {"i2t": i2t, "t2i": t2i, "group": i2t * t2i}, chance


KIND = PairKind()
