"""The falsification verdict of the criterion-validity study (paper 8.2 item 4;
docs/design/criterion-verdicts.md §13.6), decided on the primary analysis of H1 by the
rule of scoring/stats/validity/verdicts.py, and the check of every verdict
against the agreement of the annotators whose measure it rests on.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from scoring.stats.caveats import Warnings, gettext_noop, reason
from scoring.stats.validity.plan import Plan
from scoring.stats.validity.verdicts import (
    FALSIFIED,
    INCONCLUSIVE,
    NOT_COMPUTABLE,
    NOT_FALSIFIED,
    criterion_agreement,
    evaluations_needed,
    falsification_verdict,
)

FALSIFICATION_CRITERION = gettext_noop(
    "If overall SHS fails to correlate with factual precision at r >= .20, the instrument "
    "does not measure what its name implies and should be renamed or restructured."
)
NO_VERDICT = gettext_noop(
    "no verdict: the correlation of SHS with factual precision is not available"
)
NO_INTERVAL = gettext_noop(
    "the correlation has no interval in the primary analysis, so nothing is decided"
)
RULE = (
    "falsified when the whole two-sided (1 - alpha) interval of r in the primary analysis "
    "lies below the threshold; not falsified when it lies at or above it; inconclusive "
    "when it includes the threshold or there is no interval; not computable without r"
)
# Which measure each verdict rests on (H3 adds its predictor when it is annotated).
CRITERIA: dict[str, tuple[str, ...]] = {
    "h1": ("factual_precision",),
    "h2": ("citation_support",),
    "h3": ("factual_precision",),
    "falsification": ("factual_precision",),
}


def falsification(h1_result: dict[str, Any], plan: Plan, w: Warnings) -> dict[str, Any]:
    primary = h1_result[plan.primary]
    r, low, high = primary["r"], primary["ci_low"], primary["ci_high"]
    threshold = plan.falsification_threshold
    decided = falsification_verdict(r, low, high, threshold)
    why = None
    if decided["verdict"] == NOT_COMPUTABLE:
        w.null("falsification.verdict", NO_VERDICT)
        why = _first_reason(w, "h1.") or reason(NO_VERDICT)
    elif low is None or high is None:
        w.note("falsification.verdict", NO_INTERVAL)
        why = reason(NO_INTERVAL)
    needed = None
    if decided["verdict"] == INCONCLUSIVE:
        needed = evaluations_needed(r, threshold, plan.alpha, _design_effect(h1_result, plan))
    return {
        "criterion": FALSIFICATION_CRITERION,
        "threshold": threshold,
        "analysis": plan.primary,
        "r": r,
        "ci_low": low,
        "ci_high": high,
        "level": 1.0 - plan.alpha,
        "n": h1_result["n"],
        "n_participants": h1_result["n_participants"],
        "planned_n": plan.planned_n,
        **decided,
        "decided": decided["verdict"] in (FALSIFIED, NOT_FALSIFIED),
        "reason": why,
        "evaluations_needed": needed,
        "underpowered": h1_result["n"] < plan.planned_n,
        "rule": RULE,
    }


def _first_reason(w: Warnings, prefix: str) -> dict[str, Any] | None:
    for entry in w.entries:
        if entry["figure"].startswith(prefix):
            return {key: entry[key] for key in ("reason", "message", "params")}
    return None


def _design_effect(h1_result: dict[str, Any], plan: Plan) -> float:
    """How much participant clustering inflates the variance of Fisher's z:
    the bootstrap variance over 1 / (n - 3). 1 for the unclustered analysis."""
    test = h1_result["clustered"]["test"]
    n = h1_result["n"]
    if plan.primary != "clustered" or test is None or n <= 3:
        return 1.0
    return float(test["se"] ** 2 * (n - 3))


def agreement_checks(
    agreement: Mapping[str, float | None],
    plan: Plan,
    *verdicts_and_falsification: dict[str, Any],
) -> None:
    """Adds `criterion_agreement` to H1, H2, H3 and the falsification verdict (in
    that order): the agreement of each measure the verdict rests on, with
    `adequate` False below the minimum, so the verdict itself carries it."""
    criteria = dict(CRITERIA)
    if plan.h3_predictor == "presentation":
        criteria["h3"] = ("factual_precision", "presentation")
    for key, result in zip(criteria, verdicts_and_falsification, strict=True):
        result["criterion_agreement"] = [
            criterion_agreement(measure, _finite(agreement.get(measure)), measure in agreement)
            for measure in criteria[key]
        ]
        result["criterion_adequate"] = _adequate(result["criterion_agreement"])


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _adequate(checks: list[dict[str, Any]]) -> bool | None:
    if any(check["adequate"] is False for check in checks):
        return False
    if any(check["adequate"] is None for check in checks):
        return None
    return True
