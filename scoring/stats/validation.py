"""The validation programme's analyses in one call (docs/design/validation-analysis.md §14.8):
CFA, invariance across languages and the coordinator's grouping, convergent
and discriminant validity, test-retest and the nested-data statistics, each
only where the data holds what it needs. Used by the study report job and by
`shs_analyze`; each part is its own module."""

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.stats.factors.cfa import cfa_report
from scoring.stats.factors.invariance import invariance
from scoring.stats.nested.clustered import nested_report
from scoring.stats.retest.stability import retest_report
from scoring.stats.validation_data import ValidationData
from scoring.stats.validity.convergent import convergent_validity

PARTS = ("cfa", "invariance", "convergent", "retest", "nested")
DEFAULT_RESAMPLES = 2000
# Steps reported to a progress bar: one per part, and the bootstrap's own.
BOOTSTRAP_STEPS = 10
PROGRESS_STEPS = len(PARTS) + BOOTSTRAP_STEPS

Progress = Callable[[], None]
# A part's analysis: (data, resamples, seed, tick) -> its figures.
Runner = Callable[[ValidationData, int, int, Progress], dict[str, Any]]


def validation_analysis(
    data: ValidationData,
    *,
    parts: tuple[str, ...] = PARTS,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    advance: Progress | None = None,
) -> dict[str, Any]:
    """Every requested part that the data supports; a part without its data is
    absent, with the reason under "skipped" (never an empty table)."""
    tick = advance or (lambda: None)
    result: dict[str, Any] = {
        "n": data.n,
        "participants": int(len(np.unique(data.participant))),
        "skipped": {},
    }
    for part in PARTS:
        if part in parts:
            reason = _missing(part, data)
            if reason:
                result["skipped"][part] = reason
            else:
                result[part] = _RUNNERS[part](data, resamples, seed, tick)
        tick()
    return result


def _missing(part: str, data: ValidationData) -> str:
    if part == "convergent" and not data.companion_scores:
        return "no companion scales were given"
    if part == "retest" and (data.retest is None or data.retest.n == 0):
        return "no retest pairs"
    if part == "invariance" and len(_groupings(data)) == 0:
        return "one language and no demographic grouping"
    return ""


def _groupings(data: ValidationData) -> dict[str, NDArray[Any]]:
    groupings = {}
    if len(set(data.language)) > 1:
        groupings["language"] = data.language
    if data.group is not None and data.group_name:
        groupings[data.group_name] = data.group
    return groupings


def _run_cfa(data: ValidationData, resamples: int, seed: int, tick: Progress) -> dict[str, Any]:
    return cfa_report(data.answers)


def _run_invariance(
    data: ValidationData, resamples: int, seed: int, tick: Progress
) -> dict[str, Any]:
    results = {}
    for name, groups in _groupings(data).items():
        # Evaluations without a group (no answer, "prefer not to say") are left out, counted.
        labelled = np.array([bool(label) for label in groups])
        results[name] = invariance(
            data.answers[labelled], groups[labelled].astype(str), grouping=name
        )
        results[name]["without_group"] = int((~labelled).sum())
    return results


def _run_convergent(
    data: ValidationData, resamples: int, seed: int, tick: Progress
) -> dict[str, Any]:
    return convergent_validity(data, resamples=resamples, seed=seed)


def _run_retest(data: ValidationData, resamples: int, seed: int, tick: Progress) -> dict[str, Any]:
    assert data.retest is not None  # the part is skipped without retest pairs (_missing)
    return retest_report(data.retest, resamples=resamples, seed=seed)


def _run_nested(data: ValidationData, resamples: int, seed: int, tick: Progress) -> dict[str, Any]:
    # The bootstrap reports in resamples; the bar moves in BOOTSTRAP_STEPS.
    moved = 0

    def bootstrap_progress(done: int, total: int) -> None:
        nonlocal moved
        for _ in range(moved, done * BOOTSTRAP_STEPS // total):
            tick()
            moved += 1

    report = nested_report(data, resamples=resamples, seed=seed, progress=bootstrap_progress)
    for _ in range(moved, BOOTSTRAP_STEPS):
        tick()
    return report


_RUNNERS: dict[str, Runner] = {
    "cfa": _run_cfa,
    "invariance": _run_invariance,
    "convergent": _run_convergent,
    "retest": _run_retest,
    "nested": _run_nested,
}
