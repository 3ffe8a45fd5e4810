"""The session's step, locked for a write: the errors, the lock and entering a step.

Every service of the protocol changes a session inside `locked_session()`,
and moves it only through `enter_step()`, which keeps the step records and
interaction blocks in line with the step.
"""

from __future__ import annotations

from contextlib import contextmanager
from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from surveys.models import InteractionBlock, StepRecord, StudySession
from surveys.models.remote_fields import new_completion_code
from surveys.prepared import PreparedLookup
from surveys.protocol.statements import StepChange, write_step_change
from surveys.steps import BLOCK_OF_STEP, ENDED, INTERACTION_STEPS, Step, next_step

# Activity is what keeps a session from being swept as abandoned (timeouts of
# ten minutes and more). A request writes it only when the stored time is
# older than this, so the ten autosaves of an SHS form and the page views
# between them do not each cost an UPDATE; a step change writes it
# always, in the step's own UPDATE.
ACTIVITY_RESOLUTION = timedelta(seconds=60)

# `locked_session(..., expected_step=ANY_STEP)`: the write is not tied to one
# step (a withdrawal, an erasure); the service checks what it needs itself.
ANY_STEP = None


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
def locked_session(
    session_id: int, *, expected_step: str | None, locked: StudySession | None = None
):
    """Lock the session row for the write and check the step the request was made for.

    `locked`: the caller read the row `FOR UPDATE` in its own transaction
    already (the autosave's access check), so it is not read a second time.
    """
    if locked is not None:
        if not transaction.get_connection().in_atomic_block:
            raise RuntimeError("locked_session(locked=...) needs the caller's transaction")
        session, atomic = locked, transaction.atomic(savepoint=False)
    else:
        session, atomic = None, transaction.atomic()
    with atomic:
        if session is None:
            session = LOCKED_SESSION.one(pk=int(session_id))
            if session is None:
                raise StudySession.DoesNotExist(f"No session {session_id}.")
        if expected_step is not ANY_STEP and session.step != expected_step:
            raise WrongStep(session, expected_step)
        stale = activity_is_stale(session)
        session.last_activity_at = timezone.now()
        session.activity_unsaved = True
        yield session
        # A service that saved the session (`enter_step`) wrote the activity
        # with it; the others write it only when the stored time is stale.
        if session.activity_unsaved and stale:
            session.save(update_fields=["last_activity_at"])


# The row every protocol write starts from, compiled once per thread. Only
# the session's row is locked (of=self): PostgreSQL would otherwise lock the
# joined study and systems too, and every write of every session in a study
# would wait for the others, and session starts for all of them.
LOCKED_SESSION = PreparedLookup(
    lambda pk: (
        StudySession.objects.select_for_update(of=("self",))
        .select_related("study", "first_system", "second_system")
        .filter(pk=pk)
    ),
    pk=int,
)


def activity_is_stale(session: StudySession) -> bool:
    return timezone.now() - session.last_activity_at >= ACTIVITY_RESOLUTION


def enter_step(session: StudySession, step: Step) -> None:
    """Close the current step's record and open the next one.

    The writes go together (surveys/protocol/statements.py: one statement
    on PostgreSQL): the record closed, the next step's record and the next
    block's interaction record opened, the session's step saved.
    """
    now = timezone.now()
    change = StepChange(session, ["step", "step_entered_at"], left=session.step, now=now)
    session.step = step
    session.step_entered_at = now
    if getattr(session, "activity_unsaved", False):
        # Under `locked_session`: the request's activity goes in this UPDATE.
        change.fields.append("last_activity_at")
        session.activity_unsaved = False
    if step in ENDED:
        session.ended_at = now
        change.fields.append("ended_at")
        if step == Step.COMPLETE and session.remote:
            # Given only now, so no one holds a code for a session not finished.
            session.completion_code = new_completion_code()
            change.fields.append("completion_code")
    else:
        target = session.study.target_minutes(step)
        change.record = StepRecord(
            session=session, step=step, entered_at=now, target_minutes=target
        )
        if step in INTERACTION_STEPS:
            block = BLOCK_OF_STEP[step]
            system = session.system_for_block(block)
            change.block = InteractionBlock(
                session=session, block=block, system=system, started_at=now
            )
    write_step_change(change)


def advance(session: StudySession) -> None:
    """Enter the step after the session's current one on the protocol path."""
    enter_step(session, next_step(session.step, remote=session.remote))
