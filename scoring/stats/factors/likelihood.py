"""Normal-theory maximum likelihood for confirmatory factor models over one or
more groups (docs/design/validation-analysis.md §14.5, §14.6): the discrepancy function, its
gradient, the expected information and the fit indices, in lavaan's
conventions so that figures can be checked against its published examples.

Conventions (lavaan, `likelihood = "normal"`): the sample covariance matrix
divides by N, F_ML = log|Sigma| + tr(S Sigma^-1) - log|S| - p (+ the mean
term), chi-square = sum over groups of N_g * F_g, the baseline is the
independence model, RMSEA uses N and is multiplied by sqrt(groups), and its
90% interval inverts the noncentral chi-square. SRMR is Bentler's: residual
covariances divided by the observed standard deviations.

A model is a `Pattern` per group: for each loading, factor (co)variance,
residual variance, intercept and factor mean, the index of the free parameter
it takes (-1 where it is fixed). Two entries with the same index are one
parameter: that is how equal loadings and intercepts across groups are said.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

FIXED = -1


@dataclass(frozen=True)
class Moments:
    """One group's sample size, means and covariance matrix (divisor N)."""

    n: int
    mean: NDArray[np.float64]
    cov: NDArray[np.float64]

    @classmethod
    def of(cls, data: NDArray[Any]) -> Moments:
        data = np.asarray(data, dtype=float)
        return cls(len(data), data.mean(axis=0), np.cov(data.T, bias=True))


@dataclass(frozen=True)
class Pattern:
    """Where one group's free parameters sit.

    `lam_fixed` holds the value of fixed loadings (1 for a factor's marker
    item, 0 elsewhere). With `nu` None the means are left saturated (every
    item its own free intercept), which adds nothing to F and nothing to df.
    """

    lam: NDArray[np.int_]  # (p, m) parameter index or FIXED
    lam_fixed: NDArray[np.float64]  # (p, m)
    phi: NDArray[np.int_]  # (m, m) symmetric parameter index
    theta: NDArray[np.int_]  # (p,)
    # The mean structure: both or neither.
    nu: NDArray[np.int_] | None = None  # (p,)
    kappa: NDArray[np.int_] | None = None  # (m,) FIXED = factor mean 0

    def matrices(
        self, x: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        lam = np.where(self.lam >= 0, x[self.lam], self.lam_fixed)
        phi = np.where(self.phi >= 0, x[self.phi], 0.0)
        theta = x[self.theta]
        return lam, phi, theta

    def sigma(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        lam, phi, theta = self.matrices(x)
        sigma: NDArray[np.float64] = lam @ phi @ lam.T + np.diag(theta)
        return sigma

    def mu(self, x: NDArray[np.float64], lam: NDArray[np.float64]) -> NDArray[np.float64]:
        # Asked only of a pattern with a mean structure.
        assert self.nu is not None and self.kappa is not None
        kappa = np.where(self.kappa >= 0, x[self.kappa], 0.0)
        mu: NDArray[np.float64] = x[self.nu] + lam @ kappa
        return mu


def group_discrepancy(
    pattern: Pattern, moments: Moments, x: NDArray[np.float64]
) -> tuple[float, NDArray[np.float64] | None]:
    """F_g and its gradient in x, or (inf, None) where Sigma is not positive definite."""
    lam, phi, theta = pattern.matrices(x)
    sigma = lam @ phi @ lam.T + np.diag(theta)
    try:
        chol = np.linalg.cholesky(sigma)
    except np.linalg.LinAlgError:
        return math.inf, None
    inv = np.linalg.inv(sigma)
    p = len(sigma)
    value = 2.0 * np.log(np.diag(chol)).sum() + np.trace(moments.cov @ inv) - p
    value -= np.linalg.slogdet(moments.cov)[1]
    outer = moments.cov
    d = np.zeros(p)
    if pattern.nu is not None:
        d = moments.mean - pattern.mu(x, lam)
        value += d @ inv @ d
        outer = outer + np.outer(d, d)
    g = inv - inv @ outer @ inv  # dF/dSigma
    grad = np.zeros_like(x)
    inv_d = inv @ d
    d_lam = 2.0 * g @ lam @ phi
    if pattern.nu is not None:
        assert pattern.kappa is not None  # nu and kappa come together
        kappa = np.where(pattern.kappa >= 0, x[pattern.kappa], 0.0)
        d_lam -= 2.0 * np.outer(inv_d, kappa)
        np.add.at(grad, pattern.nu, -2.0 * inv_d)
        free = pattern.kappa >= 0
        np.add.at(grad, pattern.kappa[free], (-2.0 * lam.T @ inv_d)[free])
    for index, values in ((pattern.lam, d_lam), (pattern.phi, lam.T @ g @ lam)):
        free = index >= 0
        np.add.at(grad, index[free], values[free])
    np.add.at(grad, pattern.theta, np.diag(g))
    return float(value), grad


def minimise(
    patterns: Sequence[Pattern],
    moments: Sequence[Moments],
    start: NDArray[np.float64],
    lower: NDArray[np.float64],
) -> tuple[NDArray[np.float64], float, bool]:
    """Minimise sum_g (N_g / N) F_g; returns (x, F, converged)."""
    from scipy.optimize import minimize

    total = sum(m.n for m in moments)

    def objective(x: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        value, grad = 0.0, np.zeros_like(x)
        for pattern, group in zip(patterns, moments, strict=True):
            f, g = group_discrepancy(pattern, group, x)
            if g is None:
                # L-BFGS-B backs off from a large finite value; inf stops it.
                return 1e10, np.zeros_like(x)
            value += group.n / total * f
            grad += group.n / total * g
        return value, grad

    bounds = [(lo if np.isfinite(lo) else None, None) for lo in lower]
    result = minimize(
        objective,
        start,
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"maxiter": 10000, "ftol": 1e-14, "gtol": 1e-9},
    )
    converged = bool(result.success) and np.isfinite(result.fun) and result.fun < 1e9
    return result.x, float(result.fun), converged


def expected_information(pattern: Pattern, n: int, x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Expected information of the covariance parameters of one group.

    I_ij = N/2 tr(Sigma^-1 dSigma_i Sigma^-1 dSigma_j); Sigma is quadratic in
    x, so central differences give dSigma exactly (up to rounding).
    """
    inv = np.linalg.inv(pattern.sigma(x))
    steps = []
    for i in range(len(x)):
        h = np.zeros_like(x)
        h[i] = 1e-5
        steps.append(inv @ ((pattern.sigma(x + h) - pattern.sigma(x - h)) / 2e-5))
    q = len(x)
    info = np.empty((q, q))
    for i in range(q):
        for j in range(i, q):
            info[i, j] = info[j, i] = 0.5 * n * np.einsum("ij,ji->", steps[i], steps[j])
    return info


def chi2_upper(chi2: float, df: float) -> float:
    return float(special.chdtrc(df, chi2)) if df > 0 else math.nan


def independence_chi2(moments: list[Moments]) -> float:
    """Chi-square of the baseline model: every item uncorrelated, own variance (and mean)."""
    total = 0.0
    for group in moments:
        log_det = np.linalg.slogdet(group.cov)[1]
        total += group.n * (np.log(np.diag(group.cov)).sum() - log_det)
    return float(total)


def rmsea_interval(chi2: float, df: int, n: int, groups: int) -> tuple[float, float]:
    """90% interval: the noncentrality where P(X <= chi2) is .95 and .05."""
    from scipy.optimize import brentq
    from scipy.stats import ncx2

    def noncentrality(probability: float) -> float:
        def miss(lam: float) -> float:
            return float(ncx2.cdf(chi2, df, lam)) - probability

        if miss(0.0) < 0:  # the observed chi-square is below this percentile already
            return 0.0
        upper = max(chi2, 1.0)
        while miss(upper) > 0:
            upper *= 2.0
        return float(brentq(miss, 0.0, upper, xtol=1e-10))

    def to_rmsea(lam: float) -> float:
        return math.sqrt(lam / (n * df)) * math.sqrt(groups)

    return to_rmsea(noncentrality(0.95)), to_rmsea(noncentrality(0.05))


def fit_indices(
    chi2: float, df: int, baseline: float, baseline_df: int, n: int, groups: int
) -> dict[str, float]:
    """CFI, TLI and RMSEA as lavaan reports them (RMSEA with N, times sqrt(groups))."""
    cfi_denominator = max(chi2 - df, baseline - baseline_df, 0.0)
    cfi = 1.0 - max(chi2 - df, 0.0) / cfi_denominator if cfi_denominator > 0 else 1.0
    if df > 0:
        tli = (baseline / baseline_df - chi2 / df) / (baseline / baseline_df - 1.0)
        rmsea = math.sqrt(max(chi2 - df, 0.0) / (n * df)) * math.sqrt(groups)
    else:
        tli, rmsea = 1.0, 0.0
    return {"cfi": float(cfi), "tli": float(tli), "rmsea": float(rmsea)}


def srmr_bentler(observed: NDArray[np.float64], implied: NDArray[np.float64]) -> float:
    """Residual covariances over the observed SDs, root mean square over the lower triangle."""
    sd = np.sqrt(np.diag(observed))
    residual = (observed - implied) / np.outer(sd, sd)
    lower = residual[np.tril_indices_from(residual)]
    return float(math.sqrt(np.mean(lower**2)))
