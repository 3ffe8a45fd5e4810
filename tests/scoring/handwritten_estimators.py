"""The hand-written estimators that scoring/stats/estimators.py used before it called scipy.

Until the code-health change, Shapiro-Wilk (Royston's AS R94), the bias-corrected
skewness and kurtosis and the minres one-factor fit were written out here on
numpy and scipy.special, to keep `scipy.stats` (about a second to import) out
of `shs_analyze`. The app now calls `scipy.stats.shapiro`, `scipy.stats.skew`,
`scipy.stats.kurtosis` and `scipy.optimize.least_squares`; the code moved here
unchanged as the test oracle, so that the library results are checked against
the figures the platform reported before (tests/scoring/test_estimators.py),
and as the baseline of `make bench` (tests/bench/bench_scoring.py). The fit's
start, the principal axis, stays in the app and is shared.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

# The fit starts where the app's does; only the iteration differs.
from scoring.stats.estimators import _oriented, _principal_axis


def _central_moments(values: np.ndarray) -> tuple[float, float, float]:
    deviations = values - values.mean()
    squared = deviations * deviations
    return float(squared.mean()), float((squared * deviations).mean()), float((squared**2).mean())


def skewness(values: np.ndarray) -> float:
    """Bias-corrected sample skewness G1 (SPSS, Excel SKEW, scipy skew(bias=False)); n >= 3."""
    n = len(values)
    m2, m3, _ = _central_moments(values)
    g1 = m3 / m2**1.5
    return g1 * math.sqrt(n * (n - 1)) / (n - 2)


def excess_kurtosis(values: np.ndarray) -> float:
    """Bias-corrected excess kurtosis G2 (SPSS, Excel KURT, scipy kurtosis(bias=False)); n >= 4."""
    n = len(values)
    m2, _, m4 = _central_moments(values)
    g2 = m4 / m2**2 - 3.0
    return ((n + 1) * g2 + 6.0) * (n - 1) / ((n - 2) * (n - 3))


# Royston (1992), "Approximating the Shapiro-Wilk W-test for non-normality",
# Statistics and Computing 2: 117-119; algorithm AS R94 (Royston 1995).
_C1 = (0.0, 0.221157, -0.147981, -2.071190, 4.434685, -2.706056)
_C2 = (0.0, 0.042981, -0.293762, -1.752461, 5.682633, -3.582633)
_C3 = (0.5440, -0.39978, 0.025054, -6.714e-4)
_C4 = (1.3822, -0.77857, 0.062767, -2.0322e-3)
_C5 = (-1.5861, -0.31082, -0.083751, 3.8915e-3)
_C6 = (-0.4803, -0.082676, 3.0302e-3)
_G = (-2.273, 0.459)
# The smallest p the approximation reports for 4 <= n <= 11.
_SMALLEST_P = 1e-99


def _polynomial(coefficients: tuple[float, ...], x: float) -> float:
    result = 0.0
    for coefficient in reversed(coefficients):
        result = result * x + coefficient
    return result


def _shapiro_wilk_coefficients(n: int) -> np.ndarray:
    """The n // 2 positive coefficients a_1 >= a_2 >= ..., for the largest minus smallest values."""
    half = n // 2
    if n == 3:
        return np.array([math.sqrt(0.5)])
    m = special.ndtri((np.arange(1, half + 1) - 0.375) / (n + 0.25))  # negative: lower half
    summ2 = 2.0 * float(m @ m)
    root = 1.0 / math.sqrt(n)
    a1 = _polynomial(_C1, root) - m[0] / math.sqrt(summ2)
    coefficients = np.empty(half)
    if n > 5:
        a2 = -m[1] / math.sqrt(summ2) + _polynomial(_C2, root)
        scale = math.sqrt((summ2 - 2 * m[0] ** 2 - 2 * m[1] ** 2) / (1 - 2 * a1**2 - 2 * a2**2))
        coefficients[:] = -m / scale
        coefficients[1] = a2
    else:
        scale = math.sqrt((summ2 - 2 * m[0] ** 2) / (1 - 2 * a1**2))
        coefficients[:] = -m / scale
    coefficients[0] = a1
    return coefficients


def shapiro_wilk(values: np.ndarray) -> tuple[float, float]:
    """Shapiro-Wilk (W, p) by Royston's approximation, as scipy.stats.shapiro computes it.

    Needs n >= 3 and values that are not all equal. The p of the
    approximation is validated for n <= 5000; above that W is still exact.
    """
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    n = len(ordered)
    if n < 3:
        raise ValueError("Shapiro-Wilk needs at least 3 values")
    spread = ordered[-1] - ordered[0]
    if spread == 0:
        raise ValueError("Shapiro-Wilk needs values that are not all equal")
    half = n // 2
    a = _shapiro_wilk_coefficients(n)
    weights = np.zeros(n)
    weights[:half] = -a
    weights[n - half :] = a[::-1]
    # W is the squared correlation of the ordered values with the weights;
    # 1 - W is formed directly so that W close to 1 keeps its digits.
    x = (ordered - ordered[half]) / spread
    centred_weights = weights - weights.mean()
    centred_x = x - x.mean()
    ssa = float(centred_weights @ centred_weights)
    ssx = float(centred_x @ centred_x)
    sax = float(centred_weights @ centred_x)
    root = math.sqrt(ssa * ssx)
    w = 1.0 - (root - sax) * (root + sax) / (ssa * ssx)
    if n == 3:
        # Exact distribution for three values.
        p = 6.0 / math.pi * (math.asin(math.sqrt(w)) - math.pi / 3.0)
        return w, max(p, 0.0)
    y = math.log(1.0 - w) if w < 1.0 else -math.inf
    if n <= 11:
        gamma = _polynomial(_G, n)
        if y >= gamma:
            return w, _SMALLEST_P
        y = -math.log(gamma - y)
        mean, sd = _polynomial(_C3, n), math.exp(_polynomial(_C4, n))
    else:
        log_n = math.log(n)
        mean, sd = _polynomial(_C5, log_n), math.exp(_polynomial(_C6, log_n))
    return w, float(special.ndtr(-(y - mean) / sd))


# One-factor fit: Levenberg-Marquardt until the projected gradient vanishes.
_FACTOR_TOLERANCE = 1e-12
_FACTOR_MAX_STEPS = 500


def one_factor_loadings(correlations: np.ndarray) -> tuple[np.ndarray, bool]:
    """Loadings of a one-factor model fitted by minimum residuals (minres, ULS).

    Minimises the sum of squared off-diagonal residuals r_ij - l_i * l_j (the
    criterion of psych's default `fa(fm="minres")`), keeping every loading in
    [-1, 1] so that no uniqueness turns negative. Starts from the principal
    axis of the correlation matrix with squared multiple correlations on the
    diagonal, then takes damped Gauss-Newton (Levenberg-Marquardt) steps.
    Returns (loadings, converged); the sign is chosen so the loadings sum >= 0.
    """
    k = len(correlations)
    first, second = np.triu_indices(k, 1)
    target = correlations[first, second]
    rows = np.arange(len(target))
    loadings = np.clip(_principal_axis(correlations), -1.0, 1.0)

    def residuals(values: np.ndarray) -> np.ndarray:
        return values[first] * values[second] - target

    cost = float(residuals(loadings) @ residuals(loadings))
    damping = 1e-3
    for _ in range(_FACTOR_MAX_STEPS):
        jacobian = np.zeros((len(target), k))
        jacobian[rows, first] = loadings[second]
        jacobian[rows, second] = loadings[first]
        gradient = jacobian.T @ residuals(loadings)
        if np.abs(np.where(_blocked(gradient, loadings), 0.0, gradient)).max() < _FACTOR_TOLERANCE:
            return _oriented(loadings), True
        # Loadings held at a bound by the gradient stay there (an active set);
        # the step is solved for the others only.
        free = ~_blocked(gradient, loadings)
        normal = (jacobian.T @ jacobian)[np.ix_(free, free)]
        while True:
            system = normal + damping * (np.diag(np.diag(normal)) + np.eye(len(normal)) * 1e-12)
            candidate = loadings.copy()
            candidate[free] -= np.linalg.solve(system, gradient[free])
            candidate = np.clip(candidate, -1.0, 1.0)
            candidate_cost = float(residuals(candidate) @ residuals(candidate))
            if candidate_cost < cost:
                damping = max(damping / 3.0, 1e-15)
                break
            damping *= 4.0
            if damping > 1e15:
                # No step lowers the cost any more: a minimum up to rounding.
                return _oriented(loadings), True
        settled = np.abs(candidate - loadings).max() < _FACTOR_TOLERANCE
        loadings, cost = candidate, candidate_cost
        if settled:
            return _oriented(loadings), True
    return _oriented(loadings), False


def _blocked(gradient: np.ndarray, loadings: np.ndarray) -> np.ndarray:
    """Loadings at a bound that the descent direction would push past it."""
    return ((loadings >= 1.0) & (gradient < 0)) | ((loadings <= -1.0) & (gradient > 0))
