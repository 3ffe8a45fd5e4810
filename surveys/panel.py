"""Panel ids of a remote study (docs/design/remote.md §11.6): the links to paste
into the common panels, the coordinators' payment list and the purge after the
study's retention days. The public link records and looks up entries
(`surveys.views.remote`); withdrawal and erasure delete them
(`surveys.protocol.curation`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import quote

from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy

from surveys.models import PanelEntry, Study
from surveys.steps import Step


@dataclass(frozen=True)
class Panel:
    """A panel's convention for sending its participant id to a survey link."""

    name: str | Promise  # a brand name, or translated for "other panels"
    parameter: str  # the name the panel's own documentation uses
    placeholder: str = ""  # the id in the panel's placeholder syntax
    extra: str = ""  # further parameters the panel documents; the platform ignores them
    # The panel appends the parameter to the survey link itself.
    appends: bool = False


PANELS = (
    # Prolific's "URL parameters" option, as Prolific documents it.
    Panel(
        "Prolific",
        "PROLIFIC_PID",
        placeholder="{{%PROLIFIC_PID%}}",
        extra="&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
    ),
    # Both add ?workerId=...&assignmentId=...&hitId=... to the survey link.
    Panel("MTurk / CloudResearch", "workerId", appends=True),
    # Any other panel: its own placeholder for the id goes after the "=".
    Panel(gettext_lazy("Other panels"), "pid"),
)


@dataclass(frozen=True)
class PanelLink:
    panel: Panel
    # What to paste into the panel; "" when the panel cannot send the id under
    # the study's parameter (it appends a name of its own).
    url: str


def panel_links(study: Study, public_link: str) -> list[PanelLink]:
    """The link to paste into each common panel, carrying the id under the one
    parameter the public link reads (`Study.panel_parameter`), so that the two
    cannot disagree; none while the study keeps no panel ids."""
    parameter = study.panel_parameter
    if not parameter:
        return []
    links = []
    for panel in PANELS:
        if panel.appends:
            links.append(PanelLink(panel, public_link if panel.parameter == parameter else ""))
        else:
            query = f"{quote(parameter)}={panel.placeholder}{panel.extra}"
            links.append(PanelLink(panel, f"{public_link}?{query}"))
    return links


@dataclass(frozen=True)
class PaymentRow:
    panel_id: str
    status: str
    date: datetime
    completion_code: str


def payment_rows(study: Study) -> list[PaymentRow]:
    """One row per panel id, in the order they came (one query)."""
    entries = (
        PanelEntry.objects.filter(study=study)
        .select_related("session")
        .only(
            "panel_id",
            "created_at",
            "session__step",
            "session__step_entered_at",
            "session__completion_code",
        )
    )
    return [_row(entry) for entry in entries]


def _row(entry: PanelEntry) -> PaymentRow:
    session = entry.session
    if session is None:  # the session was deleted: the id stays used
        return PaymentRow(entry.panel_id, "", entry.created_at, "")
    completed = session.step == Step.COMPLETE
    return PaymentRow(
        panel_id=entry.panel_id,
        status=str(Step(session.step).label),
        # A completed session's date is its completion, the one a panel pays for.
        date=session.step_entered_at if completed else entry.created_at,
        completion_code=session.completion_code if completed else "",
    )


def panel_ids_purge(now: datetime | None = None) -> int:
    """Delete the entries older than their study's retention days; the count deleted.

    One delete per retention length in use (studies share a handful): a
    duration computed in SQL from the days would not run on SQLite.
    """
    now = now or timezone.now()
    lengths = PanelEntry.objects.values_list("study__panel_retention_days", flat=True).distinct()
    deleted = 0
    for days in list(lengths):
        expired = PanelEntry.objects.filter(
            study__panel_retention_days=days, created_at__lte=now - timedelta(days=days)
        )
        deleted += expired.delete()[0]
    return deleted
