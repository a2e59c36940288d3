"""Scores of cached embedding pairs: cosine, or the model's own calibrated logit.

CLIP (Radford et al. 2021): logit = exp(t) * cos(i, c), with t the learned temperature.
SigLIP (Zhai et al. 2023, Eq. 1): logit = exp(t') * cos(i, c) + b, and the model's
probability that the pair matches is sigmoid(logit). Both are monotone in the cosine for
a fixed model, so per-item rankings agree with cosine; the values (and margins) do not.
"""

from __future__ import annotations

import numpy as np

from foilbench.models.base import cosine_pair_scores


def logit_pair_scores(
    image_emb: np.ndarray,
    text_emb: np.ndarray,
    scale: float,
    bias: float = 0.0,
    sigmoid: bool = False,
) -> np.ndarray:
    """Row-wise ``scale * cos + bias``, through the logistic function when ``sigmoid``.

    ``scale`` is the multiplier itself (already exponentiated). Computed in float64.

    >>> import numpy as np
    >>> logit_pair_scores(np.array([[1.0, 0.0]]), np.array([[1.0, 0.0]]), 10.0, -10.0, True)
    array([0.5])
    """
    z = float(scale) * cosine_pair_scores(image_emb, text_emb) + float(bias)
    if sigmoid:
        # numerically stable logistic
        return np.where(z >= 0, 1.0 / (1.0 + np.exp(-np.abs(z))),
                        np.exp(-np.abs(z)) / (1.0 + np.exp(-np.abs(z))))
    return z
