"""The study report's quality section (docs/design/analysis.md §8.10): the main analysis
with the flagged evaluations left out, beside all of them.

Apart from the rules (scoring.scores.quality) because it needs the whole analysis,
and with it scipy: the rules are read by the Study model, loaded by every
process that starts Django (a Celery worker, a management command).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from numpy.typing import NDArray

from scoring.scores.engine import checked_answers
from scoring.scores.quality import any_flag, flag_arrays, flag_counts
from scoring.stats.caveats import SMALL_SAMPLE_N
from scoring.stats.reliability.analysis import analyze


def side_by_side(everything: dict[str, Any], kept: dict[str, Any]) -> list[dict[str, Any]]:
    """The main figures of two analyses (scoring.stats.reliability.analysis.analyze results), all
    evaluations beside the flagged ones left out: alpha, the overall SHS and
    the five dimension means, each with the N it counts."""
    rows = [
        {
            "figure": "alpha",
            "all": everything["cronbach_alpha"]["alpha"],
            "kept": kept["cronbach_alpha"]["alpha"],
        },
        {
            "figure": "shs_mean",
            "all": everything["overall"]["mean"],
            "kept": kept["overall"]["mean"],
        },
        {"figure": "shs_sd", "all": everything["overall"]["sd"], "kept": kept["overall"]["sd"]},
    ]
    for key, profile in everything["dimension_profile"].items():
        rows.append(
            {
                "figure": f"mean_{key}",
                "all": profile["mean"],
                "kept": kept["dimension_profile"][key]["mean"],
            }
        )
    return rows


def quality_summary(
    answers: NDArray[Any],
    seconds: NDArray[Any],
    threshold: float,
    few_turns: Sequence[int | None],
    everything: dict[str, Any],
    small_sample_n: int = SMALL_SAMPLE_N,
) -> dict[str, Any]:
    """The report's quality section, JSON-safe: what each flag marks, and the main
    analysis without the evaluations any flag marks beside `everything` (the
    analysis of all n evaluations, computed by the caller once)."""
    flags = flag_arrays(answers, seconds, threshold, few_turns)
    kept = ~any_flag(flags)
    without = analyze(checked_answers(answers)[kept], small_sample_n=small_sample_n)
    return {
        "n": int(len(kept)),
        "kept": int(kept.sum()),
        "left_out": int((~kept).sum()),
        "speeding_seconds": threshold,
        "flags": flag_counts(flags, few_turns),
        "figures": side_by_side(everything, without),
    }
