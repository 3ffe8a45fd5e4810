"""The supervised session protocol (SPEC 3) as services over the session's step.

`StudySession.step` is the single source of truth for where a session is.
Every write goes through `locked_session()`, which takes a row lock on the
session and checks that the request was made for the session's current
step: a POST for another step (a stale tab, the back button, a replayed
form) is refused with ProtocolError and changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from scoring.engine import Problem, parse_answer, validate
from scoring.instruments.eligibility import is_eligible
from scoring.instruments.shs import ITEM_KEYS
from surveys.assignment import allocate_systems
from surveys.erasure_lock import StudyBeingRead, wait_for_study_readers
from surveys.models import (
    ConsentRecord,
    ConsentText,
    DemographicsResponse,
    Evaluation,
    EvaluationCorrection,
    FeedbackResponse,
    InteractionBlock,
    Participant,
    PromptEntry,
    SessionErasure,
    StepRecord,
    Study,
    StudySession,
    User,
)
from surveys.models.sessions import PARTICIPANT_CODE_LENGTH
from surveys.readiness import has_consent_text
from surveys.scores import schedule_scoring
from surveys.steps import BLOCK_OF_STEP, ENDED, INTERACTION_STEPS, SHS_STEPS, Step, next_step


class ProtocolError(Exception):
    """A request that does not fit the session's state; nothing was changed."""


class WrongStep(ProtocolError):
    def __init__(self, session: StudySession, expected: str):
        self.session = session
        self.expected = expected
        super().__init__(
            _(
                "This form belongs to the step “%(posted)s”, but the session is at “%(current)s”. "
                "Nothing was saved; continue on the current step."
            )
            % {"posted": _step_label(expected), "current": session.get_step_display()}
        )


def _step_label(step: str) -> str:
    try:
        return Step(step).label
    except ValueError:
        return step


@contextmanager
def locked_session(session_id: int, *, expected_step: str | None):
    """Lock the session row for the write and check the step the request was made for."""
    with transaction.atomic():
        session = (
            StudySession.objects.select_for_update()
            .select_related("study", "first_system", "second_system")
            .get(pk=session_id)
        )
        if expected_step is not None and session.step != expected_step:
            raise WrongStep(session, expected_step)
        yield session
        session.last_activity_at = timezone.now()
        session.save(update_fields=["last_activity_at"])


# -- starting and moving ----------------------------------------------------


def session_start(
    *, study: Study, experimenter: User, language: str, is_pilot: bool = False
) -> StudySession:
    """Create a participant (a random code, nothing else) and a session with two systems."""
    if language not in study.languages:
        raise ProtocolError(_("The study is not offered in this language."))
    if study.status == Study.Status.CLOSED:
        raise ProtocolError(_("The study is closed; no new sessions can start."))
    if study.status == Study.Status.DRAFT and not is_pilot:
        raise ProtocolError(_("The study is a draft: only pilot sessions can run."))
    if is_pilot and not study.allow_pilot_sessions:
        raise ProtocolError(_("This study does not allow pilot sessions."))
    if not is_pilot and not has_consent_text(study, language):
        raise ProtocolError(
            _("There is no information sheet and consent text in this language yet.")
        )
    with transaction.atomic():
        # The row lock on the study serialises concurrent starts, so each
        # allocation sees all earlier ones and the balance holds.
        Study.objects.select_for_update().filter(pk=study.pk).first()
        allocation = allocate_systems(study=study)
        now = timezone.now()
        session = StudySession.objects.create(
            study=study,
            participant=Participant.objects.create(study=study),
            experimenter=experimenter,
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


def _enter(session: StudySession, step: Step) -> None:
    """Close the current step's record and open the next one."""
    now = timezone.now()
    StepRecord.objects.filter(session=session, step=session.step, completed_at__isnull=True).update(
        completed_at=now
    )
    session.step = step
    session.step_entered_at = now
    update = ["step", "step_entered_at"]
    if step in ENDED:
        session.ended_at = now
        update.append("ended_at")
    else:
        StepRecord.objects.create(
            session=session,
            step=step,
            entered_at=now,
            target_minutes=session.study.target_minutes(step),
        )
        if step in INTERACTION_STEPS:
            block = BLOCK_OF_STEP[step]
            InteractionBlock.objects.create(
                session=session, block=block, system=session.system_for_block(block), started_at=now
            )
    session.save(update_fields=update)


def _advance(session: StudySession) -> None:
    _enter(session, next_step(session.step))


def _require_step_in(steps: set[Step], *, session_id: int, step: str) -> None:
    """Refuse a form of an interaction or SHS page that names a step of another kind.

    These services look up the block of the named step, which only interaction
    and SHS steps have; a tampered step name must end as WrongStep, not a KeyError.
    """
    if step not in steps:
        raise WrongStep(StudySession.objects.get(pk=session_id), step)


# -- consent ----------------------------------------------------------------


def consent_submit(
    *, session_id: int, eligibility: Mapping[str, bool], consented: bool, shown_text: str = ""
) -> StudySession:
    """Screen the person; record consent and start block 1, or stop an ineligible person.

    `shown_text` is the fingerprint of the consent text on the participant's
    screen (empty: none was shown); consent is recorded only for those words.
    Eligibility answers are not stored: an ineligible person leaves only the
    count of screen-outs (SPEC 2.4).
    """
    with locked_session(session_id, expected_step=Step.CONSENT) as session:
        if not is_eligible(eligibility):
            _erase_participant_data(session)
            _enter(session, Step.INELIGIBLE)
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
        _advance(session)
    return session


# -- interaction blocks and the prompt log -----------------------------------


def _current_interaction(session: StudySession) -> InteractionBlock:
    return InteractionBlock.objects.get(session=session, block=BLOCK_OF_STEP[session.step])


def _require_open_prompt_log(step: str) -> None:
    """A block's prompt log is open during its interaction step only.

    Once the block's SHS is open the log is what the participant rated, so
    a form from that page (or a step with no log at all) changes nothing.
    """
    if step not in INTERACTION_STEPS:
        raise ProtocolError(
            _(
                "Prompts are logged only while a block's interaction runs; this block's log "
                "is closed. Nothing was saved."
            )
        )


def prompt_add(
    *,
    session_id: int,
    step: str,
    category: str,
    text: str = "",
    is_follow_up: bool = False,
    is_source_request: bool = False,
    is_challenge: bool = False,
) -> PromptEntry:
    _require_open_prompt_log(step)
    with locked_session(session_id, expected_step=step) as session:
        return PromptEntry.objects.create(
            interaction=_current_interaction(session),
            category=category,
            text=text.strip(),
            is_follow_up=is_follow_up,
            is_source_request=is_source_request,
            is_challenge=is_challenge,
        )


def prompt_remove(*, session_id: int, step: str, prompt_id: int) -> None:
    """Undo a mistaken entry of the current block's log."""
    _require_open_prompt_log(step)
    with locked_session(session_id, expected_step=step) as session:
        deleted, _rows = PromptEntry.objects.filter(
            pk=prompt_id, interaction=_current_interaction(session)
        ).delete()
        if not deleted:
            raise ProtocolError(_("That prompt is not part of this block's log."))


def prompt_counts(categories: Iterable[str]) -> dict[str, int]:
    """Prompts logged per category, every category present (zero when none)."""
    counts = {category: 0 for category in PromptEntry.Category.values}
    for category in categories:
        counts[category] += 1
    return counts


def minimum_prompts(study: Study) -> dict[str, int]:
    """The study minimum of prompts per category and block."""
    return {
        PromptEntry.Category.VERIFIED: study.min_verified_prompts,
        PromptEntry.Category.GLATTEIS: study.min_glatteis_prompts,
    }


def missing_prompts(study: Study, counts: Mapping[str, int]) -> dict[str, int]:
    """How many prompts of each category the block still lacks for the study minimum."""
    minimum = minimum_prompts(study)
    return {
        category: minimum[category] - counts.get(category, 0)
        for category in minimum
        if counts.get(category, 0) < minimum[category]
    }


def interaction_finish(*, session_id: int, step: str, override_reason: str = "") -> StudySession:
    """End the interaction and open the SHS; below the minimum only with a recorded reason."""
    with locked_session(session_id, expected_step=step) as session:
        interaction = _current_interaction(session)
        logged = prompt_counts(interaction.prompts.values_list("category", flat=True))
        missing = missing_prompts(session.study, logged)
        reason = override_reason.strip()
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
        _advance(session)
    return session


# -- the SHS ------------------------------------------------------------------


def evaluation_for_display(session: StudySession) -> Evaluation:
    """The evaluation of the current SHS step, created at its first display.

    First display time is what the SHS completion time is measured from. Two
    tabs displaying it at the same instant get the same row (get_or_create
    retries the lookup when the unique constraint refuses the second insert).
    """
    block = BLOCK_OF_STEP[session.step]
    evaluation, _created = Evaluation.objects.get_or_create(
        session=session,
        block=block,
        defaults={"system": session.system_for_block(block), "language": session.language},
    )
    return evaluation


def shs_answer_save(
    *, session_id: int, step: str, item: str, value: object, sequence: object
) -> bool:
    """Save one answer as it is given, so a reload or a crash loses nothing.

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
    _require_step_in(SHS_STEPS, session_id=session_id, step=step)
    with locked_session(session_id, expected_step=step) as session:
        evaluation = evaluation_for_display(session)
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
    """Submit the ten answers: store them once, score after commit, move on.

    Returns the problems when answers are missing or invalid. If the only
    problem is missing answers, the given ones are saved (a participant
    without JavaScript keeps their progress); an invalid value changes nothing.

    A second submission of the same answers (a double click, a replayed
    POST) finds the evaluation submitted and changes nothing; different
    answers after submission are refused: submitted answers are read-only
    (only a coordinator correction, with an audit record, changes them).
    """
    _require_step_in(SHS_STEPS, session_id=session_id, step=step)
    answers, problems = validate(responses)
    try:
        with locked_session(session_id, expected_step=step) as session:
            evaluation = evaluation_for_display(session)
            if problems:
                if all(_is_blank(problem.value) for problem in problems):
                    _save_given_answers(evaluation, responses)
                return problems
            now = timezone.now()
            for key, answer in zip(ITEM_KEYS, answers, strict=True):
                setattr(evaluation, key, answer)
            evaluation.last_answered_at = evaluation.last_answered_at or now
            evaluation.submitted_at = now
            evaluation.save()
            schedule_scoring(evaluation.pk)
            _advance(session)
            return []
    except WrongStep:
        submitted = _already_submitted(session_id, step)
        if submitted is None:
            raise
        if not problems and submitted == answers:
            return []  # the same submission again: nothing to do
        raise ProtocolError(
            _("These answers were submitted already and can no longer be changed.")
        ) from None


def _is_blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _already_submitted(session_id: int, step: str) -> tuple[int, ...] | None:
    evaluation = (
        Evaluation.objects.submitted()
        .filter(session_id=session_id, block=BLOCK_OF_STEP[step])
        .first()
    )
    return None if evaluation is None else tuple(evaluation.answers[k] for k in ITEM_KEYS)


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
        _advance(session)


def demographics_submit(*, session_id: int, answers: Mapping[str, int]) -> None:
    with locked_session(session_id, expected_step=Step.DEMOGRAPHICS) as session:
        DemographicsResponse.objects.create(session=session, **answers)
        _advance(session)


# -- leaving the protocol early --------------------------------------------------


def _erase_participant_data(session: StudySession) -> None:
    """Delete everything the participant gave; keep the session row as a counted tombstone."""
    try:
        wait_for_study_readers(session.study_id)  # no export is left with half of it
    except StudyBeingRead:
        raise ProtocolError(
            _(
                "An export of this study is being written; nothing was deleted. "
                "Try again in a minute."
            )
        ) from None
    for model in (
        Evaluation,
        InteractionBlock,
        ConsentRecord,
        DemographicsResponse,
        FeedbackResponse,
        StepRecord,
    ):
        model.objects.filter(session=session).delete()
    participant_id = session.participant_id
    session.participant = None
    session.save(update_fields=["participant"])
    Participant.objects.filter(pk=participant_id).delete()


def session_withdraw(*, session_id: int) -> None:
    """The participant withdraws: their data is deleted, only the count remains."""
    with locked_session(session_id, expected_step=None) as session:
        if session.is_ended:
            raise ProtocolError(_("This session has ended; there is nothing to withdraw from."))
        _erase_participant_data(session)
        _enter(session, Step.WITHDRAWN)


def participant_code_as_given(text: str) -> str:
    """A code as a participant quotes it, in the form stored ("P-" and eight characters).

    Codes are pasted from e-mails and word processors: case, spaces, quotes
    (straight, curly, guillemets), dashes of any kind, surrounding punctuation
    and the "P-" prefix (with or without its hyphen, even twice) do not matter.
    """
    kept = re.sub(r"[^0-9A-Z-]", "", text.upper())
    code = re.sub(r"^(P-)+", "", kept).replace("-", "")
    if code.startswith("P") and len(code) == PARTICIPANT_CODE_LENGTH + 1:  # hyphen left out
        code = code[1:]
    return f"P-{code}"


def holds_erasable_data(session: StudySession) -> bool:
    """Whether the session ended still holding what its participant gave."""
    return session.step in (Step.COMPLETE, Step.ABANDONED) and session.participant_id is not None


def session_erase_on_request(
    *, session_id: int, participant_code: str, erased_by: User
) -> SessionErasure:
    """A participant who has left asks for their data to be deleted (withdrawal at
    any point, SPEC 3): a coordinator deletes it, typing the participant's code
    as the confirmation. The session stays as a withdrawal, with an audit record."""
    with locked_session(session_id, expected_step=None) as session:
        if not session.is_ended:
            raise ProtocolError(
                _("This session is still running: the participant withdraws on its own screen.")
            )
        if not holds_erasable_data(session):
            raise ProtocolError(_("This session holds no participant data to delete."))
        if participant_code_as_given(participant_code) != session.participant.code:
            raise ProtocolError(
                _("The participant code does not match this session; nothing was deleted.")
            )
        # A coordinator's correction of an answer in the same moment finishes first.
        list(Evaluation.objects.select_for_update().filter(session=session))
        step_before = session.step
        _erase_participant_data(session)
        # Not _enter(): the session keeps the time it really ended.
        session.step = Step.WITHDRAWN
        session.step_entered_at = timezone.now()
        session.save(update_fields=["step", "step_entered_at"])
        return SessionErasure.objects.create(
            session=session, step_before=step_before, erased_by=erased_by
        )


def sessions_mark_abandoned(now=None) -> int:
    """Sessions without activity beyond their study's timeout become abandoned."""
    now = now or timezone.now()
    abandoned = 0
    candidates = (
        StudySession.objects.in_progress()
        .select_related("study")
        .only("pk", "last_activity_at", "study__inactivity_timeout_minutes")
    )
    for candidate in candidates.iterator():
        timeout = timedelta(minutes=candidate.study.inactivity_timeout_minutes)
        if candidate.last_activity_at > now - timeout:
            continue
        with transaction.atomic():
            session = (
                StudySession.objects.select_for_update()
                .select_related("study")
                .filter(pk=candidate.pk, last_activity_at__lte=now - timeout)
                .exclude(step__in=ENDED)
                .first()
            )
            if session is not None:  # no activity arrived meanwhile
                _enter(session, Step.ABANDONED)
                abandoned += 1
    return abandoned


# -- coordinator actions -----------------------------------------------------------


def evaluation_correct(
    *, evaluation: Evaluation, item: str, new_value: object, reason: str, corrected_by: User
) -> EvaluationCorrection:
    """Change a submitted answer, keeping the old value in an audit record, and re-score."""
    if item not in ITEM_KEYS:
        raise ProtocolError(_("Unknown item “%(item)s”.") % {"item": item})
    answer, why = parse_answer(new_value)
    if why:
        raise ProtocolError(f"{item}: {why}")
    if not reason.strip():
        raise ProtocolError(_("A correction needs a reason."))
    with transaction.atomic():
        locked = Evaluation.objects.select_for_update().filter(pk=evaluation.pk).first()
        if locked is None:  # its participant's data was deleted meanwhile
            raise ProtocolError(_("This evaluation no longer exists; nothing was changed."))
        if not locked.is_submitted:
            raise ProtocolError(_("Only submitted evaluations can be corrected."))
        correction = EvaluationCorrection.objects.create(
            evaluation=locked,
            item=item,
            old_value=getattr(locked, item),
            new_value=answer,
            reason=reason.strip(),
            corrected_by=corrected_by,
        )
        setattr(locked, item, answer)
        locked.scored_at = None
        locked.save(update_fields=[item, "scored_at"])
        schedule_scoring(locked.pk)
    return correction
