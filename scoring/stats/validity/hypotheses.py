"""H1, H2, H3 and the detector correlations of the criterion-validity study
(paper section 8.2; docs/design/criterion.md §13.3), each computed twice: with every
evaluation independent, and clustered by participant (scoring/stats/cluster.py).

Each part works on its own complete cases (the evaluations where every
measure it needs is present) and reports that N. A figure that cannot be
computed is None with an entry in `Warnings`, never NaN.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.instruments.shs import DIMENSION_KEYS
from scoring.stats.caveats import TOO_FEW_PARTICIPANTS, Warnings, gettext_noop
from scoring.stats.cluster import (
    ParticipantBootstrap,
    bootstrap_se,
    fisher_se,
    fisher_se_test,
    n_valid,
    percentile_interval,
)
from scoring.stats.correlations import (
    MIN_N,
    fisher_interval,
    fisher_z,
    p_value,
    pearson,
    spearman,
    steiger_z,
    threshold_test,
    varies,
    zero_test_p,
)
from scoring.stats.validity.plan import Plan
from scoring.stats.validity.verdicts import NOT_COMPUTABLE, all_of, from_z

SOURCE_RELIABILITY = "SR"
DECEPTIVENESS = "DP"
TOO_FEW = gettext_noop("needs at least {needed} evaluations with {measure}, got {n}")
NO_VARIANCE = gettext_noop("{variable} does not vary among the {n} evaluations")
PERFECT = gettext_noop("|r| = 1: Fisher's z and its interval are infinite")
FEW_RESAMPLES = gettext_noop(
    "defined in {valid} of {resamples} resamples, fewer than half: no bootstrap figure"
)
NOT_DECIDED = gettext_noop("{hypothesis} cannot be decided: {missing} is not available")
BOOTSTRAP_METHOD = gettext_noop(
    "Cluster bootstrap by participant: participants resampled with replacement, "
    "all evaluations of a drawn participant kept together; percentile intervals."
)
H1_METHOD = gettext_noop(
    "Pearson's r of SHS with factual precision and Spearman's rho; the test of rho "
    "against the H1 threshold on Fisher's z scale."
)
H1_UNCLUSTERED = gettext_noop(
    "Every evaluation counted as independent: Fisher-z interval and test with n - 3."
)
H1_CLUSTERED = gettext_noop(
    "Cluster bootstrap by participant (participants resampled with replacement, all "
    "evaluations of a drawn participant kept together), percentile intervals; the test "
    "divides the distance of Fisher's z from the threshold by its bootstrap standard error."
)
H2_METHOD = gettext_noop(
    "Pearson's r of each dimension with citation support; Source Reliability against "
    "every other dimension by Steiger's (1980) Z1* for dependent overlapping correlations."
)
H2_UNCLUSTERED = gettext_noop("Every evaluation counted as independent.")
H2_CLUSTERED = gettext_noop(
    "Cluster bootstrap by participant, percentile intervals; Source Reliability against "
    "each dimension: the difference of the two Fisher z's over its bootstrap standard error."
)
STEIGER_METHOD = gettext_noop(
    "Steiger's (1980) Z1* with the pooled r, for dependent overlapping correlations."
)


def part(method: str, participants: NDArray[Any], plan: Plan, **figures: Any) -> dict[str, Any]:
    """The head of a part's result: its method, the N it counts, the primary analysis."""
    return {
        "method": method,
        "n": len(participants),
        "n_participants": len(set(participants)),
        **figures,
        "primary": plan.primary,
    }


def enough(name: str, n: int, measure: str, w: Warnings) -> bool:
    """At least MIN_N evaluations: Fisher's z needs n - 3 > 0."""
    if n < MIN_N:
        w.null(name, TOO_FEW, needed=MIN_N, measure=measure, n=n)
        return False
    return True


def enough_participants(name: str, participants: NDArray[Any], w: Warnings) -> bool:
    """At least MIN_N participants: fewer leave the bootstrap almost nothing to resample."""
    groups = len(set(participants))
    if groups < MIN_N:
        w.null(name, TOO_FEW_PARTICIPANTS, needed=MIN_N, n=groups)
        return False
    return True


def correlation(
    name: str,
    x: NDArray[np.float64],
    y: NDArray[np.float64],
    labels: tuple[str, str],
    w: Warnings,
) -> float | None:
    """Pearson r, or None with the reason: a variable that does not vary."""
    for values, label in ((x, labels[0]), (y, labels[1])):
        if not varies(values):
            w.null(name, NO_VARIANCE, variable=label, n=len(values))
            return None
    return pearson(x, y)


def interval(name: str, r: float | None, n: int, alpha: float, w: Warnings) -> dict[str, Any]:
    bounds = fisher_interval(r, n, alpha)
    if r is not None and bounds is None:
        w.null(f"{name}.ci", PERFECT)
    low, high = bounds or (None, None)
    return {"ci_low": low, "ci_high": high}


def bootstrap_interval(
    name: str, replicates: NDArray[np.float64], alpha: float, w: Warnings
) -> dict[str, Any]:
    bounds = percentile_interval(replicates, alpha)
    if bounds is None:
        w.null(name, FEW_RESAMPLES, valid=n_valid(replicates), resamples=len(replicates))
    low, high = bounds or (None, None)
    return {"ci_low": low, "ci_high": high, "valid_resamples": n_valid(replicates)}


def decided(test: dict[str, Any] | None, plan: Plan) -> str:
    """The verdict of a z test whose positive side is the predicted one
    (scoring/stats/validity/verdicts.py)."""
    return NOT_COMPUTABLE if test is None else from_z(test["z"], plan.alpha, plan.sidedness)


def h1(
    shs: NDArray[np.float64],
    precision: NDArray[np.float64],
    participants: NDArray[Any],
    plan: Plan,
    w: Warnings,
) -> dict[str, Any]:
    """H1: overall SHS correlates with factual precision at rho > h1_threshold."""
    n = len(shs)
    null = "<=" if plan.sidedness == "one_sided" else "="
    result = part(
        H1_METHOD,
        participants,
        plan,
        threshold=plan.h1_threshold,
        null_hypothesis=f"rho {null} {plan.h1_threshold}",
    )
    r = None
    if enough("h1.r", n, "factual precision", w):
        r = correlation("h1.r", shs, precision, ("SHS", "factual precision"), w)
    result["unclustered"] = h1_unclustered(shs, precision, r, plan, w)
    result["clustered"] = h1_clustered(shs, precision, participants, r, plan, w)
    result["verdict"] = result[plan.primary]["verdict"]
    return result


def h1_unclustered(
    shs: NDArray[np.float64],
    precision: NDArray[np.float64],
    r: float | None,
    plan: Plan,
    w: Warnings,
) -> dict[str, Any]:
    n = len(shs)
    test = threshold_test(r, n, plan.h1_threshold, plan.sidedness)
    rank = spearman(shs, precision) if r is not None else None
    return {
        "method": H1_UNCLUSTERED,
        "r": r,
        **interval("h1.unclustered", r, n, plan.alpha, w),
        "p_zero": zero_test_p(r, n),
        "test": test,
        "spearman": rank,
        "verdict": decided(test, plan),
    }


def h1_clustered(
    shs: NDArray[np.float64],
    precision: NDArray[np.float64],
    participants: NDArray[Any],
    r: float | None,
    plan: Plan,
    w: Warnings,
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "method": H1_CLUSTERED,
        "r": r,
        "ci_low": None,
        "ci_high": None,
        "valid_resamples": 0,
        "test": None,
        "spearman": None,
        "verdict": NOT_COMPUTABLE,
    }
    if r is None or not enough_participants("h1.clustered", participants, w):
        return result
    boot = ParticipantBootstrap(participants, seed=plan.seed, resamples=plan.resamples)

    def statistic(rows: NDArray[np.intp]) -> tuple[float | None, float | None]:
        rank = spearman(shs[rows], precision[rows])
        return pearson(shs[rows], precision[rows]), None if rank is None else rank["rho"]

    replicates = boot.replicate(statistic)
    result.update(bootstrap_interval("h1.clustered.ci", replicates[:, 0], plan.alpha, w))
    se = fisher_se(replicates[:, 0])
    test = fisher_se_test(float(fisher_z(r)), math.atanh(plan.h1_threshold), se, plan.sidedness)
    rank = spearman(shs, precision)
    result["test"] = test
    result["spearman"] = {
        "rho": rank and rank["rho"],
        **bootstrap_interval("h1.clustered.spearman", replicates[:, 1], plan.alpha, w),
    }
    result["verdict"] = decided(test, plan)
    return result


def h2(
    dimensions: NDArray[np.float64],
    support: NDArray[np.float64],
    participants: NDArray[Any],
    plan: Plan,
    w: Warnings,
) -> dict[str, Any]:
    """H2: SR correlates with citation support more strongly than every other dimension.

    `dimensions` is (n, 5) in DIMENSION_KEYS order, on the evaluations with
    citation support and all five dimension scores.
    """
    n = len(support)
    result = part(
        H2_METHOD,
        participants,
        plan,
    )
    rs: dict[str, float | None] = dict.fromkeys(DIMENSION_KEYS)
    if enough("h2.r", n, "citation support and all five dimensions", w):
        for i, key in enumerate(DIMENSION_KEYS):
            rs[key] = correlation(
                f"h2.r.{key}", dimensions[:, i], support, (key, "citation support"), w
            )
    result["unclustered"] = h2_unclustered(dimensions, rs, n, plan, w)
    result["clustered"] = h2_clustered(dimensions, support, participants, rs, plan, w)
    result["verdict"] = result[plan.primary]["verdict"]
    return result


def every_comparison(comparisons: dict[str, Any], name: str, w: Warnings) -> str:
    """H2 needs SR above every other dimension (verdicts.all_of)."""
    for key, comparison in comparisons.items():
        if comparison["verdict"] == NOT_COMPUTABLE:
            w.null(name, NOT_DECIDED, hypothesis="H2", missing=f"the comparison of SR with {key}")
            return NOT_COMPUTABLE
    return all_of([comparison["verdict"] for comparison in comparisons.values()])


def h2_unclustered(
    dimensions: NDArray[np.float64], rs: dict[str, float | None], n: int, plan: Plan, w: Warnings
) -> dict[str, Any]:
    correlations = {
        key: {
            "r": r,
            **interval(f"h2.unclustered.{key}", r, n, plan.alpha, w),
            "p": zero_test_p(r, n),
        }
        for key, r in rs.items()
    }
    sr = DIMENSION_KEYS.index(SOURCE_RELIABILITY)
    comparisons = {}
    for i, key in enumerate(DIMENSION_KEYS):
        if key == SOURCE_RELIABILITY:
            continue
        between = pearson(dimensions[:, sr], dimensions[:, i]) if n >= MIN_N else None
        sr_r, other_r = rs[SOURCE_RELIABILITY], rs[key]
        z = None
        if sr_r is not None and other_r is not None and between is not None:
            z = steiger_z(sr_r, other_r, between, n)
        p = None if z is None else p_value(z, plan.sidedness)
        comparisons[key] = {
            "method": STEIGER_METHOD,
            "r_sr": rs[SOURCE_RELIABILITY],
            "r_other": rs[key],
            "r_between": between,
            "z": z,
            "p": p,
            "verdict": from_z(z, plan.alpha, plan.sidedness),
        }
    return {
        "method": H2_UNCLUSTERED,
        "correlations": correlations,
        "comparisons": comparisons,
        "verdict": every_comparison(comparisons, "h2.unclustered.verdict", w),
    }


def h2_clustered(
    dimensions: NDArray[np.float64],
    support: NDArray[np.float64],
    participants: NDArray[Any],
    rs: dict[str, float | None],
    plan: Plan,
    w: Warnings,
) -> dict[str, Any]:
    others = [key for key in DIMENSION_KEYS if key != SOURCE_RELIABILITY]
    empty = {"verdict": NOT_COMPUTABLE, "difference": None, "z": None, "p": None}
    result: dict[str, Any] = {
        "method": H2_CLUSTERED,
        "correlations": {key: {"r": r, "ci_low": None, "ci_high": None} for key, r in rs.items()},
        "comparisons": {key: dict(empty) for key in others},
        "verdict": NOT_COMPUTABLE,
    }
    if all(r is None for r in rs.values()):
        w.null("h2.clustered", NOT_DECIDED, hypothesis="H2", missing="any correlation")
        return result
    if not enough_participants("h2.clustered", participants, w):
        return result
    boot = ParticipantBootstrap(participants, seed=plan.seed, resamples=plan.resamples)
    replicates = boot.replicate(
        lambda rows: [
            pearson(dimensions[rows, i], support[rows]) for i in range(len(DIMENSION_KEYS))
        ]
    )
    for i, key in enumerate(DIMENSION_KEYS):
        if rs[key] is not None:
            name = f"h2.clustered.{key}"
            result["correlations"][key].update(
                bootstrap_interval(name, replicates[:, i], plan.alpha, w)
            )
    sr = DIMENSION_KEYS.index(SOURCE_RELIABILITY)
    for key in others:
        i = DIMENSION_KEYS.index(key)
        if rs[SOURCE_RELIABILITY] is None or rs[key] is None:
            continue
        result["comparisons"][key] = sr_comparison(
            replicates[:, sr], replicates[:, i], rs, key, plan, w
        )
    result["verdict"] = every_comparison(result["comparisons"], "h2.clustered.verdict", w)
    return result


def sr_comparison(
    sr_reps: NDArray[np.float64],
    other_reps: NDArray[np.float64],
    rs: dict[str, float | None],
    key: str,
    plan: Plan,
    w: Warnings,
) -> dict[str, Any]:
    sr_r, other_r = rs[SOURCE_RELIABILITY], rs[key]
    # Asked only where both correlations are known (h2_clustered).
    assert sr_r is not None and other_r is not None
    difference = sr_r - other_r
    z_difference = fisher_z(np.array([sr_r]))[0] - fisher_z(np.array([other_r]))[0]
    se = bootstrap_se(fisher_z(sr_reps) - fisher_z(other_reps))
    test = fisher_se_test(float(z_difference), 0.0, se, plan.sidedness)
    return {
        "difference": difference,
        **bootstrap_interval(f"h2.clustered.{key}.difference", sr_reps - other_reps, plan.alpha, w),
        "z": test and test["z"],
        "p": test and test["p"],
        "se": test and test["se"],
        "verdict": decided(test, plan),
    }
