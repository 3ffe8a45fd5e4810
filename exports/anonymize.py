"""Anonymisation by construction (docs/design/anonymisation.md §6).

Nothing that identifies a person leaves through an export: participants get
an ID made up for this export only, experimenters a pseudonym, timestamps
shrink to dates, and database keys are replaced by export-local numbers (a
primary key would let two exports be joined back into one record).
"""

import hashlib
import secrets
from datetime import date, datetime, tzinfo

from django.db.models import Min

from surveys.models import FeedbackResponse, Study, StudySession

# Lower-case hex cannot be mistaken for a participant code ("P-" + capitals).
_PARTICIPANT_ID_BYTES = 5


def participant_id_factory():
    """A callable giving a new random ID per call, never the same twice in one export.

    IDs are random rather than shuffled numbers, so two exports of the same
    study cannot be matched by position, whatever their size.
    """
    issued: set[str] = set()

    def new_id() -> str:
        while True:
            candidate = secrets.token_hex(_PARTICIPANT_ID_BYTES)
            if candidate not in issued:
                issued.add(candidate)
                return candidate

    return new_id


def session_order_salt() -> str:
    """A new secret per export, for session_order_key."""
    return secrets.token_hex(16)


def session_order_key(salt: str, session_pk: int) -> str:
    """Where a session stands in this export's order: a keyed hash of its database
    key, so the order is random and different in every export, yet the database
    can sort each sheet by it (rows.in_session_order computes the same MD5).
    The key itself never leaves the platform."""
    return hashlib.md5(f"{salt}{session_pk}".encode(), usedforsecurity=False).hexdigest()


def pseudonym(number: int) -> str:
    return f"A{number:02d}"


def administrator_pseudonyms(study: Study) -> dict[int, str]:
    """user id -> A01, A02, ... numbered by each experimenter's first session
    (a remote session, without one, is under no administrator: "").

    Counted over every session of the study (pilot and withdrawn included),
    so the pseudonyms do not change with the export's options.
    """
    # A remote session has no experimenter (docs/design/remote.md §11.1): no pseudonym.
    first_sessions = (
        StudySession.objects.filter(study=study, experimenter__isnull=False)
        .values("experimenter_id")
        .annotate(first=Min("created_at"))
        .order_by("first", "experimenter_id")
    )
    order = [row["experimenter_id"] for row in first_sessions]
    # Feedback is given by the session's experimenter; anyone else (a handover)
    # still needs a pseudonym, numbered after the rest.
    extra = (
        FeedbackResponse.objects.filter(session__study=study)
        .exclude(experimenter_id__in=order)
        .values_list("experimenter_id", flat=True)
        .distinct()
        .order_by("experimenter_id")
    )
    order.extend(extra)
    return {user_id: pseudonym(number) for number, user_id in enumerate(order, start=1)}


def local_date(moment: datetime | None, tz: tzinfo) -> date | None:
    """The calendar date in the given time zone; the time of day is dropped."""
    if moment is None:
        return None
    return moment.astimezone(tz).date()


def seconds_between(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return round((end - start).total_seconds(), 1)
