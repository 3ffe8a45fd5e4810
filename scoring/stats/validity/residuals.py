"""H3 of the criterion-validity study (paper section 8.2; docs/design/criterion-verdicts.md §13.7):
is the part of users' judgement that factual precision does not explain
predicted by how the output was presented?

Two forms, chosen in the pre-registration (`Plan.h3_predictor`):

- "DP", the Deceptiveness dimension. DP is one fifth of the SHS score, so the
  outcome is the mean of the four other dimensions; and because every
  dimension shares users' overall impression, DP predicts that outcome's
  residual even when it plays no special role. The test therefore compares
  the observed standardised slope with its distribution when factual
  precision carries no information (scoring/stats/validity/permutation.py):
  H3 is supported only when removing what factual precision explains leaves
  DP *more* strongly related to the rest than chance would.
- "presentation", an annotated measure of the transcript (confident framing of
  errors, absence of hedging; paper 8.2, 9.2). It is not part of SHS, so the
  residual of SHS itself on factual precision is regressed on it, and the
  slope's own t test (classical, and cluster-robust by participant) decides.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.instruments.shs import DIMENSION_KEYS
from scoring.stats.caveats import Warnings, gettext_noop
from scoring.stats.cluster import ols_slope
from scoring.stats.correlations import varies
from scoring.stats.validity.hypotheses import (
    DECEPTIVENESS,
    NO_VARIANCE,
    enough,
    enough_participants,
    part,
)
from scoring.stats.validity.permutation import (
    evaluation_orders,
    participant_orders,
    permutation_null,
    residual_correlations,
    tails,
)
from scoring.stats.validity.plan import Plan
from scoring.stats.validity.verdicts import NOT_COMPUTABLE, NOT_INTERPRETABLE, from_tails

# H3 predicts a positive slope: output judged less deceptive (a higher DP), or
# errors framed more confidently, goes with a judgement above what factual
# precision predicts, i.e. users over-rate confidently presented output.
PREDICTED_SIGN = "positive"
OTHER_DIMENSIONS = tuple(key for key in DIMENSION_KEYS if key != DECEPTIVENESS)
DP_METHOD = gettext_noop(
    "The mean of the four dimensions other than Deceptiveness (DP) is regressed on factual "
    "precision (OLS); the correlation of its residual with DP (the standardised slope) is "
    "compared with its distribution under permutations of factual precision, which keep "
    "everything but the information factual precision carries."
)
PRESENTATION_METHOD = gettext_noop(
    "The residual of overall SHS on factual precision (OLS) is regressed by OLS on the "
    "annotated presentation measure; standardised slope and its t test."
)
DP_ANALYSES = {
    "unclustered": gettext_noop("Factual precision permuted across evaluations."),
    "clustered": gettext_noop(
        "Factual precision permuted as whole participants' blocks, among participants "
        "with as many evaluations; interval of the slope with cluster-robust standard "
        "errors by participant (CR1)."
    ),
}
PRESENTATION_ANALYSES = {
    "unclustered": gettext_noop("Classical OLS standard error, t with n - 2 df."),
    "clustered": gettext_noop(
        "Cluster-robust standard error by participant (CR1), t with G - 1 df."
    ),
}
NO_SE = gettext_noop("the standard error of the slope is zero or undefined: no interval, no test")
_EXACT = 1e-12
_FIGURES = ("beta_std", "ci_low", "ci_high", "p", "slope", "se", "t", "df")


def h3(
    shs: NDArray[np.float64],
    precision: NDArray[np.float64],
    predictor: NDArray[np.float64],
    participants: NDArray[Any],
    plan: Plan,
    w: Warnings,
) -> dict[str, Any]:
    """`shs` is the outcome: the mean of OTHER_DIMENSIONS when the predictor is
    DP, overall SHS when it is the presentation measure."""
    by_dp = plan.h3_predictor == DECEPTIVENESS
    label = "DP" if by_dp else "presentation"
    result = part(
        DP_METHOD if by_dp else PRESENTATION_METHOD,
        participants,
        plan,
        predictor=plan.h3_predictor,
        outcome="mean of FA, SR, LC, RG" if by_dp else "SHS",
        predicted_sign=PREDICTED_SIGN,
        first_stage=None,
    )
    methods = DP_ANALYSES if by_dp else PRESENTATION_ANALYSES
    for analysis, method in methods.items():
        result[analysis] = {"method": method, **dict.fromkeys(_FIGURES), "verdict": NOT_COMPUTABLE}
    residual = _residual(shs, precision, label, w)
    if residual is not None:
        result["first_stage"] = residual["first_stage"]
        if _testable(shs, residual["values"], predictor, label, w):
            clustered = enough_participants("h3.clustered", participants, w)
            for analysis in ("unclustered", "clustered"):
                if analysis == "unclustered" or clustered:
                    groups = participants if analysis == "clustered" else None
                    fit = _standardised(residual["values"], predictor, plan, groups)
                    if fit["p"] is None:
                        w.null(f"h3.{analysis}", NO_SE)
                    if by_dp:
                        fit.update(_dp_test(shs, precision, predictor, groups, fit, plan))
                    result[analysis].update(fit)
    result["verdict"] = result[plan.primary]["verdict"]
    return result


def _residual(
    outcome: NDArray[np.float64], precision: NDArray[np.float64], label: str, w: Warnings
) -> dict[str, Any] | None:
    n = len(outcome)
    if not enough("h3.beta", n, f"factual precision and {label}", w):
        return None
    if not varies(precision):
        w.null("h3.beta", NO_VARIANCE, variable="factual precision", n=n)
        return None
    slope, intercept = np.polyfit(precision, outcome, 1)
    values = outcome - (intercept + slope * precision)
    return {"values": values, "first_stage": {"intercept": float(intercept), "slope": float(slope)}}


def _testable(
    outcome: NDArray[np.float64],
    residual: NDArray[np.float64],
    predictor: NDArray[np.float64],
    label: str,
    w: Warnings,
) -> bool:
    if not varies(predictor):
        w.null("h3.beta", NO_VARIANCE, variable=label, n=len(outcome))
        return False
    if np.std(residual) <= _EXACT * (1.0 + np.std(outcome)):
        # The outcome is a straight line of factual precision: the residual is rounding noise.
        w.null("h3.beta", NO_VARIANCE, variable="the residual", n=len(outcome))
        return False
    return True


def _standardised(
    residual: NDArray[np.float64],
    predictor: NDArray[np.float64],
    plan: Plan,
    groups: NDArray[Any] | None,
) -> dict[str, Any]:
    fit = ols_slope(residual, predictor, alpha=plan.alpha, sidedness=plan.sidedness, groups=groups)
    scale = float(np.std(predictor, ddof=1) / np.std(residual, ddof=1))
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
        "verdict": _t_verdict(fit["t"], fit["df"], plan),
    }


def _t_verdict(t: float | None, df: int, plan: Plan) -> str:
    from scipy.stats import t as t_distribution

    if t is None:
        return NOT_COMPUTABLE
    upper, lower = float(t_distribution.sf(t, df)), float(t_distribution.cdf(t, df))
    return from_tails(upper, lower, plan.alpha, plan.sidedness)


def _dp_test(
    outcome: NDArray[np.float64],
    precision: NDArray[np.float64],
    deceptiveness: NDArray[np.float64],
    groups: NDArray[Any] | None,
    fit: dict[str, Any],
    plan: Plan,
) -> dict[str, Any]:
    """The permutation test of the DP form. The slope's own t and p stay in the
    JSON for the record, marked: DP shares users' overall impression with the
    other dimensions, so that t test rejects whenever the dimensions correlate."""
    observed = float(residual_correlations(outcome, precision[None, :], deceptiveness)[0])
    if groups is None:
        orders = evaluation_orders(len(outcome), plan.resamples, plan.seed)
    else:
        orders = participant_orders(groups, plan.resamples, plan.seed)
    null = permutation_null(outcome, precision, deceptiveness, orders)
    upper, lower = tails(observed, null)
    level = plan.alpha / 2.0
    low, high = np.quantile(null[np.isfinite(null)], [level, 1.0 - level])
    return {
        "slope_test": NOT_INTERPRETABLE,
        "null": {
            "mean": float(np.mean(null)),
            "low": float(low),
            "high": float(high),
            "permutations": len(null),
        },
        "p_permutation": upper
        if plan.sidedness == "one_sided"
        else min(1.0, 2.0 * min(upper, lower)),
        "verdict": from_tails(upper, lower, plan.alpha, plan.sidedness),
    }
