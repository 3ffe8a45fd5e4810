"""Participant-clustered inference for the criterion-validity study
(docs/design/criterion.md §13.3).

Each participant rates two systems, so their two evaluations are not
independent. Two remedies, both on plain arrays:

- the cluster bootstrap: resample participants with replacement, keeping all
  of a participant's evaluations together, and recompute the statistic;
- cluster-robust standard errors of an OLS slope (statsmodels, imported inside
  the function that uses it, as in scoring/stats/estimators.py).

The draws are reproducible: participants are indexed in sorted order of their
key, and resample b takes row b of `Generator(seed).integers(0, G, size=(B, G))`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.stats.caveats import gettext_noop, reason
from scoring.stats.correlations import fisher_z, p_value

# A percentile interval or a bootstrap SE needs the statistic in at least this
# share of the resamples; below it the resamples describe a different sample.
MIN_VALID_SHARE = 0.5


class ParticipantBootstrap:
    """The resamples of one set of rows, drawn once and reused by every statistic on them."""

    def __init__(
        self, participants: NDArray[Any] | Sequence[str], *, seed: int, resamples: int
    ) -> None:
        keys, self.cluster_of_row = np.unique(
            np.asarray(participants, dtype=str), return_inverse=True
        )
        self.n_participants = len(keys)
        rng = np.random.default_rng(seed)
        self.draws = rng.integers(
            0, max(self.n_participants, 1), size=(resamples, self.n_participants)
        )
        self.seed = seed
        self.resamples = resamples

    def rows(self, b: int) -> NDArray[np.intp]:
        """Row positions of resample b: every row of a drawn participant, once per draw."""
        counts = np.bincount(self.draws[b], minlength=self.n_participants)
        return np.repeat(np.arange(len(self.cluster_of_row)), counts[self.cluster_of_row])

    def weights(self, start: int, stop: int) -> NDArray[np.float64]:
        """(resamples start..stop-1, participants): how often each participant was drawn,
        by one bincount; a statistic of sums is then weights @ per-participant sums."""
        draws = self.draws[start:stop]
        offsets = draws + self.n_participants * np.arange(len(draws))[:, None]
        counts = np.bincount(offsets.ravel(), minlength=draws.size).reshape(draws.shape)
        return counts.astype(float)

    def replicate(
        self, statistic: Callable[[NDArray[np.intp]], Sequence[float | None]]
    ) -> NDArray[np.float64]:
        """(resamples, m) replicates of a statistic of m figures; NaN where it is None."""
        values = [statistic(self.rows(b)) for b in range(self.resamples)]
        return np.array([[np.nan if v is None else v for v in row] for row in values], dtype=float)


def valid(replicates: NDArray[np.float64]) -> NDArray[np.float64]:
    finite = replicates[np.isfinite(replicates)]
    return finite if len(finite) >= MIN_VALID_SHARE * max(len(replicates), 1) else np.empty(0)


def percentile_interval(
    replicates: NDArray[np.float64], alpha: float
) -> tuple[float, float] | None:
    """The alpha/2 and 1 - alpha/2 quantiles of the finite replicates (numpy's linear rule)."""
    finite = valid(replicates)
    if len(finite) == 0:
        return None
    low, high = np.quantile(finite, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(low), float(high)


def bootstrap_se(replicates: NDArray[np.float64]) -> float | None:
    """SD (n - 1) of the finite replicates; None when too few or all equal."""
    finite = valid(replicates)
    if len(finite) < 2:
        return None
    se = float(np.std(finite, ddof=1))
    return se if se > 0.0 else None


def fisher_se(replicates: NDArray[np.float64]) -> float | None:
    """The bootstrap SE on the Fisher-z scale (resamples with |r| = 1 left out)."""
    return bootstrap_se(fisher_z(replicates))


def fisher_se_test(
    estimate_z: float, null_z: float, se: float | None, sidedness: str
) -> dict[str, Any] | None:
    """z = (estimate - null) / bootstrap SE, both on the Fisher-z scale."""
    if se is None or not math.isfinite(estimate_z):
        return None
    z = (estimate_z - null_z) / se
    return {"z": z, "p": p_value(z, sidedness), "se": se}


def n_valid(replicates: NDArray[np.float64]) -> int:
    return int(np.isfinite(replicates).sum())


def _linear_quantile(ordered: NDArray[np.float64], q: float) -> float:
    """numpy's linear rule on sorted values that may hold -inf and +inf: between a
    finite value and an infinite one the quantile is the infinite one (numpy itself
    gives NaN there)."""
    position = (len(ordered) - 1) * q
    below, above = int(math.floor(position)), int(math.ceil(position))
    low, high = float(ordered[below]), float(ordered[above])
    fraction = position - below
    if fraction == 0.0 or low == high:
        return low
    if math.isinf(low) and math.isinf(high):
        return high if fraction >= 0.5 else low
    if math.isinf(low) or math.isinf(high):
        return low if math.isinf(low) else high
    return low + fraction * (high - low)


def unbounded_percentile_interval(
    replicates: NDArray[np.float64], alpha: float
) -> tuple[float, float] | None:
    """`percentile_interval` where a replicate of -inf or +inf is a value at its end of
    the order, not a missing one: a figure without bound in that resample (a
    correlation corrected by a reliability not above 0) must widen the interval, and
    dropping it would narrow it. NaN is no value; too few values give None."""
    values = np.asarray(replicates, dtype=float)
    values = np.sort(values[~np.isnan(values)])
    if len(values) == 0 or len(values) < MIN_VALID_SHARE * max(len(replicates), 1):
        return None
    return _linear_quantile(values, alpha / 2.0), _linear_quantile(values, 1.0 - alpha / 2.0)


def ols_slope(
    y: NDArray[Any],
    x: NDArray[Any],
    *,
    alpha: float,
    sidedness: str,
    groups: NDArray[Any] | Sequence[str] | None = None,
) -> dict[str, Any]:
    """Slope of y on x (with intercept) by OLS: estimate, SE, (1 - alpha) CI, t, df, p.

    With `groups` the SE is statsmodels' cluster-robust one (CR1, its small-sample
    correction) and t has G - 1 degrees of freedom; without, the classical SE with
    n - 2. One-sided p tests slope > 0.
    """
    from scipy.stats import t as t_distribution
    from statsmodels.regression.linear_model import OLS

    x = np.asarray(x, dtype=float)
    model = OLS(np.asarray(y, dtype=float), np.column_stack([np.ones_like(x), x]))
    if groups is None:
        fit, df = model.fit(), len(y) - 2
    else:
        codes = np.unique(np.asarray(groups, dtype=str), return_inverse=True)[1]
        fit = model.fit(cov_type="cluster", cov_kwds={"groups": codes}, use_t=True)
        df = int(codes.max()) if len(codes) else 0
    slope, se = float(fit.params[1]), float(fit.bse[1])
    if not (math.isfinite(se) and se > 0.0 and df > 0):
        return {"slope": slope, "se": None, "ci": None, "t": None, "df": df, "p": None}
    t = slope / se
    half = float(t_distribution.ppf(1.0 - alpha / 2.0, df)) * se
    upper = float(t_distribution.sf(t, df))
    p = upper if sidedness == "one_sided" else min(1.0, 2.0 * float(t_distribution.sf(abs(t), df)))
    return {"slope": slope, "se": se, "ci": (slope - half, slope + half), "t": t, "df": df, "p": p}


FEW_VALID = gettext_noop("fewer than half of the resamples ({resamples}) gave a value")


def clustered_record(
    bounds: tuple[float, float] | None,
    replicates: NDArray[np.float64],
    method: str,
    drawn: dict[str, Any],
) -> dict[str, Any]:
    """A clustered interval as the reports hold it: the bounds (or why none), how
    the resamples were drawn (`drawn`: seed, resamples, clusters) and how many gave
    a value."""
    interval = None if bounds is None else [float(bounds[0]), float(bounds[1])]
    why = None if interval else reason(FEW_VALID, resamples=len(replicates))
    return {
        "interval": interval,
        "method": method,
        **drawn,
        "valid_replicates": n_valid(replicates),
        "reason": None if why is None else why["reason"],
        "message": None if why is None else why["message"],
        "params": None if why is None else why["params"],
    }
