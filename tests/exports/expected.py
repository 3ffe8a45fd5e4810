"""What an export should contain, worked out from the database independently
of the export code (the test oracle)."""

from django.utils import timezone

from scoring.instruments.feedback import FEEDBACK
from scoring.instruments.shs import DIMENSIONS, ITEM_KEYS
from scoring.scores.engine import FLAGGED_SEPARATOR, score_answers
from surveys.models import (
    Evaluation,
    FeedbackResponse,
    InteractionBlock,
    StudySession,
    Transcript,
)
from surveys.steps import Step


def included_sessions(study, include_pilot=False):
    sessions = StudySession.objects.filter(study=study).exclude(
        step__in=[Step.WITHDRAWN, Step.INELIGIBLE]
    )
    if not include_pilot:
        sessions = sessions.filter(is_pilot=False)
    return list(sessions.order_by("created_at", "pk"))


def pseudonyms(study) -> dict[int, str]:
    first: dict[int, object] = {}
    for session in StudySession.objects.filter(study=study).order_by("created_at", "pk"):
        first.setdefault(session.experimenter_id, session.created_at)
    return {user: f"A{n:02d}" for n, user in enumerate(first, start=1)}


def expected_evaluations(study, include_pilot=False) -> dict[tuple[int, int], dict]:
    """(session's database key, block) -> the values its exported row must hold.
    (An export numbers sessions in an order of its own, so tests match rows to
    sessions by their values.)"""
    sessions = included_sessions(study, include_pilot)
    names = pseudonyms(study)
    rows = {}
    for evaluation in Evaluation.objects.filter(
        session__in=sessions, submitted_at__isnull=False
    ).select_related("system", "session"):
        answers = [getattr(evaluation, key) for key in ITEM_KEYS]
        score = score_answers(answers)
        session = evaluation.session
        rows[(session.pk, evaluation.block)] = {
            **dict(zip(ITEM_KEYS, answers, strict=True)),
            **{f"s_{k}": v for k, v in score.dimension_scores.items()},
            **{f"c_{k}": v for k, v in score.consistency.items()},
            "shs": score.shs,
            "shs100": score.shs100,
            "band": score.band,
            "flagged_pairs": FLAGGED_SEPARATOR.join(score.flagged_pairs),
            "system": evaluation.system.name,
            "language": evaluation.language,
            "instrument_version": evaluation.instrument_version,
            "administrator": names[session.experimenter_id],
            "pilot": int(session.is_pilot),
            "shs_seconds": round(evaluation.shs_seconds, 1),
            "date": timezone.localdate(evaluation.submitted_at),
            "session_complete": int(session.step == Step.COMPLETE),
            "protocol": evaluation.protocol,
            **expected_flags(evaluation, study),
        }
    return rows


def _too_few_turns(evaluation, study) -> int | None:
    block = InteractionBlock.objects.get(session=evaluation.session, block=evaluation.block)
    if evaluation.protocol == "naturalistic":
        minimum = study.min_turns
    else:
        minimum = study.min_verified_prompts + study.min_glatteis_prompts
    transcript = Transcript.objects.filter(interaction=block).first()
    if transcript is not None:
        return int(transcript.turns.filter(role="user").count() < minimum)
    prompts = block.prompts.count()
    if prompts == 0 and not block.override_reason:
        return None
    return int(prompts < minimum)


def expected_flags(evaluation, study) -> dict[str, int | None]:
    """The quality flags of docs/design/analysis.md §8.10, worked out row by row."""
    answers = evaluation.answers
    pairs = [answers[d.positive_item] + answers[d.negative_item] for d in DIMENSIONS]
    return {
        "flag_speeding": int(evaluation.shs_seconds < study.speeding_seconds),
        "flag_straight_lining": int(min(answers.values()) == max(answers.values())),
        "flag_inconsistent_pairs": int(any(abs(pair) > 1 for pair in pairs)),
        "flag_too_few_turns": _too_few_turns(evaluation, study),
    }


def expected_feedback_forms(study, include_pilot=False) -> dict[str, list[tuple]]:
    """Administrator pseudonym -> their questionnaires' answers in submission
    order (two at the same moment in the order stored): the n-th is the one
    the export numbers administrator_form = n."""
    names = pseudonyms(study)
    forms: dict[str, list[tuple]] = {}
    for response in FeedbackResponse.objects.filter(
        session__in=included_sessions(study, include_pilot)
    ).order_by("submitted_at", "pk"):
        answers = tuple(getattr(response, key) for key in FEEDBACK.keys)
        forms.setdefault(names[response.experimenter_id], []).append(answers)
    return forms
