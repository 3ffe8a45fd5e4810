"""The words a criterion-validity verdict may use, and the exact rule for each
(docs/design/criterion-verdicts.md §13.6). The report, the page, the JSON and
`shs_criterion` all read the verdict from here, so they cannot disagree.

A hypothesis (H1, H2, H3) is
- supported: its test rejects the null in the predicted direction at alpha;
- not supported: the mirror test rejects in the other direction at the same
  alpha (the data speak against the hypothesis);
- inconclusive: neither; the interval still holds both readings;
- not computable: a figure the test needs is missing (the reason is recorded);
- not interpretable as a test: the statistic was computed but cannot fail
  (shown for the record, never read as support).

The falsification criterion (paper 8.2) is falsified when the whole interval
of r lies below the threshold, not falsified when it lies at or above it, and
inconclusive when the interval includes the threshold or there is no
interval.
"""

from __future__ import annotations

import math
from typing import Any

from scoring.stats.estimators import normal_quantile, normal_upper

SUPPORTED = "supported"
NOT_SUPPORTED = "not_supported"
INCONCLUSIVE = "inconclusive"
NOT_COMPUTABLE = "not_computable"
NOT_INTERPRETABLE = "not_interpretable"
FALSIFIED = "falsified"
NOT_FALSIFIED = "not_falsified"

# Below this single-annotator agreement (ICC(2,1)) a criterion measures too
# little of anything for a verdict against it to be read plainly: .50 is the
# lower end of "moderate" in Koo and Li (2016).
MIN_CRITERION_ICC = 0.50

# Power the planning figure of an inconclusive verdict aims at.
PLANNING_POWER = 0.80


def from_tails(p_upper: float | None, p_lower: float | None, alpha: float, sidedness: str) -> str:
    """A hypothesis verdict from the two one-sided p values of its statistic:
    `p_upper` for "larger than the null, as predicted", `p_lower` for "smaller".
    One-sided plans use each at alpha; two-sided plans at alpha / 2 each, which
    is the two-sided test's p < alpha with the sign of the estimate."""
    if p_upper is None or p_lower is None:
        return NOT_COMPUTABLE
    level = alpha if sidedness == "one_sided" else alpha / 2.0
    if p_upper < level:
        return SUPPORTED
    if p_lower < level:
        return NOT_SUPPORTED
    return INCONCLUSIVE


def from_z(z: float | None, alpha: float, sidedness: str) -> str:
    """A verdict from a normal test statistic (positive = as predicted)."""
    if z is None or not math.isfinite(z):
        return NOT_COMPUTABLE
    return from_tails(normal_upper(z), normal_upper(-z), alpha, sidedness)


def all_of(verdicts: list[str]) -> str:
    """A hypothesis that needs every one of several comparisons (H2: SR above
    each other dimension): supported only if all are, not supported as soon as
    one is, not computable as soon as one is."""
    if not verdicts or NOT_COMPUTABLE in verdicts:
        return NOT_COMPUTABLE
    if all(verdict == SUPPORTED for verdict in verdicts):
        return SUPPORTED
    if NOT_SUPPORTED in verdicts:
        return NOT_SUPPORTED
    return INCONCLUSIVE


def falsification_verdict(
    r: float | None, low: float | None, high: float | None, threshold: float
) -> dict[str, Any]:
    """The falsification verdict and, when inconclusive, which side the point
    estimate falls on (`leaning`): said beside the verdict, never instead of it."""
    if r is None:
        return {"verdict": NOT_COMPUTABLE, "leaning": None}
    leaning = "below" if r < threshold else "above"
    if low is None or high is None:
        return {"verdict": INCONCLUSIVE, "leaning": leaning}
    if high < threshold:
        return {"verdict": FALSIFIED, "leaning": None}
    if low >= threshold:
        return {"verdict": NOT_FALSIFIED, "leaning": None}
    return {"verdict": INCONCLUSIVE, "leaning": leaning}


def evaluations_needed(
    r: float | None, threshold: float, alpha: float, design_effect: float = 1.0
) -> int | None:
    """About how many evaluations a study needs for a two-sided (1 - alpha)
    Fisher-z interval to exclude `threshold` with PLANNING_POWER, were the true
    correlation `r`: n = 3 + ((z_{1-alpha/2} + z_power) / |atanh r - atanh t|)^2,
    times the participant-clustering design effect (the clustered variance over
    the independent one). None when r equals the threshold or is not known."""
    if r is None or abs(r) >= 1.0:
        return None
    distance = abs(math.atanh(r) - math.atanh(threshold))
    if distance < 1e-9:
        return None
    z = normal_quantile(1.0 - alpha / 2.0) + normal_quantile(PLANNING_POWER)
    return math.ceil((3.0 + (z / distance) ** 2) * max(1.0, design_effect))


def criterion_agreement(measure: str, icc: float | None, annotated: bool) -> dict[str, Any]:
    """How far the annotators agreed on the criterion a verdict rests on:
    `adequate` is False below MIN_CRITERION_ICC, None when unknown (fewer than
    two annotators rated the same transcripts), True otherwise."""
    if not annotated:
        return {"measure": measure, "icc": None, "minimum": MIN_CRITERION_ICC, "adequate": None}
    adequate = None if icc is None else bool(icc >= MIN_CRITERION_ICC)
    return {"measure": measure, "icc": icc, "minimum": MIN_CRITERION_ICC, "adequate": adequate}
