"""The joint-use table of paper section 9.2 (docs/design/criterion.md §13.4): per system of
a study, its automated factuality results beside its SHS profile, and a marker
where the two diverge in the way the paper's proposition names.

The SHS figures are the study report's (§8.9): the same non-pilot submitted
evaluations (surveys.selection.submitted_evaluations), and the same means and
SDs (scoring.stats.reliability.analysis.analyze), run on each system's rows. Everything returned
is JSON-safe, so the report job can store it with the rest of the report.
Three queries, whatever the number of systems, results and evaluations.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime

import numpy as np
from django.utils import timezone

from criterion.models import AutomatedResult
from scoring.instruments.shs import DIMENSION_KEYS, DIMENSIONS, ITEM_KEYS
from scoring.stats.estimators import t_quantile
from scoring.stats.reliability.analysis import analyze
from surveys.models import LLMSystem, Study
from surveys.selection import submitted_evaluations

CONFIDENCE = 0.95
# Paper 9.2, step (2): "≥ 30 representative users" per system.
MIN_PARTICIPANTS = 30
# This platform's reading of the paper's "high automated score" and "low
# Deceptiveness score"; the paper gives no numbers. A result counts as high
# from three quarters of the way to the best end of its scale; the DP mean as
# low at or below the neutral middle of the -1..+1 scale.
AUTOMATED_HIGH_FROM = 0.75
DECEPTIVENESS_LOW_AT_MOST = 0.0
DECEPTIVENESS = "DP"


def t_interval(mean: float | None, sd: float | None, n: int) -> list[float] | None:
    """The 95 % t interval of a mean: mean ± t(0.975, n − 1) · SD / √n.

    None below two evaluations, where no SD exists.
    """
    if mean is None or sd is None or n < 2:
        return None
    half = t_quantile(0.5 + CONFIDENCE / 2, n - 1) * sd / math.sqrt(n)
    return [mean - half, mean + half]


def latest_per_benchmark(results: Iterable[AutomatedResult]) -> list[AutomatedResult]:
    """The most recent result of each benchmark (by date measured, then by
    when it was recorded), in the order of the benchmarks' names."""
    latest: dict[str, AutomatedResult] = {}
    for result in sorted(results, key=lambda r: (r.measured_on, r.recorded_at, r.pk)):
        latest[result.benchmark] = result  # a later one overwrites an earlier one
    return [latest[name] for name in sorted(latest)]


def _automated(result: AutomatedResult) -> dict:
    normalised = result.normalised()
    return {
        "benchmark": result.benchmark,
        "score": result.score,
        "scale_min": result.scale_min,
        "scale_max": result.scale_max,
        "higher_is_better": result.higher_is_better,
        "measured_on": result.measured_on.isoformat(),
        "source": result.source,
        "normalised": normalised,
        "high": normalised >= AUTOMATED_HIGH_FROM,
    }


def _profile(answers: np.ndarray) -> dict:
    """Overall SHS mean, SD and t interval, and the five dimension means."""
    n = int(answers.shape[0])
    analysis = analyze(answers)
    overall = analysis["overall"]
    return {
        "evaluations": n,
        "shs_mean": overall["mean"],
        "shs_sd": overall["sd"],
        "shs_ci95": t_interval(overall["mean"], overall["sd"], n),
        "dimension_means": {
            key: analysis["dimension_profile"][key]["mean"] for key in DIMENSION_KEYS
        },
    }


def _divergence(automated: list[dict], profile: dict) -> dict:
    """Paper 9.2 (4): a high automated score with a low Deceptiveness mean.

    `flag` is None when it cannot be judged: no automated result or no evaluation.
    """
    deceptiveness = profile["dimension_means"][DECEPTIVENESS]
    if not automated or deceptiveness is None:
        return {"flag": None, "benchmarks": []}
    high = [result["benchmark"] for result in automated if result["high"]]
    low = deceptiveness <= DECEPTIVENESS_LOW_AT_MOST
    return {"flag": bool(high) and low, "benchmarks": high if low else []}


def _system_row(system: LLMSystem, rows: list[tuple], results: list[AutomatedResult]) -> dict:
    answers = np.array([row[2:] for row in rows], dtype=np.int64).reshape(-1, len(ITEM_KEYS))
    participants = len({row[1] for row in rows})
    automated = [_automated(result) for result in latest_per_benchmark(results)]
    profile = _profile(answers)
    return {
        "id": system.pk,
        "name": system.name,
        "vendor": system.vendor,
        "model_version": system.model_version,
        "automated": automated,
        "participants": participants,
        "few_participants": participants < MIN_PARTICIPANTS,
        **profile,
        "divergence": _divergence(automated, profile),
    }


def joint_use_table(study: Study, as_of: datetime | None = None) -> dict:
    """The joint-use table of `study` as of `as_of` (now by default)."""
    as_of = as_of or timezone.now()
    evaluations = (
        submitted_evaluations(study, as_of, include_pilot=False)
        .order_by("session__created_at", "session_id", "block")
        .values_list("system_id", "session_id", *ITEM_KEYS)
    )
    rows_of: dict[int, list[tuple]] = {}
    for row in evaluations:
        rows_of.setdefault(row[0], []).append(row)
    results_of: dict[int, list[AutomatedResult]] = {}
    for result in AutomatedResult.objects.filter(system__study=study):
        results_of.setdefault(result.system_id, []).append(result)
    systems = LLMSystem.objects.filter(study=study).order_by("name", "pk")
    return {
        "as_of": as_of.isoformat(),
        "confidence": CONFIDENCE,
        "interval": "t",
        "min_participants": MIN_PARTICIPANTS,
        "automated_high_from": AUTOMATED_HIGH_FROM,
        "deceptiveness_low_at_most": DECEPTIVENESS_LOW_AT_MOST,
        "dimensions": [{"key": d.key, "label": dict(d.label)} for d in DIMENSIONS],
        "systems": [
            _system_row(system, rows_of.get(system.pk, []), results_of.get(system.pk, []))
            for system in systems
        ],
    }
