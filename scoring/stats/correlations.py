"""Correlations of the criterion-validity study (docs/design/criterion.md §13.3): Pearson's r
with its Fisher-z interval and a test against a threshold, Spearman's rho, and
Steiger's (1980) Z for two correlations that share a variable.

Every function returns None instead of a figure it cannot compute (fewer than
MIN_N pairs, a variable without variance, |r| = 1 where Fisher's z is
infinite); the caller records why. scipy is imported inside the functions that
need it, as in scoring/stats/estimators.py.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring.stats.estimators import normal_quantile, normal_upper, pearson_p

# Fisher's z has standard error 1 / sqrt(n - 3): at n = 3 there is none, and a
# correlation of three points is a line through two of them and a leftover.
MIN_N = 4


def p_value(z: float, sidedness: str) -> float:
    """p of a z statistic: one-sided in the predicted (positive) direction, or two-sided."""
    if sidedness == "one_sided":
        return normal_upper(z)
    return min(1.0, 2.0 * normal_upper(abs(z)))


# The mean of annotators' identical values is not always the value itself
# (fmean of 0.7, 0.7, 0.7 can differ in the last bit), and a correlation of
# that rounding noise is a number about nothing: a spread within this share of
# the values' size is no variance.
RELATIVE_TOLERANCE = 1e-9


def varies(values: NDArray[Any]) -> bool:
    """Whether the values differ by more than rounding (RELATIVE_TOLERANCE)."""
    if len(values) == 0:
        return False
    size = max(1.0, float(np.max(np.abs(values))))
    return float(np.ptp(values)) > RELATIVE_TOLERANCE * size


def pearson(x: NDArray[np.float64], y: NDArray[np.float64]) -> float | None:
    """Pearson's r, or None below MIN_N pairs or without variance."""
    if len(x) < MIN_N or not varies(x) or not varies(y):
        return None
    dx, dy = x - x.mean(), y - y.mean()
    r = float(dx @ dy / math.sqrt(float(dx @ dx) * float(dy @ dy)))
    return max(-1.0, min(1.0, r))


def fisher_interval(r: float | None, n: int, alpha: float) -> tuple[float, float] | None:
    """Two-sided (1 - alpha) interval tanh(atanh r -/+ z_{1-alpha/2} / sqrt(n - 3))."""
    if r is None or abs(r) >= 1.0 or n < MIN_N:
        return None
    half = normal_quantile(1.0 - alpha / 2.0) / math.sqrt(n - 3)
    return math.tanh(math.atanh(r) - half), math.tanh(math.atanh(r) + half)


def threshold_test(
    r: float | None, n: int, threshold: float, sidedness: str
) -> dict[str, Any] | None:
    """Fisher's z test of rho against `threshold`.

    One-sided: H0 rho <= threshold against rho > threshold; two-sided: H0 rho =
    threshold. z = (atanh r - atanh threshold) * sqrt(n - 3).
    """
    if r is None or abs(r) >= 1.0 or n < MIN_N:
        return None
    z = (math.atanh(r) - math.atanh(threshold)) * math.sqrt(n - 3)
    return {"z": z, "p": p_value(z, sidedness)}


def zero_test_p(r: float | None, n: int) -> float | None:
    """Two-sided p of r under rho = 0: the t test with n - 2 df (scoring/stats/estimators.py)."""
    return None if r is None else pearson_p(r, n)


def spearman(x: NDArray[np.float64], y: NDArray[np.float64]) -> dict[str, Any] | None:
    """Spearman's rho (Pearson's r of the mid-ranks) with its two-sided p (t with n - 2 df)."""
    from scipy.stats import rankdata

    if len(x) < MIN_N or not varies(x) or not varies(y):
        return None
    rho = pearson(rankdata(x), rankdata(y))
    return None if rho is None else {"rho": rho, "p": zero_test_p(rho, len(x))}


def steiger_z(r_jk: float, r_jh: float, r_kh: float, n: int) -> float | None:
    """Steiger's (1980) Z1* for H0 rho_jk = rho_jh, the two correlations sharing j.

    The Fisher z's of r_jk and r_jh differ by a normal deviate whose variance
    involves their covariance, estimated from the pooled r_bar = (r_jk + r_jh) / 2
    (Steiger 1980, equations 3, 10 and 14):
        psi = r_kh (1 - 2 r_bar^2) - r_bar^2 (1 - 2 r_bar^2 - r_kh^2) / 2
        s = psi / (1 - r_bar^2)^2
        Z = (atanh r_jk - atanh r_jh) sqrt(n - 3) / sqrt(2 - 2 s)
    Positive when r_jk > r_jh.
    """
    if n < MIN_N or max(abs(r_jk), abs(r_jh), abs(r_kh)) >= 1.0:
        return None
    r_bar = (r_jk + r_jh) / 2.0
    square = r_bar * r_bar
    psi = r_kh * (1.0 - 2.0 * square) - 0.5 * square * (1.0 - 2.0 * square - r_kh * r_kh)
    s = psi / (1.0 - square) ** 2
    if s >= 1.0:
        return None
    return (math.atanh(r_jk) - math.atanh(r_jh)) * math.sqrt(n - 3) / math.sqrt(2.0 - 2.0 * s)


def fisher_z(r: ArrayLike) -> NDArray[np.float64]:
    """atanh of correlations, NaN where |r| = 1 (infinite) or r is missing (NaN)."""
    r = np.asarray(r, dtype=np.float64)
    inside = np.abs(r) < 1.0
    return np.where(inside, np.arctanh(np.where(inside, r, 0.0)), np.nan)
