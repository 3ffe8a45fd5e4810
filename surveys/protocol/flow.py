"""The session as it is run, step by step: start, consent, the two
blocks of interaction and SHS, demographics and the administrator feedback.

Each service locks the session for the step its form was made for
(`state.locked_session`) and moves it on with `state.advance`.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from scoring.instruments.eligibility import is_eligible
from scoring.instruments.shs import ITEM_KEYS
from scoring.scores.engine import Problem, parse_answer, validate
from surveys.assignment import allocate_systems
from surveys.models import (
    ConsentRecord,
    ConsentText,
    DemographicsResponse,
    Evaluation,
    FeedbackResponse,
    Participant,
    StepRecord,
    Study,
    StudySession,
    User,
)
from surveys.protocol.curation import erase_participant_data
from surveys.protocol.evaluations import evaluation_for_display
from surveys.protocol.prompts import current_interaction, missing_prompts, prompt_counts
from surveys.protocol.state import ProtocolError, WrongStep, advance, enter_step, locked_session
from surveys.protocol.statements import answer_stored
from surveys.protocol.variants import naturalistic_finish_check
from surveys.readiness import language_refusal
from surveys.retests import retest_schedule
from surveys.scores import scores_in_place
from surveys.steps import BLOCK_OF_STEP, SHS_STEPS, Step

# -- starting ---------------------------------------------------------------


def session_start(
    *,
    study: Study,
    experimenter: User | None,
    language: str,
    is_pilot: bool = False,
    remote: bool = False,
) -> StudySession:
    """Create a participant (a random code, nothing else) and a session with two systems.

    `remote`: started from the study's public link, with no experimenter
    (docs/design/remote.md §11); only a remote study starts such sessions.
    """
    if remote and (not study.is_remote or is_pilot or experimenter is not None):
        raise ProtocolError(_("This study does not take part remotely."))
    if not remote and experimenter is None:
        raise ProtocolError(_("A supervised session needs an experimenter."))
    if language not in study.languages:
        raise ProtocolError(_("The study is not offered in this language."))
    if study.status == Study.Status.CLOSED:
        raise ProtocolError(_("The study is closed; no new sessions can start."))
    if study.status == Study.Status.DRAFT and not is_pilot:
        raise ProtocolError(_("The study is a draft: only pilot sessions can run."))
    if is_pilot and not study.allow_pilot_sessions:
        raise ProtocolError(_("This study does not allow pilot sessions."))
    if not is_pilot and (refusal := language_refusal(study, language)):
        raise ProtocolError(refusal)
    with transaction.atomic():
        # The row lock on the study serialises concurrent starts, so each
        # allocation sees all earlier ones and the balance holds.
        Study.objects.select_for_update().filter(pk=study.pk).first()
        allocation = allocate_systems(study=study, respect_quota=not is_pilot)
        now = timezone.now()
        session = StudySession.objects.create(
            study=study,
            participant=Participant.objects.create(study=study),
            experimenter=experimenter,
            remote=remote,
            language=language,
            first_system=allocation.first,
            second_system=allocation.second,
            allocation_number=allocation.number,
            is_pilot=is_pilot,
            created_at=now,
            step_entered_at=now,
            last_activity_at=now,
        )
        StepRecord.objects.create(
            session=session,
            step=Step.CONSENT,
            entered_at=now,
            target_minutes=study.target_minutes(Step.CONSENT),
        )
    return session


# -- consent ----------------------------------------------------------------


def consent_submit(
    *, session_id: int, eligibility: Mapping[str, bool], consented: bool, shown_text: str = ""
) -> StudySession:
    """Screen the person; record consent and start block 1, or stop an ineligible person.

    `shown_text` is the fingerprint of the consent text on the participant's
    screen (empty: none was shown); consent is recorded only for those words.
    Eligibility answers are not stored: an ineligible person leaves only the
    count of screen-outs (docs/design/instrument.md §3.1).
    """
    with locked_session(session_id, expected_step=Step.CONSENT) as session:
        if not is_eligible(eligibility):
            erase_participant_data(session)
            enter_step(session, Step.INELIGIBLE)
            return session
        if not consented:
            raise ProtocolError(_("Consent is required to take part."))
        # Locked: a coordinator's revision waits, and sees this consent.
        text = (
            ConsentText.objects.select_for_update()
            .filter(study=session.study, language=session.language)
            .order_by("-pk")
            .first()
        )
        if (text.fingerprint if text else "") != shown_text:
            raise ProtocolError(
                _(
                    "The information sheet or consent text changed while it was shown. "
                    "Nothing was saved; read the current text and consent again."
                )
            )
        ConsentRecord.objects.create(
            session=session,
            consent_text=text,
            version=text.version if text else "",
            language=session.language,
        )
        advance(session)
    return session


# -- interaction ----------------------------------------------------------------


def interaction_finish(*, session_id: int, step: str, override_reason: str = "") -> StudySession:
    """End the interaction and open the SHS; below the minimum only with a recorded reason."""
    with locked_session(session_id, expected_step=step) as session:
        interaction = current_interaction(session)
        reason = override_reason.strip()
        if session.study.is_naturalistic:
            missing = naturalistic_finish_check(session, interaction, reason)
        else:
            logged = prompt_counts(interaction.prompts.values_list("category", flat=True))
            missing = missing_prompts(session.study, logged)
            if missing and not reason:
                raise ProtocolError(
                    _(
                        "The study minimum of prompts per category is not reached yet. Log more "
                        "prompts, or give a reason to continue anyway."
                    )
                )
        interaction.ended_at = timezone.now()
        interaction.override_reason = reason if missing else ""
        interaction.save(update_fields=["ended_at", "override_reason"])
        advance(session)
    return session


# -- the SHS ------------------------------------------------------------------


def _require_step_in(
    steps: set[Step], *, session_id: int, step: str, locked: StudySession | None = None
) -> None:
    """Refuse a form of an interaction or SHS page that names a step of another kind.

    These services look up the block of the named step, which only interaction
    and SHS steps have; a tampered step name must end as WrongStep, not a KeyError.
    """
    if step not in steps:
        raise WrongStep(locked or StudySession.objects.get(pk=session_id), step)


def shs_answer_save(
    *,
    session_id: int,
    step: str,
    item: str,
    value: object,
    sequence: object,
    locked: StudySession | None = None,
) -> bool:
    """Save one answer as it is given, so a reload or a crash loses nothing.

    `locked`: the session as the caller's transaction read it `FOR UPDATE`
    (see `locked_session`); the autosave view locks it with its access check.

    `sequence` grows with every save the page sends. Saves sent a few ms
    apart can arrive out of order; one older than the item's stored answer
    is ignored (returns False), so the last answer given is the one kept.
    """
    if item not in ITEM_KEYS:
        raise ProtocolError(_("Unknown item “%(item)s”.") % {"item": item})
    answer, why = parse_answer(value)
    if why:
        raise ProtocolError(f"{item}: {why}")
    sequence = _parse_sequence(sequence)
    _require_step_in(SHS_STEPS, session_id=session_id, step=step, locked=locked)
    with locked_session(session_id, expected_step=step, locked=locked) as session:
        if answer_stored(session, BLOCK_OF_STEP[session.step], item, answer, sequence):
            return True
        # No row updated: the evaluation is not there yet, is submitted, or has a newer answer.
        evaluation = evaluation_for_display(session)
        if evaluation.is_submitted:  # companion scales keep the step (§14.1), not the SHS open
            _same_as_submitted(evaluation, answers=None)  # refused: no answer changes it
        if sequence <= evaluation.answer_sequence.get(item, 0):
            return False  # a newer answer to this item is stored already
        setattr(evaluation, item, answer)
        evaluation.answer_sequence[item] = sequence
        evaluation.last_answered_at = timezone.now()
        evaluation.save(update_fields=[item, "answer_sequence", "last_answered_at"])
    return True


def _parse_sequence(sequence: object) -> int:
    try:
        number = int(str(sequence))
    except ValueError:
        number = 0
    # The page counts in milliseconds; JavaScript numbers stay exact up to 2**53.
    if not 1 <= number <= 2**53:
        raise ProtocolError(_("An autosave needs a positive whole sequence number."))
    return number


def shs_submit(*, session_id: int, step: str, responses: Mapping[str, object]) -> list[Problem]:
    """Submit the ten answers: store and score them in one UPDATE, move on.

    Returns the problems when answers are missing or invalid. If the only
    problem is missing answers, the given ones are saved (a participant
    without JavaScript keeps their progress); an invalid value changes nothing.

    The form of a block's SHS may come again after the session has moved on;
    `_submitted_again` decides what that means. Callers send every SHS form
    here, whatever step the session is at.
    """
    _require_step_in(SHS_STEPS, session_id=session_id, step=step)
    answers, problems = validate(responses)
    try:
        with locked_session(session_id, expected_step=step) as session:
            evaluation = evaluation_for_display(session)
            if evaluation.is_submitted:  # on its step still: companion scales follow (§14.1)
                _same_as_submitted(evaluation, answers)
                return []
            if problems:
                if all(_is_blank(problem.value) for problem in problems):
                    _save_given_answers(evaluation, responses)
                return problems
            now = timezone.now()
            for key, answer in zip(ITEM_KEYS, answers, strict=True):
                setattr(evaluation, key, answer)
            evaluation.last_answered_at = evaluation.last_answered_at or now
            evaluation.submitted_at = now
            scored = scores_in_place(evaluation, answers)
            evaluation.save(update_fields=[*ITEM_KEYS, "last_answered_at", "submitted_at", *scored])
            if not session.study.companion_scales:  # else the last of them moves on
                advance(session)
            return []
    except WrongStep:
        if _submitted_again(session_id, step, answers):
            return []  # the same submission again: nothing to do
        raise


def _submitted_again(session_id: int, step: str, answers: tuple[int, ...] | None) -> bool:
    """Whether an SHS form for a step the session has left repeats its block's submission.

    The same SHS posted twice (a double click, a replayed POST, a second tab)
    is fine and changes nothing. Different answers, or invalid ones, are
    refused: submitted answers are read-only (only a coordinator correction,
    with an audit record, changes them). False: the block has no submitted
    SHS, so the form is merely one of another step.
    """
    evaluation = (
        Evaluation.objects.submitted()
        .filter(session_id=session_id, block=BLOCK_OF_STEP[step])
        .first()
    )
    if evaluation is None:
        return False
    _same_as_submitted(evaluation, answers)
    return True


def _same_as_submitted(evaluation: Evaluation, answers: tuple[int, ...] | None) -> None:
    if answers != tuple(evaluation.answers[key] for key in ITEM_KEYS):
        raise ProtocolError(_("These answers were submitted already and can no longer be changed."))


def _is_blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _save_given_answers(evaluation: Evaluation, responses: Mapping[str, object]) -> None:
    given = {}
    for key in ITEM_KEYS:
        answer, why = parse_answer(responses.get(key))
        if not why:
            given[key] = answer
    if given:
        for key, answer in given.items():
            setattr(evaluation, key, answer)
        evaluation.last_answered_at = timezone.now()
        evaluation.save(update_fields=[*given, "last_answered_at"])


# -- feedback, demographics --------------------------------------------------------


def feedback_submit(*, session_id: int, experimenter: User, answers: Mapping[str, int]) -> None:
    with locked_session(session_id, expected_step=Step.FEEDBACK) as session:
        FeedbackResponse.objects.create(session=session, experimenter=experimenter, **answers)
        advance(session)


def demographics_submit(*, session_id: int, answers: Mapping[str, int]) -> str | None:
    """The participant's last answers; the retest link's token when the study
    has a retest (docs/design/validation.md §14.2), given only now."""
    with locked_session(session_id, expected_step=Step.DEMOGRAPHICS) as session:
        DemographicsResponse.objects.create(session=session, **answers)
        advance(session)
        return retest_schedule(session=session)
