"""A study's data for the validation analyses (docs/design/validation-analysis.md §14.8), as
`scoring.stats.validation_data.ValidationData`: the same non-pilot submitted
evaluations the study report counts, with their participant, system, language,
the coordinator's demographic grouping, the companion scales given beside
them and the retest pairs. Three queries, whatever the study's size."""

from datetime import datetime

import numpy as np

from scoring.instruments.companions import COMPANION_SCALES, chosen_scales
from scoring.instruments.demographics import DEMOGRAPHICS, PREFER_NOT_TO_SAY_CODE
from scoring.instruments.shs import ITEM_KEYS
from scoring.stats.validation_data import RetestPairs, ValidationData
from surveys.models import CompanionResponse, RetestEvaluation, Study
from surveys.selection import submitted_evaluations

SECONDS_PER_DAY = 86_400


def validation_data(study: Study, as_of: datetime) -> ValidationData:
    grouping = study.invariance_grouping
    group_field = f"session__demographics__{grouping}" if grouping else "language"
    rows = list(
        submitted_evaluations(study, as_of, include_pilot=False)
        .order_by("session__created_at", "session_id", "block")
        .values_list(
            "pk",
            "session_id",
            "block",
            "system__name",
            "language",
            group_field,
            "submitted_at",
            *ITEM_KEYS,
        )
    )
    answers = np.array([row[7:] for row in rows], dtype=np.int64).reshape(-1, len(ITEM_KEYS))
    group = group_labels(grouping, [row[5] for row in rows]) if grouping else None
    evaluation_ids = [row[0] for row in rows]
    return ValidationData(
        answers=answers,
        participant=np.array([row[1] for row in rows], dtype=np.int64),
        system=np.array([row[3] for row in rows], dtype=object),
        language=np.array([row[4] for row in rows], dtype=object),
        group_name=grouping,
        group=group,
        **_companions(study, evaluation_ids, as_of),
        retest=_retest_pairs(study, rows, as_of),
    )


def group_labels(grouping: str, codes: list) -> np.ndarray:
    """Each evaluation's group under the demographic question `grouping`, named by
    the codebook's English label ("Female", not 2), as the JSON is English; the
    report shows the label in its own language (validation_text.group_label).
    No demographics (an abandoned session) and "prefer not to say" are not a
    group: "", which the invariance models leave out and count."""
    labels = {option.code: option.label["en"] for option in DEMOGRAPHICS.question(grouping).options}
    return np.array(
        [
            "" if code in (None, PREFER_NOT_TO_SAY_CODE) else labels.get(code, str(code))
            for code in codes
        ],
        dtype=object,
    )


def _companions(study: Study, evaluation_ids: list[int], as_of: datetime) -> dict:
    scales = chosen_scales(study.companion_scales)
    row_of = {pk: index for index, pk in enumerate(evaluation_ids)}
    items = {scale.key: np.full((len(row_of), len(scale.items)), np.nan) for scale in scales}
    responses = CompanionResponse.objects.filter(
        evaluation_id__in=evaluation_ids, submitted_at__lte=as_of, scale__in=list(items)
    ).values_list("evaluation_id", "scale", "answers")
    for evaluation_id, key, given in responses.iterator():
        scale = COMPANION_SCALES[key]
        items[key][row_of[evaluation_id]] = [given.get(item) for item in scale.item_keys]
    return {
        "companion_items": items,
        "companion_scores": {scale.key: scale.score_array(items[scale.key]) for scale in scales},
    }


def _retest_pairs(study: Study, rows: list, as_of: datetime) -> RetestPairs | None:
    # Read even when the wave is switched off now: retests already collected
    # stay in the analysis (one query either way).
    first_of = {(row[1], row[2]): row for row in rows}
    retests = RetestEvaluation.objects.filter(
        retest__session__study=study, submitted_at__isnull=False, submitted_at__lte=as_of
    ).values_list("retest__session_id", "block", "submitted_at", *ITEM_KEYS)
    pairs = [
        (first_of[(session, block)], retest)
        for session, block, *retest in retests
        if (session, block) in first_of
    ]
    if not pairs:
        return None
    return RetestPairs(
        first=np.array([first[7:] for first, _ in pairs], dtype=np.int64).reshape(-1, 10),
        second=np.array([retest[1:] for _, retest in pairs], dtype=np.int64).reshape(-1, 10),
        participant=np.array([first[1] for first, _ in pairs], dtype=np.int64),
        days=np.array(
            [(retest[0] - first[6]).total_seconds() / SECONDS_PER_DAY for first, retest in pairs]
        ),
    )
