"""Pilot sessions: a coordinator decides, an experimenter asks.

A pilot session is left out of counts, analyses and exports, so moving a
session there drops real data. Only a coordinator of the study does it; an
experimenter's request is recorded on the session and listed on the monitor
until a coordinator approves or declines it. Meanwhile the session counts.
"""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from audit.log import record
from audit.models import AuditEntry
from surveys.models import StudySession, User
from surveys.protocol.state import ProtocolError
from surveys.steps import Step

# A screened-out or withdrawn session keeps no answers and counts only as a
# screen-out or a withdrawal: there is nothing to leave out of the analyses,
# and a pilot mark would only drop it from those counts.
NOTHING_TO_PILOT = (Step.INELIGIBLE, Step.WITHDRAWN)


def pilot_request(*, session_id: int, requested_by: User) -> bool:
    """Record the request; False when the session is a pilot or asked about already.

    Refused (ProtocolError, nothing changed) for a screened-out or withdrawn session.
    """
    # One conditional update: a withdrawal arriving meanwhile is not marked.
    updated = (
        StudySession.objects.filter(pk=session_id, is_pilot=False, pilot_requested_at__isnull=True)
        .exclude(step__in=NOTHING_TO_PILOT)
        .update(pilot_requested_by=requested_by, pilot_requested_at=timezone.now())
    )
    if (
        not updated
        and StudySession.objects.filter(pk=session_id, step__in=NOTHING_TO_PILOT).exists()
    ):
        raise ProtocolError(
            _(
                "A screened-out or withdrawn session keeps no answers: there is nothing "
                "to mark as a pilot. Nothing was changed."
            )
        )
    return bool(updated)


def pilot_decide(*, session_id: int, is_pilot: bool, decided_by: User | None = None) -> None:
    """A coordinator's decision; it answers any pending request.

    Marking a session as a pilot drops its data from the analyses, and
    unmarking it brings them back: one audit row each, whether an
    experimenter asked or not.
    """
    with transaction.atomic():
        before = (
            StudySession.objects.select_for_update()
            .filter(pk=session_id)
            .values("study_id", "is_pilot", "pilot_requested_at")
            .first()
        )
        StudySession.objects.filter(pk=session_id).update(
            is_pilot=is_pilot, pilot_requested_by=None, pilot_requested_at=None
        )
        # A declined request changes no data: only a change of the mark is a row.
        if before is None or before["is_pilot"] == is_pilot:
            return
        record(
            AuditEntry.Kind.PILOT_APPROVED if is_pilot else AuditEntry.Kind.PILOT_UNMARKED,
            actor=decided_by,
            study_id=before["study_id"],
            target=f"session {session_id}",
            details={"requested": before["pilot_requested_at"] is not None},
        )
