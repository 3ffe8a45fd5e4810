"""What changes a session's data after the participant gave it: deleting it
(a withdrawal, a screen-out, a later request) and a coordinator's correction
of a submitted answer, each leaving what the study must keep."""

from __future__ import annotations

import re

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from audit.log import record
from audit.models import AuditEntry
from scoring.instruments.shs import ITEM_KEYS
from scoring.scores.engine import parse_answer, validate
from surveys.erasure_lock import StudyBeingRead, wait_for_study_readers
from surveys.models import (
    ConsentRecord,
    DemographicsResponse,
    Evaluation,
    EvaluationCorrection,
    FeedbackResponse,
    InteractionBlock,
    PanelEntry,
    Participant,
    Retest,
    SessionErasure,
    StepRecord,
    StudySession,
    User,
)
from surveys.models.sessions import PARTICIPANT_CODE_LENGTH
from surveys.protocol.state import ANY_STEP, ProtocolError, enter_step, locked_session
from surveys.scores import scores_in_place
from surveys.steps import Step


def erase_participant_data(session: StudySession) -> None:
    """Delete everything the participant gave; keep the session row as a counted tombstone.

    The caller holds the session's lock (`locked_session`).
    """
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
        Retest,  # and its evaluations (docs/design/validation.md §14.2)
    ):
        model.objects.filter(session=session).delete()
    participant_id = session.participant_id
    session.participant = None
    session.save(update_fields=["participant"])
    Participant.objects.filter(pk=participant_id).delete()


def session_withdraw(*, session_id: int, actor: User | None = None) -> None:
    """The participant withdraws: their data is deleted, only the count remains.

    `actor`: the staff member at the participant's side, None when the
    participant withdrew on their own.
    """
    with locked_session(session_id, expected_step=ANY_STEP) as session:
        if session.is_ended:
            raise ProtocolError(_("This session has ended; there is nothing to withdraw from."))
        step_before = session.step
        erase_participant_data(session)
        _forget_panel_id(session)
        enter_step(session, Step.WITHDRAWN)
        record(
            AuditEntry.Kind.WITHDRAWAL_PROCESSED,
            actor=actor,
            study_id=session.study_id,
            target=f"session {session.pk}",
            details={"step_before": step_before},
        )


def _forget_panel_id(session: StudySession) -> None:
    """Withdrawal and erasure delete the panel id too (docs/design/remote.md §11.6).

    Not part of erase_participant_data: a screened-out person keeps theirs, so
    the panel's link cannot start them again with other answers.
    """
    PanelEntry.objects.filter(session=session).delete()


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
    any point, docs/design/protocol.md §4.8): a coordinator deletes it, typing the participant's
    code as the confirmation. The session stays as a withdrawal, with an audit record."""
    with locked_session(session_id, expected_step=ANY_STEP) as session:
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
        erase_participant_data(session)
        _forget_panel_id(session)
        # Not enter_step(): the session keeps the time it really ended.
        session.step = Step.WITHDRAWN
        session.step_entered_at = timezone.now()
        session.save(update_fields=["step", "step_entered_at"])
        erasure = SessionErasure.objects.create(
            session=session, step_before=step_before, erased_by=erased_by
        )
        # The code typed as the confirmation stays out, like everything erased.
        record(
            AuditEntry.Kind.PARTICIPANT_ERASED,
            actor=erased_by,
            study_id=session.study_id,
            target=f"session {session.pk}",
            details={"erasure": erasure.pk, "step_before": step_before},
        )
        return erasure


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
        answers, _problems = validate(locked.answers)
        locked.save(update_fields=[item, "scored_at", *scores_in_place(locked, answers)])
        # Which answer was corrected, by whom: the values and the reason stay in
        # the correction itself (the log never holds answers or free text).
        record(
            AuditEntry.Kind.ANSWER_CORRECTED,
            actor=corrected_by,
            study_id=evaluation.session.study_id,
            target=f"evaluation {locked.pk}",
            details={"item": item, "correction": correction.pk},
        )
    return correction
