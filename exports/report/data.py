"""The figures of a study report, from the study's own data (docs/design/analysis.md §8.9, paper
section 7): the analysis of scoring.stats.reliability.analysis over the non-pilot submitted
evaluations, and what the paper shows besides (Table 3, Table 5, Figures 1-6,
Table 6, completion time, prompt log, screen-outs and withdrawals).

Everything returned is JSON-safe: the report job stores it for the study page
and renders the downloadable file from the same dict. A fixed number of
queries, whatever the study's size.
"""

from collections import Counter
from datetime import datetime
from typing import Any

import numpy as np
from django.db.models import Count, Q
from django.utils import timezone

from exports.anonymize import administrator_pseudonyms
from scoring.instruments.feedback import FEEDBACK
from scoring.instruments.shs import ITEM_KEYS
from scoring.scores.engine import score_array
from scoring.scores.quality import any_flag, flag_arrays, flag_counts
from scoring.stats.reliability.analysis import analyze
from scoring.stats.reliability.flagged import quality_summary
from surveys.models import FeedbackResponse, InteractionBlock, LLMSystem, PromptEntry, Study
from surveys.selection import (
    BLOCK_ACTIVITY,
    block_activity,
    exclusion_counts,
    few_turns_flag,
    prompt_tallies,
    session_filter,
    submitted_evaluations,
)

SECONDS_PER_MINUTE = 60


def _mean_sd(values: np.ndarray) -> tuple[float | None, float | None]:
    if len(values) == 0:
        return None, None
    mean = float(values.mean())
    sd = float(values.std(ddof=1)) if len(values) > 1 else None
    return mean, sd


def collect(study: Study, as_of: datetime | None = None) -> tuple[dict, np.ndarray]:
    """Every number the report shows, computed over the non-pilot sample as it
    stood at `as_of` (now by default), and the (n, 10) raw answers it was
    computed from (for the item plot)."""
    as_of = as_of or timezone.now()
    evaluations = _evaluations(study, as_of)
    answers = evaluations["answers"]
    analysis = analyze(answers, small_sample_n=study.small_sample_evaluations)
    exclusions = exclusion_counts(study, as_of, include_pilot=False)
    data = {
        "as_of": as_of.isoformat(),
        "n": int(len(answers)),
        "participants": evaluations["participants"],
        "administrators": evaluations["administrators"],
        "languages": evaluations["languages"],
        "exclusions": exclusions,
        "analysis": analysis,
        "systems": _systems(study, evaluations),
        "completion": _completion(evaluations["seconds"]),
        "feedback": _feedback(study, as_of),
        "prompts": _prompts(study, as_of),
        "quality": quality_summary(
            answers,
            evaluations["seconds"],
            study.speeding_seconds,
            evaluations["few_turns"],
            analysis,
            small_sample_n=study.small_sample_evaluations,
        ),
    }
    return data, answers


def quality_flag_counts(study: Study) -> dict:
    """The quality flags' counts over the non-pilot sample now, as the report's
    quality section counts them, without the rest of its analysis."""
    evaluations = _evaluations(study, timezone.now())
    few_turns = evaluations["few_turns"]
    flags = flag_arrays(
        evaluations["answers"], evaluations["seconds"], study.speeding_seconds, few_turns
    )
    return {
        "n": len(few_turns),
        "flagged_by_any": int(any_flag(flags).sum()),
        "speeding_seconds": study.speeding_seconds,
        "flags": flag_counts(flags, few_turns),
    }


def _evaluations(study: Study, as_of: datetime) -> dict:
    rows = list(
        submitted_evaluations(study, as_of, include_pilot=False)
        .annotate(**block_activity(as_of))
        .order_by("session__created_at", "session_id", "block")
        .values_list(
            "session_id",
            "session__experimenter_id",
            "system_id",
            "language",
            "first_displayed_at",
            "submitted_at",
            *ITEM_KEYS,
            *BLOCK_ACTIVITY,
            "protocol",
        )
    )
    items = slice(6, 6 + len(ITEM_KEYS))
    answers = np.array([row[items] for row in rows], dtype=np.int64).reshape(-1, len(ITEM_KEYS))
    return {
        "answers": answers,
        "systems": [row[2] for row in rows],
        "seconds": np.array([(row[5] - row[4]).total_seconds() for row in rows], dtype=float),
        "participants": len({row[0] for row in rows}),
        "administrators": len({row[1] for row in rows}),
        "languages": dict(sorted(Counter(row[3] for row in rows).items())),
        "few_turns": [few_turns_flag(study, row[-1], *row[items.stop : -1]) for row in rows],
    }


def _systems(study: Study, evaluations: dict) -> list[dict]:
    """Paper Table 3 plus descriptive SHS per system (the paper pools systems on purpose)."""
    shs = score_array(evaluations["answers"]).shs
    system_of_row = np.array(evaluations["systems"], dtype=np.int64)
    rows = []
    for system in LLMSystem.objects.filter(study=study).order_by("name"):
        mine = shs[system_of_row == system.pk]
        mean, sd = _mean_sd(mine)
        window = " – ".join(
            day.strftime("%b %Y") for day in (system.collection_start, system.collection_end) if day
        )
        rows.append(
            {
                "name": system.name,
                "vendor": system.vendor,
                "model_version": system.model_version,
                "access_mode": system.access_mode,
                "collection_window": window,
                "evaluations": int(len(mine)),
                "shs_mean": mean,
                "shs_sd": sd,
            }
        )
    return rows


def _completion(seconds: np.ndarray) -> dict:
    """Time from first display of the SHS to submission (paper: 4.2 min, SD 1.8)."""
    mean, sd = _mean_sd(seconds / SECONDS_PER_MINUTE)
    return {"n": int(len(seconds)), "mean_minutes": mean, "sd_minutes": sd}


def _feedback(study: Study, as_of: datetime) -> dict:
    """Administrator feedback per session and per administrator (paper Table 5, Figures 1-5).

    The paper's percentages are "of the 47 administrators": each administrator
    counts once, with their most recent answer.
    """
    pseudonyms = administrator_pseudonyms(study)
    rows = list(
        FeedbackResponse.objects.filter(
            session_filter(study, as_of, False, "session__"), submitted_at__lte=as_of
        )
        .order_by("submitted_at", "pk")
        .values_list("experimenter_id", *FEEDBACK.keys)
    )
    latest = {row[0]: row[1:] for row in rows}  # later rows overwrite earlier ones
    questions = []
    for position, question in enumerate(FEEDBACK):
        per_session = Counter(row[1 + position] for row in rows)
        per_administrator = Counter(answers[position] for answers in latest.values())
        options: list[dict[str, Any]] = [
            {
                "code": option.code,
                "label": option.label["en"],
                "sessions": per_session[option.code],
                "administrators": per_administrator[option.code],
                "share": per_administrator[option.code] / len(latest) if latest else None,
            }
            for option in question.options
        ]
        top = max(options, key=lambda o: o["administrators"]) if latest else None
        questions.append(
            {
                "key": question.key,
                "text": question.text["en"],
                "options": options,
                "most_frequent": top["label"] if top else None,
                "most_frequent_share": top["share"] if top else None,
            }
        )
    by_administrator = [
        {"administrator": pseudonyms.get(user_id, "?"), "answers": list(answers)}
        for user_id, answers in sorted(latest.items(), key=lambda item: pseudonyms.get(item[0], ""))
    ]
    return {
        "sessions": len(rows),
        "administrators": len(latest),
        "questions": questions,
        "by_administrator": by_administrator,
    }


def _prompts(study: Study, as_of: datetime) -> dict:
    """Prompt-log counts per category and flag, over all blocks of the sample."""
    counts = PromptEntry.objects.filter(
        session_filter(study, as_of, False, "interaction__session__")
    ).aggregate(**prompt_tallies())
    counts.update(
        InteractionBlock.objects.filter(session_filter(study, as_of, False, "session__")).aggregate(
            blocks=Count("pk"),
            overrides=Count("pk", filter=~Q(override_reason="")),
        )
    )
    blocks = counts["blocks"]
    counts["verified_per_block"] = counts["verified"] / blocks if blocks else None
    counts["glatteis_per_block"] = counts["glatteis"] / blocks if blocks else None
    return counts
