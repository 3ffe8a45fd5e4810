"""Exact population figures of the simulated validation study (docs/design/validation-analysis.md
§14.9), computed from the model's definition with scipy's normal and bivariate
normal distributions: the independent computation the generator's draws and
the analyses' estimates are checked against. Nothing here calls the
generator's own helpers."""

import numpy as np
from scipy.stats import multivariate_normal, norm

from scoring.instruments.shs import DIMENSION_KEYS, ITEMS

DIMENSION = [DIMENSION_KEYS.index(item.dimension) for item in ITEMS]
COMPANION_FACTOR = {"usability": 5, "explanation": 6, "trust": 7}


def second_order_correlations(params) -> np.ndarray:
    """corr(F_d, F_e) = gamma_d gamma_e, corr(C, F_d) = rho gamma_d, and the
    companions share rho rho' + kappa sqrt(1 - rho^2) sqrt(1 - rho'^2)."""
    gamma = list(params.general_loadings) + list(params.companion_general_r)
    size = len(gamma)
    expected = np.eye(size)
    for a in range(size):
        for b in range(size):
            if a != b:
                expected[a, b] = gamma[a] * gamma[b]
                if a >= 5 and b >= 5:
                    unique = ((1 - gamma[a] ** 2) * (1 - gamma[b] ** 2)) ** 0.5
                    expected[a, b] += params.companion_unique_r * unique
    return expected


def _upper(a: float, b: float, r: float) -> float:
    """P(Y1 > a, Y2 > b) for standard normals correlating r."""
    return float(multivariate_normal([0, 0], [[1, r], [r, 1]]).cdf([-a, -b]))


def code_covariance(r: float | None, first, second) -> float:
    """cov(1 + sum[y1 > t], 1 + sum[y2 > u]) over thresholds t in `first`, u in
    `second`, for standard normals correlating r; r None: y1 and y2 are one
    variable (the code's variance)."""
    total = 0.0
    for a in first:
        for b in second:
            joint = norm.sf(max(a, b)) if r is None else _upper(a, b, r)
            total += joint - norm.sf(a) * norm.sf(b)
    return total


def shs_code_covariance(params, latent_r: float | None = None) -> np.ndarray:
    """(10, 10) covariance of the keyed SHS codes of one evaluation (latent_r
    None), or between an evaluation and its retest, whose latent levels
    correlate latent_r and whose item errors are independent."""
    sigma = second_order_correlations(params)
    loadings, thresholds = params.item_loadings, params.item_thresholds
    size = len(ITEMS)
    covariance = np.zeros((size, size))
    for j in range(size):
        for k in range(size):
            r = loadings[j] * loadings[k] * sigma[DIMENSION[j], DIMENSION[k]]
            if latent_r is not None:
                r *= latent_r
            same = latent_r is None and j == k
            covariance[j, k] = code_covariance(None if same else r, thresholds[j], thresholds[k])
    return covariance


def shs_companion_correlation(params, key: str) -> float:
    """Population correlation of the SHS score with the scale's score, both
    linear in their keyed codes (the SHS is sum(a - b) / 20, the SUS 2.5 times
    the keyed sum less 10, the SCS the sum over 50, the trust scale the mean)."""
    shape = params.companions[key]
    sigma = second_order_correlations(params)
    factor = COMPANION_FACTOR[shape.factor]
    cuts, k = shape.thresholds, len(shape.reversed)
    item_variance = code_covariance(None, cuts, cuts)
    pair = code_covariance(shape.loading**2, cuts, cuts)
    scale_variance = k * item_variance + k * (k - 1) * pair
    covariance = k * sum(
        code_covariance(
            loading * shape.loading * sigma[DIMENSION[j], factor], params.item_thresholds[j], cuts
        )
        for j, loading in enumerate(params.item_loadings)
    )
    shs_variance = shs_code_covariance(params).sum()
    return covariance / np.sqrt(shs_variance * scale_variance)
