"""The statistics of the criterion-validity study (paper section 8.2;
docs/design/criterion.md §13.3).

`criterion_analysis(rows, plan)` takes one `CriterionRow` per evaluation (one
participant x one block) and the pre-registered `Plan`, and computes H1, H2,
H3, the detector correlations and the falsification verdict, each both with
every evaluation independent and clustered by participant; `plan.primary` names
the one the pre-registration made primary. Pure numerics: the `criterion` app
builds the rows from its annotations and the study's evaluations.

What the figures are about: SHS measures *perceived* reliability. A
correlation with factual precision says how far users' judgements track one
objective measure on these transcripts; it does not make SHS a hallucination
detector, nor a score proof that a system is reliable (paper 1.2).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.instruments.shs import DIMENSION_KEYS
from scoring.stats.caveats import Warnings
from scoring.stats.cluster import ParticipantBootstrap
from scoring.stats.correlations import pearson
from scoring.stats.validity.falsification import agreement_checks, falsification
from scoring.stats.validity.hypotheses import (
    BOOTSTRAP_METHOD,
    DECEPTIVENESS,
    bootstrap_interval,
    correlation,
    enough,
    enough_participants,
    h1,
    h2,
    interval,
)
from scoring.stats.validity.plan import Plan
from scoring.stats.validity.residuals import OTHER_DIMENSIONS, h3

NON_CLAIM = (
    "SHS measures perceived reliability. These correlations say how far users' judgements "
    "tracked objective measures of the same transcripts; they do not show that any system "
    "is reliable, and SHS is not a hallucination detector (paper section 1.2)."
)


@dataclass(frozen=True)
class CriterionRow:
    """One evaluation (one participant x one block) with its objective measures."""

    participant: str  # cluster key: the two evaluations of a session share it
    shs: float  # overall SHS score (bipolar -1..+1)
    dimensions: dict[str, float]  # "FA", "SR", "LC", "DP", "RG" -> dimension score
    factual_precision: float | None  # mean over annotators, 0..1
    citation_support: float | None  # mean over annotators, 0..1 (source-request transcripts only)
    detectors: dict[str, float] = field(default_factory=dict)  # detector name -> mean value
    # mean over annotators, 0..1: how confidently errors were framed (H3's stronger form)
    presentation: float | None = None


@dataclass(frozen=True)
class CriterionAnalysis:
    counts: dict[str, int]
    plan: dict[str, Any]
    bootstrap: dict[str, Any]
    h1: dict[str, Any]
    h2: dict[str, Any]
    h3: dict[str, Any]
    detectors: dict[str, Any]
    falsification: dict[str, Any]
    warnings: list[dict[str, Any]]
    non_claim: str = NON_CLAIM

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe: plain floats, ints, str, bool, None, lists and dicts; never NaN."""
        result: dict[str, Any] = _plain(
            {
                "counts": self.counts,
                "plan": self.plan,
                "bootstrap": self.bootstrap,
                "h1": self.h1,
                "h2": self.h2,
                "h3": self.h3,
                "detectors": self.detectors,
                "falsification": self.falsification,
                "warnings": self.warnings,
                "non_claim": self.non_claim,
            }
        )
        json.dumps(result, allow_nan=False)  # a NaN here is a bug, not a figure
        return result


def _plain(value: object) -> Any:
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    return value


def _present(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _dimension(key: str) -> Callable[[CriterionRow], float | None]:
    return lambda row: row.dimensions.get(key)


def _columns(rows: Sequence[CriterionRow], *needs: str) -> dict[str, NDArray[Any]]:
    """The rows where every measure in `needs` is present, as arrays."""
    getters: dict[str, Callable[[CriterionRow], float | None]] = {
        "shs": lambda row: row.shs,
        "precision": lambda row: row.factual_precision,
        "support": lambda row: row.citation_support,
        "presentation": lambda row: row.presentation,
        **{key: _dimension(key) for key in DIMENSION_KEYS},
    }
    kept = [row for row in rows if all(_present(getters[need](row)) for need in needs)]
    columns = {need: np.array([getters[need](row) for row in kept], dtype=float) for need in needs}
    columns["participants"] = np.array([str(row.participant) for row in kept], dtype=str)
    return columns


def criterion_analysis(
    rows: Sequence[CriterionRow],
    plan: Plan,
    agreement: Mapping[str, float | None] | None = None,
) -> CriterionAnalysis:
    """`agreement`: each annotated measure's ICC(2,1) between annotators (None
    where fewer than two rated the same transcripts); every verdict that rests
    on a measure then says how far its annotators agreed. Without it (a plain
    call on rows) no verdict carries that check."""
    w = Warnings()
    first = _columns(rows, "shs", "precision")
    second = _columns(rows, "support", *DIMENSION_KEYS)
    h1_result = h1(first["shs"], first["precision"], first["participants"], plan, w)
    h2_result = h2(
        np.column_stack([second[key] for key in DIMENSION_KEYS])
        if len(second["support"])
        else np.empty((0, 5)),
        second["support"],
        second["participants"],
        plan,
        w,
    )
    h3_result = _h3(rows, plan, w)
    counts = {
        "n_evaluations": len(rows),
        "n_participants": len({str(row.participant) for row in rows}),
        "n_factual_precision": sum(_present(row.factual_precision) for row in rows),
        "n_citation_support": sum(_present(row.citation_support) for row in rows),
    }
    falsified = falsification(h1_result, plan, w)
    if agreement is not None:
        agreement_checks(agreement, plan, h1_result, h2_result, h3_result, falsified)
    return CriterionAnalysis(
        counts=counts,
        plan={**plan.__dict__},
        bootstrap={"method": BOOTSTRAP_METHOD, "seed": plan.seed, "resamples": plan.resamples},
        h1=h1_result,
        h2=h2_result,
        h3=h3_result,
        detectors=detector_correlations(rows, plan, w),
        falsification=falsified,
        warnings=w.entries,
    )


def _h3(rows: Sequence[CriterionRow], plan: Plan, w: Warnings) -> dict[str, Any]:
    """H3 on its complete cases: the four other dimensions and DP, or SHS and
    the presentation measure (residuals.py says why the outcome differs)."""
    if plan.h3_predictor == DECEPTIVENESS:
        columns = _columns(rows, "precision", *DIMENSION_KEYS)
        if len(columns["precision"]):
            outcome = np.mean([columns[key] for key in OTHER_DIMENSIONS], axis=0)
        else:
            outcome = np.empty(0)
        predictor = columns[DECEPTIVENESS]
    else:
        columns = _columns(rows, "shs", "precision", "presentation")
        outcome, predictor = columns["shs"], columns["presentation"]
    return h3(outcome, columns["precision"], predictor, columns["participants"], plan, w)


def detector_correlations(rows: Sequence[CriterionRow], plan: Plan, w: Warnings) -> dict[str, Any]:
    """Descriptive: Pearson r of SHS with each detector, on the evaluations it scored."""
    names = sorted({name for row in rows for name in row.detectors})
    by_name = {}
    for name in names:
        kept = [row for row in rows if _present(row.shs) and _present(row.detectors.get(name))]
        shs = np.array([row.shs for row in kept], dtype=float)
        values = np.array([row.detectors[name] for row in kept], dtype=float)
        participants = np.array([str(row.participant) for row in kept], dtype=str)
        by_name[name] = _detector(name, shs, values, participants, plan, w)
    return {
        "method": "Pearson r of SHS with each detector's mean value; descriptive, no test",
        "by_name": by_name,
    }


def _detector(
    name: str,
    shs: NDArray[np.float64],
    values: NDArray[np.float64],
    participants: NDArray[np.str_],
    plan: Plan,
    w: Warnings,
) -> dict[str, Any]:
    figure = f"detectors.{name}"
    n, groups = len(shs), len(set(participants))
    r = None
    if enough(figure, n, f"detector {name}", w):
        r = correlation(figure, shs, values, ("SHS", name), w)
    clustered = {"r": r, "ci_low": None, "ci_high": None, "valid_resamples": 0}
    if r is not None and enough_participants(f"{figure}.clustered", participants, w):
        boot = ParticipantBootstrap(participants, seed=plan.seed, resamples=plan.resamples)
        replicates = boot.replicate(lambda rows: [pearson(shs[rows], values[rows])])
        clustered.update(bootstrap_interval(f"{figure}.clustered", replicates[:, 0], plan.alpha, w))
    return {
        "n": n,
        "n_participants": groups,
        "unclustered": {"r": r, **interval(f"{figure}.unclustered", r, n, plan.alpha, w)},
        "clustered": clustered,
    }
