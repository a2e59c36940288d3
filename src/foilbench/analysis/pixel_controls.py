"""Pixel-level dataset controls for base/foil image pairs (CompoSET section 4 and App. F).

A single-edit benchmark is only controlled if a foil differs from its base in a small region.
These metrics say how much of the image an edit touched and how strongly. Images are compared
as float arrays in [0, 1], shape (H, W, 3), after resizing both to ``AUDIT_SIDE`` x ``AUDIT_SIDE``
(bilinear) so that benchmarks of any resolution are measured on one scale.

Metrics of a pair a, b with N = H * W * C values (d = a - b):
- MAE  = (1/N) sum |d|
- L2   = sqrt((1/N) sum d^2)                       (root mean square, resolution-free)
- Linf = max |d|
- fraction affected = (1/(H W)) sum_p [ max_c |G(a) - G(b)|_{p,c} > 10/255 ], where G is a
  Gaussian blur with sigma 1 pixel per channel (CompoSET App. F); strict ``>``.
- SSIM (Wang et al. 2004) via scikit-image, Gaussian window sigma 1.5, K1 0.01, K2 0.03.
- MS-SSIM (Wang, Simoncelli and Bovik 2003, "Multi-scale structural similarity for image
  quality assessment", Asilomar): :func:`ms_ssim`.
"""

from __future__ import annotations

import numpy as np
from PIL import Image
from scipy.ndimage import gaussian_filter

AUDIT_SIDE = 512
AFFECTED_THRESHOLD = 10 / 255
BLUR_SIGMA = 1.0
# Wang et al. 2003, Sec. 3.2: exponents beta_j (= gamma_j; alpha_M = beta_M) per scale.
MS_SSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)
SSIM_SIGMA = 1.5
SSIM_K1, SSIM_K2 = 0.01, 0.03
_TRUNCATE = 3.5  # gaussian_filter truncation: radius int(3.5 * 1.5 + 0.5) = 5, an 11-tap window


def load_for_audit(image: Image.Image | np.ndarray, side: int = AUDIT_SIDE) -> np.ndarray:
    """RGB float64 array in [0, 1] of shape (side, side, 3) (bilinear resize)."""
    if isinstance(image, np.ndarray):
        image = Image.fromarray(image)
    image = image.convert("RGB")
    if image.size != (side, side):
        image = image.resize((side, side), Image.BILINEAR)
    return np.asarray(image, dtype=np.float64) / 255.0


def basic_differences(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """MAE, L2 (root mean square) and L-infinity of ``a - b`` (formulas in the module doc)."""
    d = np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))
    return {"mae": float(d.mean()), "l2": float(np.sqrt((d * d).mean())), "linf": float(d.max())}


def _changed_box(a: np.ndarray, b: np.ndarray, margin: int):
    """Slices of the bounding box of ``a != b`` grown by ``margin`` (None if identical)."""
    diff = a != b
    if diff.ndim == 3:
        diff = diff.any(axis=2)
    rows, cols = np.flatnonzero(diff.any(axis=1)), np.flatnonzero(diff.any(axis=0))
    if rows.size == 0:
        return None
    h, w = diff.shape
    return (slice(max(rows[0] - margin, 0), min(rows[-1] + 1 + margin, h)),
            slice(max(cols[0] - margin, 0), min(cols[-1] + 1 + margin, w)))


def fraction_affected(a: np.ndarray, b: np.ndarray, sigma: float = BLUR_SIGMA,
                      threshold: float = AFFECTED_THRESHOLD) -> float:
    """Share of pixels whose blurred channel-max absolute difference exceeds ``threshold``.

    Both images are blurred (sigma in pixels, channels untouched), as in CompoSET App. F; the
    comparison is strict (a difference of exactly ``threshold`` is not affected). The blur is
    linear, so G(a) - G(b) = G(a - b); it is applied to the difference inside the changed box
    grown by the kernel radius, which gives the same numbers as blurring the whole images.
    """
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    radius = int(4.0 * sigma + 0.5)  # gaussian_filter's default truncation (4 sigma)
    box = _changed_box(a, b, 2 * radius)
    if box is None:
        return 0.0
    d = a[box] - b[box]
    s = (sigma, sigma, 0) if d.ndim == 3 else sigma
    d = np.abs(gaussian_filter(d, s, mode="nearest"))
    if d.ndim == 3:
        d = d.max(axis=2)
    return float((d > threshold).sum() / (a.shape[0] * a.shape[1]))


def _ssim_terms(x: np.ndarray, y: np.ndarray, data_range: float = 1.0):
    """Per-pixel luminance l and contrast-structure cs maps of Wang et al. (2004, Eq. 6-9):
    l = (2 mu_x mu_y + C1) / (mu_x^2 + mu_y^2 + C1), cs = (2 s_xy + C2) / (s_x^2 + s_y^2 + C2),
    with Gaussian-weighted local statistics and C_k = (K_k * data_range)^2. Borders where the
    window leaves the image are cropped, as scikit-image does, so one scale equals its SSIM."""
    def blur(z):
        return gaussian_filter(z, SSIM_SIGMA, truncate=_TRUNCATE, mode="reflect")

    c1, c2 = (SSIM_K1 * data_range) ** 2, (SSIM_K2 * data_range) ** 2
    mx, my = blur(x), blur(y)
    sxx = blur(x * x) - mx * mx
    syy = blur(y * y) - my * my
    sxy = blur(x * y) - mx * my
    lum = (2 * mx * my + c1) / (mx * mx + my * my + c1)
    cs = (2 * sxy + c2) / (sxx + syy + c2)
    pad = int(_TRUNCATE * SSIM_SIGMA + 0.5)
    crop = (slice(pad, -pad), slice(pad, -pad))
    return lum[crop], cs[crop]


def _ssim_means(x: np.ndarray, y: np.ndarray, data_range: float = 1.0) -> tuple[float, float]:
    """Means of the cs and l * cs maps over the valid (uncropped) area.

    Where x and y agree over a whole window both maps are exactly 1, so the maps are computed
    only on the changed box grown by two window radii (identical results, far less work).
    """
    pad = int(_TRUNCATE * SSIM_SIGMA + 0.5)
    n_valid = (x.shape[0] - 2 * pad) * (x.shape[1] - 2 * pad)
    box = _changed_box(x, y, 2 * pad)
    if box is None:
        return 1.0, 1.0
    lum, cs = _ssim_terms(x[box], y[box], data_range)
    # the box's own border crop (pad) never holds a changed window unless it is the image border
    r0, c0 = box[0].start + pad, box[1].start + pad  # image coordinates of lum[0, 0]
    r_lo, r_hi = max(r0, pad), min(r0 + lum.shape[0], x.shape[0] - pad)
    c_lo, c_hi = max(c0, pad), min(c0 + lum.shape[1], x.shape[1] - pad)
    sub = (slice(r_lo - r0, r_hi - r0), slice(c_lo - c0, c_hi - c0))
    cs_in, lcs_in = cs[sub], (lum * cs)[sub]
    rest = n_valid - cs_in.size
    return (float((cs_in.sum() + rest) / n_valid), float((lcs_in.sum() + rest) / n_valid))


def _downsample(z: np.ndarray) -> np.ndarray:
    """2 x 2 mean pooling (the low-pass filter and factor-2 subsampling between scales)."""
    h, w = (z.shape[0] // 2) * 2, (z.shape[1] // 2) * 2
    z = z[:h, :w]
    return 0.25 * (z[0::2, 0::2] + z[1::2, 0::2] + z[0::2, 1::2] + z[1::2, 1::2])


def ms_ssim_channel(x: np.ndarray, y: np.ndarray, weights=MS_SSIM_WEIGHTS,
                    data_range: float = 1.0) -> float:
    """MS-SSIM of one channel (Wang, Simoncelli and Bovik 2003, Eq. 7):

        MS-SSIM = [l_M]^{alpha_M} * prod_{j=1..M} [cs_j]^{beta_j},

    where cs_j is the mean contrast-structure term at scale j (scale 1 = full resolution, each
    next scale 2x2-pooled) and alpha_M = beta_M. At the coarsest scale the factor
    [l_M]^{beta_M} [cs_M]^{beta_M} is taken as the SSIM there, mean(l * cs)^{beta_M} (as in the
    authors' reference code), so one scale with weight 1 is exactly single-scale SSIM.
    Negative means (anti-correlated structure) are clipped to 0 before the power, so the
    product stays real.
    """
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    m = len(weights)
    need = 2 ** (m - 1) * (2 * int(_TRUNCATE * SSIM_SIGMA + 0.5) + 1)
    if min(x.shape) < need:
        raise ValueError(f"MS-SSIM with {m} scales needs images of at least {need} pixels a "
                         f"side, got {x.shape}")
    out = 1.0
    for j, w in enumerate(weights):
        cs_mean, ssim_mean = _ssim_means(x, y, data_range)
        if j == m - 1:
            out *= max(ssim_mean, 0.0) ** w
        else:
            out *= max(cs_mean, 0.0) ** w
            x, y = _downsample(x), _downsample(y)
    return out


def ms_ssim(a: np.ndarray, b: np.ndarray, weights=MS_SSIM_WEIGHTS) -> float:
    """MS-SSIM of two (H, W) or (H, W, C) images in [0, 1]; colour channels are averaged."""
    if np.ndim(a) == 2:
        return ms_ssim_channel(a, b, weights)
    return float(np.mean([ms_ssim_channel(a[..., c], b[..., c], weights)
                          for c in range(a.shape[2])]))


def ssim(a: np.ndarray, b: np.ndarray) -> float:
    """SSIM (Wang et al. 2004, Eq. 13: the mean of l * cs), Gaussian window sigma 1.5, K1 0.01,
    K2 0.03, colour channels averaged; equal to scikit-image's ``structural_similarity`` with
    ``gaussian_weights=True, use_sample_covariance=False`` (tested), but computed only where
    the images differ."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    if a.ndim == 2:
        return _ssim_means(a, b)[1]
    return float(np.mean([_ssim_means(a[..., c], b[..., c])[1] for c in range(a.shape[2])]))


def pair_pixel_metrics(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """All pixel controls of one pair of audit-sized arrays (see the module docstring)."""
    out = basic_differences(a, b)
    out["fraction_affected"] = fraction_affected(a, b)
    out["ssim"] = ssim(a, b)
    out["ms_ssim"] = ms_ssim(a, b)
    return out
