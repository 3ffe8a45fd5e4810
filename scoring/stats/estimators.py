"""The statistical building blocks of the analysis, on numpy and scipy.

The distribution functions are thin wrappers of scipy.special. Shapiro-Wilk,
skewness, kurtosis and the one-factor fit come from scipy.stats and
scipy.optimize, imported inside the functions that use them: importing
scipy.stats costs about a second (docs/benchmarks.md), which only a process
that runs an analysis should pay, not every one that imports this module
(the web app and the export worker, through their report code). The implementations written out here
before are kept as test oracles in tests/scoring/handwritten_estimators.py.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numpy.typing import NDArray
from scipy import special

from scoring.stats.caveats import gettext_noop


def f_quantile(probability: float, df1: float, df2: float) -> float:
    """The `probability` quantile of the F(df1, df2) distribution."""
    return float(special.fdtri(df1, df2, probability))


def normal_upper(z: float) -> float:
    """P(Z >= z) for a standard normal Z."""
    return float(special.ndtr(-z))


def normal_quantile(probability: float) -> float:
    """The `probability` quantile of the standard normal distribution."""
    return float(special.ndtri(probability))


def t_quantile(probability: float, df: float) -> float:
    """The `probability` quantile of Student's t with `df` degrees of freedom."""
    return float(special.stdtrit(df, probability))


def chi2_upper_tail(statistic: float, df: float) -> float:
    """P(X >= statistic) for X ~ chi-square(df)."""
    return float(special.chdtrc(df, statistic))


def pearson_p(r: float, n: int) -> float:
    """Two-sided p of Pearson r under H0: rho = 0.

    The t test with n - 2 degrees of freedom, written as the incomplete beta
    integral it equals: p = I(1 - r^2; (n - 2) / 2, 1/2). Exact at |r| = 1.
    """
    return float(special.betainc((n - 2) / 2, 0.5, max(0.0, 1.0 - r * r)))


def skewness(values: NDArray[np.float64]) -> float:
    """Bias-corrected sample skewness G1 (SPSS, Excel SKEW, scipy skew(bias=False)); n >= 3."""
    from scipy.stats import skew

    return float(skew(values, bias=False))


def excess_kurtosis(values: NDArray[np.float64]) -> float:
    """Bias-corrected excess kurtosis G2 (SPSS, Excel KURT, scipy kurtosis(bias=False)); n >= 4."""
    from scipy.stats import kurtosis

    return float(kurtosis(values, fisher=True, bias=False))


def shapiro_wilk(values: NDArray[np.float64]) -> tuple[float, float]:
    """Shapiro-Wilk (W, p) by Royston's approximation (AS R94), as scipy.stats.shapiro.

    Needs n >= 3 and values that are not all equal: scipy would only warn on
    equal values and report W = 1. The p of the approximation is validated for
    n <= 5000; above that W is still exact, and the analysis notes it itself.
    """
    from scipy.stats import shapiro

    values = np.asarray(values, dtype=np.float64)
    if len(values) < 3:
        raise ValueError("Shapiro-Wilk needs at least 3 values")
    if np.ptp(values) == 0:
        raise ValueError("Shapiro-Wilk needs values that are not all equal")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*N > 5000", category=UserWarning)
        result = shapiro(values)
    return float(result.statistic), float(result.pvalue)


# Tight enough that the fit agrees with the Levenberg-Marquardt fit the platform
# used before (tests/scoring/handwritten_estimators.py) to 1e-7; at 1e-12 the
# two differ by up to 4e-6 on small samples.
_FACTOR_TOLERANCE = 1e-15


def one_factor_loadings(
    correlations: NDArray[np.float64],
) -> tuple[NDArray[np.float64], bool]:
    """Loadings of a one-factor model fitted by minimum residuals (minres, ULS).

    Minimises the sum of squared off-diagonal residuals r_ij - l_i * l_j (the
    criterion of psych's default `fa(fm="minres")`) with scipy's bounded
    least squares, keeping every loading in [-1, 1] so that no uniqueness turns
    negative. Starts from the principal axis of the correlation matrix with
    squared multiple correlations on the diagonal.
    Returns (loadings, converged); the sign is chosen so the loadings sum >= 0.
    """
    from scipy.optimize import least_squares

    k = len(correlations)
    first, second = np.triu_indices(k, 1)
    target = correlations[first, second]
    rows = np.arange(len(target))

    def residuals(loadings: NDArray[np.float64]) -> NDArray[np.float64]:
        return loadings[first] * loadings[second] - target

    def jacobian(loadings: NDArray[np.float64]) -> NDArray[np.float64]:
        derivatives = np.zeros((len(target), k))
        derivatives[rows, first] = loadings[second]
        derivatives[rows, second] = loadings[first]
        return derivatives

    fit = least_squares(
        residuals,
        np.clip(_principal_axis(correlations), -1.0, 1.0),
        jac=jacobian,
        bounds=(-1.0, 1.0),
        xtol=_FACTOR_TOLERANCE,
        ftol=_FACTOR_TOLERANCE,
        gtol=_FACTOR_TOLERANCE,
    )
    return _oriented(fit.x), bool(fit.success)


def _principal_axis(correlations: NDArray[np.float64]) -> NDArray[np.float64]:
    """The first principal axis with squared multiple correlations (SMC) as communalities.

    A singular matrix (an item pair correlating at -1 or +1, an item that is a sum
    of others) has no inverse, or one with infinite entries: an item predicted
    perfectly has an SMC of 1, and there the largest absolute correlation of each
    item stands in, the classic fallback.
    """
    reduced = correlations.copy()
    fallback = np.abs(correlations - np.eye(len(correlations))).max(axis=1)
    try:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            smc = 1.0 - 1.0 / np.diag(np.linalg.inv(correlations))
    except np.linalg.LinAlgError:
        smc = fallback
    if not np.isfinite(smc).all():
        smc = fallback
    np.fill_diagonal(reduced, np.clip(smc, 0.0, 1.0))
    eigenvalues, eigenvectors = np.linalg.eigh(reduced)
    return _oriented(eigenvectors[:, -1] * math.sqrt(max(eigenvalues[-1], 1e-6)))


def _oriented(loadings: NDArray[np.float64]) -> NDArray[np.float64]:
    # A factor's sign is arbitrary; point it the way most items point.
    return loadings if loadings.sum() >= 0 else -loadings


def omega_total(correlations: NDArray[np.float64]) -> tuple[float, list[str]]:
    """McDonald's omega total of a one-factor model on standardised items, with caveats.

    omega = (sum l)^2 / ((sum l)^2 + sum (1 - l^2)).
    """
    loadings, converged = one_factor_loadings(correlations)
    caveats = [] if converged else [gettext_noop("the one-factor fit did not converge")]
    if (np.abs(loadings) > 1.0 - 1e-6).any():
        caveats.append(gettext_noop("Heywood case: a loading reached 1 (a uniqueness of 0)"))
    common = float(loadings.sum()) ** 2
    return common / (common + float((1.0 - loadings**2).sum())), caveats
