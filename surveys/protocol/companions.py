"""The companion scales after a block's SHS (docs/design/validation.md §14.1, paper section 10).

The SHS comes first and is submitted on its own, so that no companion scale
can prime it; the session then stays on the block's SHS step and gives the
study's scales one page each, in the study's order, and moves on when the
last is in. A scale's response row exists from its first display (its time is
what the scale's completion is measured from); its answers are stored only
whole and valid, once, and are read-only afterwards, like the SHS's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from django.utils import timezone
from django.utils.translation import gettext as _

from scoring.instruments.companions import COMPANION_SCALES, CompanionScale, chosen_scales
from surveys.models import CompanionResponse, Evaluation, Study, StudySession
from surveys.protocol.state import ProtocolError, WrongStep, advance, locked_session
from surveys.steps import BLOCK_OF_STEP, SHS_STEPS

# What the page says about an item of a refused form: not answered, or an
# answer the scale does not have (a tampered form).
MISSING, INVALID = "missing", "invalid"
# One or two digits, nothing else: no signs, spaces inside, NUL or other characters.
_CODE = re.compile(r"[0-9]{1,2}")


def study_scales(study: Study) -> list[CompanionScale]:
    """The registered scales the study gives after each SHS, in its order."""
    return chosen_scales(study.companion_scales)


def submitted_scales(evaluation: Evaluation) -> set[str]:
    """Keys of the scales whose answers the evaluation's participant submitted."""
    return set(
        evaluation.companion_responses.filter(submitted_at__isnull=False).values_list(
            "scale", flat=True
        )
    )


def companions_complete(evaluation: Evaluation, study: Study) -> bool:
    """Whether every companion scale of the study has the evaluation's submitted answers."""
    return {scale.key for scale in study_scales(study)} <= submitted_scales(evaluation)


def parse_companion_answers(
    scale: CompanionScale, responses: Mapping[str, object]
) -> tuple[dict[str, int] | None, dict[str, str]]:
    """The posted answers as {item key: code}, or None and the problem of each item."""
    answers, problems = {}, {}
    for key in scale.item_keys:
        text = str(responses.get(key) or "").strip()
        if not text:
            problems[key] = MISSING
        elif _CODE.fullmatch(text) and int(text) in scale.codes:
            answers[key] = int(text)
        else:
            problems[key] = INVALID
    return (None, problems) if problems else (answers, {})


@dataclass
class CompanionPage:
    """What the page of the scale due now shows (nothing of the SHS's answers)."""

    evaluation: Evaluation
    scale: CompanionScale | None  # None: every scale is in
    position: int  # 1-based, in the study's order
    count: int


def companion_for_display(session: StudySession, evaluation: Evaluation) -> CompanionPage:
    """The scale due after the evaluation's submitted SHS; its row made at first display."""
    scales = study_scales(session.study)
    stored = {response.scale: response for response in evaluation.companion_responses.all()}
    due = _due(scales, stored)
    if not due:
        return CompanionPage(evaluation, None, len(scales), len(scales))
    scale = due[0]
    if scale.key not in stored:
        # Two tabs at the same instant get the same row (see evaluation_for_display).
        CompanionResponse.objects.get_or_create(evaluation=evaluation, scale=scale.key)
    return CompanionPage(evaluation, scale, scales.index(scale) + 1, len(scales))


def _due(scales: list[CompanionScale], stored: Mapping[str, CompanionResponse]):
    return [
        scale
        for scale in scales
        if scale.key not in stored or stored[scale.key].submitted_at is None
    ]


def companion_submit(
    *, session_id: int, step: str, scale_key: str, responses: Mapping[str, object]
) -> dict[str, str]:
    """Store one scale's answers and score; after the last scale, move on.

    Returns the problem of each item when answers are missing or invalid;
    then nothing is stored. The same answers posted again (a double click, a
    second tab, after the session moved on) change nothing; different ones
    are refused, like a submitted SHS's.
    """
    if step not in SHS_STEPS:
        raise WrongStep(StudySession.objects.get(pk=session_id), step)
    scale = COMPANION_SCALES.get(scale_key)
    if scale is None:
        raise ProtocolError(_("This study does not give that questionnaire."))
    answers, problems = parse_companion_answers(scale, responses)
    try:
        with locked_session(session_id, expected_step=step) as session:
            scales = study_scales(session.study)
            if scale not in scales:
                raise ProtocolError(_("This study does not give that questionnaire."))
            evaluation = _submitted_evaluation(session, step)
            if evaluation is None:
                raise ProtocolError(_("Please submit your assessment first."))
            stored = {response.scale: response for response in evaluation.companion_responses.all()}
            due = _due(scales, stored)
            if scale not in due:
                _same_as_stored(stored[scale.key], answers)
                return {}
            if scale != due[0]:
                raise ProtocolError(_("Please answer the questionnaires in the order shown."))
            if problems:
                return problems
            _store(evaluation, scale, answers)
            if len(due) == 1:
                advance(session)
            return {}
    except WrongStep:
        if _submitted_again(session_id, step, scale, answers):
            return {}
        raise


def _submitted_evaluation(session: StudySession, step: str) -> Evaluation | None:
    return Evaluation.objects.submitted().filter(session=session, block=BLOCK_OF_STEP[step]).first()


def _store(evaluation: Evaluation, scale: CompanionScale, answers: dict[str, int]) -> None:
    response, _created = CompanionResponse.objects.get_or_create(
        evaluation=evaluation, scale=scale.key
    )
    response.answers = answers
    response.score = scale.score(answers)
    response.submitted_at = timezone.now()
    response.save(update_fields=["answers", "score", "submitted_at"])


def _submitted_again(session_id: int, step: str, scale: CompanionScale, answers) -> bool:
    """Whether a form for a step the session has left repeats the scale's submission."""
    response = CompanionResponse.objects.filter(
        evaluation__session_id=session_id,
        evaluation__block=BLOCK_OF_STEP[step],
        scale=scale.key,
        submitted_at__isnull=False,
    ).first()
    if response is None:
        return False
    _same_as_stored(response, answers)
    return True


def _same_as_stored(response: CompanionResponse, answers: dict[str, int] | None) -> None:
    if answers != response.answers:
        raise ProtocolError(_("These answers were submitted already and can no longer be changed."))


def companions_finish(*, session_id: int, step: str) -> None:
    """Move on from an SHS step whose companion scales are all in.

    For a session whose study dropped a scale while it waited (a draft
    study's pilot): no form is left to move it on.
    """
    with locked_session(session_id, expected_step=step) as session:
        evaluation = _submitted_evaluation(session, step)
        if evaluation is not None and companions_complete(evaluation, session.study):
            advance(session)
