"""The periodic sweep over running sessions: idle ones are marked abandoned."""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from surveys.models import StudySession
from surveys.protocol.state import enter_step
from surveys.steps import ENDED, Step


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
                StudySession.objects.select_for_update(of=("self",))
                .select_related("study")
                .filter(pk=candidate.pk, last_activity_at__lte=now - timeout)
                .exclude(step__in=ENDED)
                .first()
            )
            if session is not None:  # no activity arrived meanwhile
                enter_step(session, Step.ABANDONED)
                abandoned += 1
    return abandoned
