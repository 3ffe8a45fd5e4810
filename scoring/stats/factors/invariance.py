"""Measurement invariance of the five-factor SHS model across groups
(docs/design/validation-analysis.md §14.6, paper 8.3): configural (same pattern), metric (equal
loadings) and scalar (equal loadings and intercepts) multi-group models,
compared step by step under Cheung & Rensvold's (2002) rule that CFI may drop
by at most .01.

Why not semopy: `semopy.multigroup` fits each group on its own and returns
the separate results; parameter labels constrain parameters only inside one
model, and `ModelMeans` has no notion of groups, so nothing can be held equal
across groups. The multi-group ML fit is therefore written out in
scoring.stats.factors.likelihood: the group-size-weighted sum of the groups' ML discrepancies
(with the mean structure for the scalar model) is minimised by scipy's
L-BFGS-B with its analytic gradient; chi-square = sum of N_g * F_g, as in
lavaan. The configural model is the separate fits added up, which the tests
check against semopy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.stats.caveats import gettext_noop, sentence
from scoring.stats.factors.cfa import keyed_answers, shs_layout
from scoring.stats.factors.fit import data_problem_sentence, problem
from scoring.stats.factors.likelihood import (
    Moments,
    Pattern,
    chi2_upper,
    fit_indices,
    independence_chi2,
    minimise,
)
from scoring.stats.factors.model import Layout, lower_bounds, patterns, start_values

# Below this many evaluations a group's ten-item covariance matrix is too
# noisy for its two-item factors: ML then often stops at a Heywood case.
MIN_GROUP = 100
MAX_CFI_DROP = 0.01  # Cheung & Rensvold (2002)
STEPS = {"configural": (), "metric": ("loadings",), "scalar": ("loadings", "intercepts")}
BOUNDARY = 1e-6

# {group} is the group's label alone, so that a report can name it in its own language.
TOO_SMALL = gettext_noop("too small to fit: {group} (n = {n})")
LEFT_OUT = gettext_noop("left out: {group} (n = {n}): {problem}")
GROUP_HEYWOOD = gettext_noop(
    "Improper solution (Heywood case): a variance reached zero in group {group}."
)
GROUP_NOT_POSITIVE_DEFINITE = gettext_noop(
    "Improper solution: the factor covariance matrix of group {group} is not positive definite."
)
STEP_NOT_CONVERGED = gettext_noop("The {step} model did not converge; no figures are reported.")
STEP_IMPROPER = gettext_noop("{step} model: {problem} No figures are reported.")
NO_STEP_COMPARISON = gettext_noop("No {step} comparison: a model in it has no usable fit.")
NOT_JUDGED = gettext_noop("{step} invariance not judged: the step before it does not hold.")
HOLDS = gettext_noop(
    "{step} invariance holds: CFI changes by {delta_cfi} (within the .01 drop allowed by "
    "Cheung & Rensvold 2002)."
)
DOES_NOT_HOLD = gettext_noop(
    "{step} invariance does not hold: CFI changes by {delta_cfi} (beyond the .01 drop "
    "allowed by Cheung & Rensvold 2002)."
)
TOO_FEW_GROUPS = gettext_noop(
    "Invariance needs at least two groups of {needed} or more evaluations by {grouping}; "
    "{found} found, so nothing was fitted."
)
# The step names as a sentence writes them (also marked for translation).
STEP_NAMES = {
    "configural": gettext_noop("configural"),
    "metric": gettext_noop("metric"),
    "scalar": gettext_noop("scalar"),
}
CAPITALISED = {
    "configural": gettext_noop("Configural"),
    "metric": gettext_noop("Metric"),
    "scalar": gettext_noop("Scalar"),
}

# What was computed, for the report's reader; English in the JSON, translated when shown.
METHOD = gettext_noop(
    "Multi-group confirmatory factor analysis of the five-factor model by maximum likelihood "
    "on the five-point answers (even-numbered items reversed): configural (the same factors "
    "in every group), metric (loadings equal across groups), scalar (loadings and item "
    "intercepts equal; the first group's factor means fixed at 0, the others' free). "
    "Chi-square is the sum over the groups of each group's N times its ML discrepancy; CFI "
    "against the independence model of every group; RMSEA computed with N and multiplied by "
    "the square root of the number of groups, as in lavaan (Rosseel 2012). A step holds when "
    "CFI drops by at most .01 from the step before (Cheung & Rensvold 2002); the chi-square "
    "difference is reported beside it but becomes significant at large N even for trivial "
    "differences."
)


# A group's label and its rows.
Group = tuple[str, NDArray[np.float64]]
# A group left out: its label, its size and (if it was big enough) why.
LeftOut = tuple[str, int, dict[str, Any]]


def _split(
    data: NDArray[np.float64], groups: NDArray[Any], layout: Layout, min_group: int
) -> tuple[list[Group], list[tuple[str, int]], list[LeftOut]]:
    """Groups big and sound enough to fit, those too small, and those that cannot be fitted."""
    labels, counts = np.unique(groups, return_counts=True)
    order = sorted(zip(labels, counts, strict=True), key=lambda lc: (-lc[1], str(lc[0])))
    kept: list[Group] = []
    too_small: list[tuple[str, int]] = []
    excluded: list[LeftOut] = []
    for label, count in order:
        if count < min_group:
            too_small.append((str(label), int(count)))
            continue
        rows = data[groups == label]
        found = data_problem_sentence(rows, layout)
        if found:
            excluded.append((str(label), int(count), found))
        else:
            kept.append((str(label), rows))
    return kept, too_small, excluded


def _improper(
    built: list[Pattern], x: NDArray[np.float64], moments: list[Moments], labels: list[str]
) -> dict[str, Any] | None:
    """The first group whose solution is improper, named, as a `problem(...)`; or None."""
    for pattern, group, label in zip(built, moments, labels, strict=True):
        _, phi, theta = pattern.matrices(x)
        if np.any(theta <= BOUNDARY * np.diag(group.cov)) or np.any(np.diag(phi) <= BOUNDARY):
            return problem(GROUP_HEYWOOD, group=label)
        scale = np.sqrt(np.diag(phi))
        if np.linalg.eigvalsh(phi / np.outer(scale, scale)).min() <= BOUNDARY:
            return problem(GROUP_NOT_POSITIVE_DEFINITE, group=label)
    return None


def fit_step(
    layout: Layout, moments: list[Moments], step: str, labels: list[str] | None = None
) -> dict[str, Any]:
    """One multi-group model: fit figures, or a `problem` sentence and no figures.
    `labels` name the groups in a problem (by default "1", "2", ...)."""
    labels = labels or [str(index + 1) for index in range(len(moments))]
    steps = STEPS[step]
    built, kinds = patterns(layout, len(moments), steps)
    x, f_ml, converged = minimise(
        built, moments, start_values(built, kinds, moments), lower_bounds(kinds)
    )
    if not converged:
        return {"converged": False, **problem(STEP_NOT_CONVERGED, step=STEP_NAMES[step])}
    found = _improper(built, x, moments, labels)
    if found:
        return {
            "converged": True,
            **problem(STEP_IMPROPER, step=CAPITALISED[step], problem=found),
        }
    p, g = len(layout.items), len(moments)
    n = sum(group.n for group in moments)
    counted = layout.moments_count + (p if "intercepts" in steps else 0)
    chi2, df = n * f_ml, g * counted - len(kinds)
    indices = fit_indices(chi2, df, independence_chi2(moments), g * p * (p - 1) // 2, n, g)
    return {
        "converged": True,
        "problem": None,
        "chi2": float(chi2),
        "df": int(df),
        "p": chi2_upper(chi2, df),
        **indices,
    }


def compare(
    earlier: dict[str, Any], later: dict[str, Any], step: str, earlier_holds: bool | None
) -> dict[str, Any]:
    """The change from the step before, with its verdict under the CFI rule."""
    if earlier.get("problem") or later.get("problem"):
        return {**problem(NO_STEP_COMPARISON, step=STEP_NAMES[step]), "holds": None}
    delta_chi2, delta_df = later["chi2"] - earlier["chi2"], later["df"] - earlier["df"]
    delta_cfi = later["cfi"] - earlier["cfi"]
    holds = -delta_cfi <= MAX_CFI_DROP
    if earlier_holds is False:
        said = sentence(NOT_JUDGED, step=CAPITALISED[step])
        holds = None
    else:
        template = HOLDS if holds else DOES_NOT_HOLD
        said = sentence(template, step=CAPITALISED[step], delta_cfi=round(float(delta_cfi), 3))
    return {
        "problem": None,
        "delta_chi2": float(delta_chi2),
        "delta_df": int(delta_df),
        "p": chi2_upper(max(delta_chi2, 0.0), delta_df),
        "delta_cfi": float(delta_cfi),
        "delta_rmsea": float(later["rmsea"] - earlier["rmsea"]),
        "holds": holds,
        "verdict": said["text"],
        "message": said["message"],
        "params": said["params"],
    }


def fit_invariance(
    data: NDArray[Any], groups: NDArray[Any], layout: Layout, *, grouping: str, min_group: int
) -> dict[str, Any]:
    """Configural, metric and scalar models of `layout` across `groups`, any items."""
    data, groups = np.asarray(data, dtype=float), np.asarray(groups)
    if len(groups) != len(data):
        raise ValueError(f"{len(data)} rows of answers but {len(groups)} group labels")
    kept, too_small, excluded = _split(data, groups, layout, min_group)
    notes = [sentence(TOO_SMALL, group=label, n=n) for label, n in too_small]
    notes += [sentence(LEFT_OUT, group=label, n=n, problem=found) for label, n, found in excluded]
    result = {
        "method": METHOD,
        "estimator": "ML",
        "grouping": grouping,
        "n": int(sum(len(rows) for _, rows in kept)),
        "groups": [{"label": label, "n": len(rows)} for label, rows in kept],
        # The English text for the JSON's reader; `too_small_groups` for a report,
        # which names each group in its own language.
        "too_small": [f"{label} (n={n})" for label, n in too_small],
        "too_small_groups": [{"label": label, "n": n} for label, n in too_small],
        "excluded": [f"{label} (n={n}): {found['problem']}" for label, n, found in excluded],
        "warnings": [note["text"] for note in notes],
        "warning_sentences": notes,
    }
    if len(kept) < 2:
        return {
            **result,
            **problem(TOO_FEW_GROUPS, needed=min_group, grouping=grouping, found=len(kept)),
            "models": {},
            "differences": {},
        }
    moments = [Moments.of(rows) for _, rows in kept]
    labels = [label for label, _ in kept]
    models = {step: fit_step(layout, moments, step, labels) for step in STEPS}
    metric = compare(models["configural"], models["metric"], "metric", None)
    scalar = compare(models["metric"], models["scalar"], "scalar", metric["holds"])
    return {
        **result,
        "problem": None,
        "models": models,
        "differences": {"metric": metric, "scalar": scalar},
    }


def invariance(
    answers: NDArray[Any], groups: NDArray[Any], *, grouping: str, min_group: int = MIN_GROUP
) -> dict[str, Any]:
    """The SHS five-factor model's invariance across `groups` (e.g. languages)."""
    return fit_invariance(
        keyed_answers(answers), groups, shs_layout("five"), grouping=grouping, min_group=min_group
    )
