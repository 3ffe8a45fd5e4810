"""H3 of the criterion-validity study (paper section 8.2; docs/design/criterion.md §13.3):
is the part of SHS that factual precision does not explain predicted by the
Deceptiveness dimension?

Two OLS steps on the evaluations with factual precision and a DP score: the
residual of SHS on factual precision, then that residual on DP. The slope is
reported standardised (times SD(DP) / SD(residual), i.e. the correlation of the
two), with classical SEs and with cluster-robust SEs by participant.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.stats.caveats import Warnings, gettext_noop
from scoring.stats.cluster import ols_slope
from scoring.stats.validity.hypotheses import NO_VARIANCE, enough, enough_participants, part
from scoring.stats.validity.plan import Plan

# H3 predicts a positive slope: a higher DP score (presentation judged less
# deceptive) goes with an SHS above what factual precision predicts, i.e.
# users over-rate output whose errors are confidently framed.
PREDICTED_SIGN = "positive"
CAVEAT = (
    "Deceptiveness (DP) is one of the five dimensions whose mean is the SHS score. "
    "The residual of SHS therefore still contains the DP items, and regressing it on DP "
    "partly regresses DP on itself: a positive slope is expected even if users' "
    "judgements of deceptiveness had nothing to do with factual errors. The test is "
    "biased towards confirming H3; read a confirmation with that in mind."
)


def h3(
    shs: NDArray[np.float64],
    precision: NDArray[np.float64],
    deceptiveness: NDArray[np.float64],
    participants: NDArray[Any],
    plan: Plan,
    w: Warnings,
) -> dict[str, Any]:
    n = len(shs)
    result = part(
        "OLS residual of SHS on factual precision, regressed by OLS on the Deceptiveness "
        "dimension (DP); standardised slope",
        participants,
        plan,
        predicted_sign=PREDICTED_SIGN,
        caveat=CAVEAT,
        first_stage=None,
    )
    residual = _residual(shs, precision, n, w)
    labels = {
        "unclustered": "classical OLS standard error, t with n - 2 df",
        "clustered": (
            "cluster-robust standard error by participant (statsmodels CR1), t with G - 1 df"
        ),
    }
    for analysis, method in labels.items():
        result[analysis] = {"method": method, **dict.fromkeys(_FIGURES), "supported": None}
    if residual is not None:
        result["first_stage"] = residual["first_stage"]
        if not np.ptp(deceptiveness) > 0:
            w.null("h3.beta", NO_VARIANCE, variable="DP", n=n)
        elif np.std(residual["values"]) <= _EXACT * (1.0 + np.std(shs)):
            # SHS is a straight line of factual precision: the residual is rounding noise.
            w.null("h3.beta", NO_VARIANCE, variable="the residual of SHS", n=n)
        else:
            clustered = enough_participants("h3.clustered", participants, w)
            for analysis, groups in (("unclustered", None), ("clustered", participants)):
                if analysis == "unclustered" or clustered:
                    fit = _standardised(residual["values"], deceptiveness, plan, groups)
                    if fit["p"] is None:
                        w.null(f"h3.{analysis}", NO_SE)
                    result[analysis].update(fit)
    result["supported"] = result[plan.primary]["supported"]
    return result


_EXACT = 1e-12
NO_SE = gettext_noop("the standard error of the slope is zero or undefined: no interval, no test")
_FIGURES = ("beta_std", "ci_low", "ci_high", "p", "slope", "se", "t", "df")


def _residual(
    shs: NDArray[np.float64], precision: NDArray[np.float64], n: int, w: Warnings
) -> dict[str, Any] | None:
    if not enough("h3.beta", n, "factual precision and a DP score", w):
        return None
    if not np.ptp(precision) > 0:
        w.null("h3.beta", NO_VARIANCE, variable="factual precision", n=n)
        return None
    slope, intercept = np.polyfit(precision, shs, 1)
    values = shs - (intercept + slope * precision)
    return {"values": values, "first_stage": {"intercept": float(intercept), "slope": float(slope)}}


def _standardised(
    residual: NDArray[np.float64],
    deceptiveness: NDArray[np.float64],
    plan: Plan,
    groups: NDArray[Any] | None,
) -> dict[str, Any]:
    fit = ols_slope(
        residual, deceptiveness, alpha=plan.alpha, sidedness=plan.sidedness, groups=groups
    )
    scale = float(np.std(deceptiveness, ddof=1) / np.std(residual, ddof=1))
    low, high = fit["ci"] or (None, None)
    return {
        "beta_std": fit["slope"] * scale,
        "ci_low": None if low is None else low * scale,
        "ci_high": None if high is None else high * scale,
        "p": fit["p"],
        "slope": fit["slope"],
        "se": fit["se"],
        "t": fit["t"],
        "df": fit["df"],
        "supported": None if fit["p"] is None else bool(fit["p"] < plan.alpha and fit["slope"] > 0),
    }
