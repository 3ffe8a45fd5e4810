"""Reading the log on a page or as CSV (docs/design/audit.md §15.4): filtered by
person, action and dates, newest first, a page at a time. The pages that
decide who may read which chain (a study's coordinators, the site's
administrators) hand their rows here."""

import csv
import json
from datetime import datetime, time, timedelta
from typing import cast

from django import forms
from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.http import HttpResponse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from audit.models import SITE_CHAIN, AuditEntry, study_chain
from shs_platform.spreadsheet_cells import neutralize

PAGE_SIZE = 50
CSV_COLUMNS = [
    "seq",
    "time",
    "person_id",
    "person",
    "action",
    "on",
    "details",
    "previous_hash",
    "hash",
]


def study_entries(study_id: int) -> QuerySet[AuditEntry]:
    return AuditEntry.objects.filter(chain=study_chain(study_id))


def site_entries() -> QuerySet[AuditEntry]:
    return AuditEntry.objects.filter(chain=SITE_CHAIN)


class AuditFilterForm(forms.Form):
    person = forms.TypedChoiceField(label=_("Person"), coerce=int, required=False, empty_value=None)
    kind = forms.ChoiceField(
        label=_("Action"),
        required=False,
        choices=[("", _("Any action")), *AuditEntry.Kind.choices],
    )
    since = forms.DateField(
        label=_("From"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(
        label=_("Until"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )

    def __init__(self, data, *, people: list[tuple[int, str]]):
        super().__init__(data)
        person = cast(forms.TypedChoiceField, self.fields["person"])
        person.choices = [("", _("Anyone")), *people]

    def clean(self):
        cleaned = super().clean()
        since, until = cleaned.get("since"), cleaned.get("until")
        if since and until and since > until:
            raise forms.ValidationError(_("The first day comes after the last."))
        return cleaned


def people(entries: QuerySet[AuditEntry]) -> list[tuple[int, str]]:
    """Everyone who acted in these rows, by the address they had then: one
    choice per id and address (a person who changed address appears twice)."""
    pairs = (
        entries.exclude(actor_id=None)
        .order_by("actor_label", "actor_id")
        .values_list("actor_id", "actor_label")
        .distinct()
    )
    return [
        (actor_id, label or f"#{actor_id}") for actor_id, label in pairs if actor_id is not None
    ]


def filtered(entries: QuerySet[AuditEntry], form: AuditFilterForm) -> QuerySet[AuditEntry]:
    """The rows the filter asks for, newest first; none while the filter is wrong."""
    if not form.is_valid():
        return entries.none()
    wanted = form.cleaned_data
    if wanted["person"] is not None:
        entries = entries.filter(actor_id=wanted["person"])
    if wanted["kind"]:
        entries = entries.filter(kind=wanted["kind"])
    # Whole days in the site's time zone, both ends included.
    if wanted["since"]:
        entries = entries.filter(created_at__gte=_start_of(wanted["since"]))
    if wanted["until"]:
        entries = entries.filter(created_at__lt=_start_of(wanted["until"] + timedelta(days=1)))
    return entries.order_by("-seq")


def _start_of(day) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def browse(request, entries: QuerySet[AuditEntry]) -> tuple[AuditFilterForm, QuerySet]:
    """The filter form read from the query string, and the rows it selects."""
    form = AuditFilterForm(request.GET or None, people=people(entries))
    if not request.GET:
        return form, entries.order_by("-seq")
    return form, filtered(entries, form)


def page_context(request, entries: QuerySet[AuditEntry]) -> dict:
    """What audit/log.html shows of these rows: the filter and one page."""
    form, rows = browse(request, entries)
    page: Page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    return {"form": form, "page": page}


def csv_response(rows: QuerySet[AuditEntry], filename: str) -> HttpResponse:
    """Every filtered row, read from the database in batches."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["Cache-Control"] = "private, no-store"
    csv.writer(response).writerows(_csv_lines(rows))
    return response


def _csv_lines(rows: QuerySet[AuditEntry]):
    yield CSV_COLUMNS
    for entry in rows.iterator(chunk_size=PAGE_SIZE * 20):
        yield [
            entry.seq,
            timezone.localtime(entry.created_at).isoformat(timespec="seconds"),
            "" if entry.actor_id is None else entry.actor_id,
            _cell(entry.actor_label),
            entry.kind,
            _cell(entry.target),
            _cell(_details_text(entry.details)),
            entry.previous_hash,
            entry.hash,
        ]


def _details_text(details: dict) -> str:
    return json.dumps(details, sort_keys=True, ensure_ascii=False) if details else ""


def _cell(text: str) -> str:
    # An address typed into the login form must not run in the reader's sheet.
    return str(neutralize(text))
