"""The share of SHS variance due to the participant (docs/design/validation-analysis.md §14.7).

Two estimates of ICC(1) = tau^2 / (tau^2 + sigma^2), tau^2 the variance
between participants and sigma^2 the rest:

- a linear mixed model (statsmodels MixedLM, REML) with a random intercept per
  participant and a fixed intercept, and once more with the system as a fixed
  effect (a participant's share of what the systems leave over). Numbers are
  given only from a fit statsmodels reports as converged;
- the one-way ANOVA estimator (Shrout & Fleiss 1979, ICC(1,1); Searle 1971,
  with n0 for unequal group sizes), (MSB - MSW) / (MSB + (n0 - 1) MSW), with
  its F-based interval: exact under normality when every participant gave the
  same number of evaluations, an approximation otherwise (said so). On
  balanced data REML and ANOVA agree whenever the ANOVA estimate is positive.

No interval is given for the mixed-model ICC: the ANOVA interval is its
stand-in; a profile or parametric bootstrap would cost a refit per draw.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.stats import estimators
from scoring.stats.caveats import NO_EVALUATIONS, TOO_FEW_PARTICIPANTS, gettext_noop, sentence

# What was computed, for the report's reader (a row of its table); English in the
# JSON, translated when shown.
MIXED_INTERCEPT_METHOD = gettext_noop(
    "Linear mixed model by REML: a random intercept per participant and a fixed intercept."
)
MIXED_SYSTEM_METHOD = gettext_noop(
    "Linear mixed model by REML: a random intercept per participant, the system as a fixed effect."
)
ANOVA_METHOD = gettext_noop(
    "ICC(1) by the one-way ANOVA estimator (Shrout & Fleiss 1979; Searle 1971) with its F interval."
)
SHS_CONSTANT = gettext_noop("SHS has zero variance: no variance to share")
NO_REPEATS = gettext_noop(
    "no participant gave two evaluations: the participant's share is not identified"
)
NOT_CONVERGED = gettext_noop("the mixed model did not converge ({detail}): no numbers from it")
FIT_FAILED = gettext_noop("the mixed model could not be fitted: {detail}")
ONE_SYSTEM = gettext_noop("one system only: no system effect to add")
MSW_ZERO = gettext_noop("no variance within participants")
# statsmodels' own words for a fit that ended on tau^2 = 0: converged, reported with it.
_BOUNDARY = "boundary"
_SMALLEST_START = 0.01


def _no_numbers(method: str, reason: str | dict[str, Any], **extra: Any) -> dict[str, Any]:
    """No figures, and why: `reason` a plain sentence or a scoring.stats.caveats.sentence."""
    said = reason if isinstance(reason, dict) else sentence(reason)
    return {
        "method": method,
        "converged": extra.pop("converged", None),
        "icc": None,
        "participant_variance": None,
        "residual_variance": None,
        "fixed_effects": None,
        "reason": said["text"],
        "message": said["message"],
        "params": said["params"],
        "caveats": [],
        **extra,
    }


def mixed_icc(
    shs: NDArray[np.float64],
    groups: NDArray[np.intp],
    exog: NDArray[np.float64],
    method: str,
    ratio: float,
) -> dict[str, Any]:
    """ICC, variance components and convergence of one random-intercept fit.

    The optimiser starts at the least-squares fixed effects and the variance
    ratio tau^2 / sigma^2 = `ratio` (the ANOVA moments): three times faster on
    5,000 participants than statsmodels' own start, and the same optimum.
    """
    from statsmodels.regression.mixed_linear_model import MixedLM
    from statsmodels.tools.sm_exceptions import ConvergenceWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            start = np.linalg.lstsq(exog, shs, rcond=None)[0]
            # statsmodels packs the random part as the Cholesky factor of tau^2 / sigma^2.
            start_params = np.append(start, np.sqrt(ratio))
            fit = MixedLM(shs, exog, groups=groups).fit(reml=True, start_params=start_params)
        except (np.linalg.LinAlgError, ValueError) as error:
            return _no_numbers(method, sentence(FIT_FAILED, detail=str(error)), converged=False)
    caveats = sorted({str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)})
    failed = [text for text in caveats if _BOUNDARY not in text and "Retrying" not in text]
    tau2, sigma2 = float(np.asarray(fit.cov_re)[0, 0]), float(fit.scale)
    if not fit.converged or failed or not np.isfinite([tau2, sigma2]).all():
        detail = "; ".join(failed) or "statsmodels reports no convergence"
        return _no_numbers(method, sentence(NOT_CONVERGED, detail=detail), converged=False)
    return {
        "method": method,
        "converged": True,
        "icc": tau2 / (tau2 + sigma2),
        "participant_variance": tau2,
        "residual_variance": sigma2,
        "fixed_effects": len(fit.fe_params),
        "reason": None,
        "caveats": caveats,
    }


def anova_icc(
    shs: NDArray[np.float64], groups: NDArray[np.intp], confidence: float
) -> dict[str, Any]:
    """ICC(1) by one-way ANOVA with its F interval; `groups` are codes 0..G-1."""
    count = np.bincount(groups).astype(float)
    n, g = len(shs), len(count)
    means = np.bincount(groups, weights=shs) / count
    within = float(((shs - means[groups]) ** 2).sum())
    between = float((count * (means - shs.mean()) ** 2).sum())
    msb, msw = between / (g - 1), within / (n - g)
    n0 = (n - float((count**2).sum()) / n) / (g - 1)
    result = {
        "method": ANOVA_METHOD,
        "msb": msb,
        "msw": msw,
        "n0": n0,
        "df": [g - 1, n - g],
        "balanced": bool((count == count[0]).all()),
    }
    if msw == 0:
        return {**result, "icc": None, "ci95": None, "reason": MSW_ZERO}
    f = msb / msw
    tail = (1.0 - confidence) / 2
    low_f = f / estimators.f_quantile(1.0 - tail, g - 1, n - g)
    high_f = f * estimators.f_quantile(1.0 - tail, n - g, g - 1)
    icc = (msb - msw) / (msb + (n0 - 1) * msw)
    interval = [(low_f - 1) / (low_f + n0 - 1), (high_f - 1) / (high_f + n0 - 1)]
    return {**result, "icc": icc, "ci95": interval, "reason": None}


def participant_share(
    shs: NDArray[Any],
    participants: NDArray[Any],
    systems: NDArray[Any],
    *,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """The mixed-model ICC (with and without system) and the ANOVA ICC of the SHS."""
    shs = np.asarray(shs, dtype=float)
    keys, groups = np.unique(np.asarray(participants, dtype=str), return_inverse=True)
    result: dict[str, Any] = {"n": len(shs), "participants": len(keys)}
    reason = None
    if len(shs) == 0:
        reason = sentence(NO_EVALUATIONS)
    elif len(keys) < 2:
        reason = sentence(TOO_FEW_PARTICIPANTS, needed=2, n=len(keys))
    elif np.ptp(shs) == 0:
        reason = sentence(SHS_CONSTANT)
    elif len(keys) == len(shs):
        reason = sentence(NO_REPEATS)
    if reason is not None:
        return {
            **result,
            "reason": reason["text"],
            "message": reason["message"],
            "params": reason["params"],
            "intercept_only": None,
            "with_system": None,
            "anova": None,
        }
    intercept = np.ones((len(shs), 1))
    result["reason"] = None
    result["anova"] = anova_icc(shs, groups, confidence)
    ratio = _start_ratio(result["anova"])
    result["intercept_only"] = mixed_icc(shs, groups, intercept, MIXED_INTERCEPT_METHOD, ratio)
    system_keys, system_codes = np.unique(np.asarray(systems, dtype=str), return_inverse=True)
    if len(system_keys) < 2:
        result["with_system"] = _no_numbers(MIXED_SYSTEM_METHOD, ONE_SYSTEM)
    else:
        # Treatment coding: the first system (sorted) is the reference.
        dummies = (system_codes[:, None] == np.arange(1, len(system_keys))).astype(float)
        exog = np.column_stack([intercept, dummies])
        result["with_system"] = mixed_icc(shs, groups, exog, MIXED_SYSTEM_METHOD, ratio)
    return result


def _start_ratio(anova: dict[str, Any]) -> float:
    """tau^2 / sigma^2 by the ANOVA moments, kept off the boundary so the optimiser can move."""
    if anova["icc"] is None:
        return _SMALLEST_START
    return float(max((anova["msb"] - anova["msw"]) / anova["n0"] / anova["msw"], _SMALLEST_START))
