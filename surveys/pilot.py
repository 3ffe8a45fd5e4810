"""Pilot sessions: a coordinator decides, an experimenter asks.

A pilot session is left out of counts, analyses and exports, so moving a
session there drops real data. Only a coordinator of the study does it; an
experimenter's request is recorded on the session and listed on the monitor
until a coordinator approves or declines it. Meanwhile the session counts.
"""

from django.utils import timezone

from surveys.models import StudySession, User


def pilot_request(*, session_id: int, requested_by: User) -> bool:
    """Record the request; False when the session is a pilot or asked about already."""
    updated = StudySession.objects.filter(
        pk=session_id, is_pilot=False, pilot_requested_at__isnull=True
    ).update(pilot_requested_by=requested_by, pilot_requested_at=timezone.now())
    return bool(updated)


def pilot_decide(*, session_id: int, is_pilot: bool) -> None:
    """A coordinator's decision; it answers any pending request."""
    StudySession.objects.filter(pk=session_id).update(
        is_pilot=is_pilot, pilot_requested_by=None, pilot_requested_at=None
    )
