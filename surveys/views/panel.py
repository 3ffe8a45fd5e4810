"""The payment list of a remote study with panel ids (docs/design/remote.md §11.6):
the panel ids with their sessions' status, date and completion code, for the
study's coordinators only, on a page and as a CSV download."""

import csv

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.cache import never_cache

from surveys.access import get_study_for_user
from surveys.panel import payment_rows


def _study(request, slug):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    if not study.is_remote:
        raise Http404
    return study


@login_required
@never_cache
def payment_list(request, slug):
    study = _study(request, slug)
    return render(
        request, "surveys/remote/payment_list.html", {"study": study, "rows": payment_rows(study)}
    )


@login_required
@never_cache
def payment_list_csv(request, slug):
    study = _study(request, slug)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    stamp = timezone.localtime().strftime("%Y%m%d-%H%M%S")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-payments-{stamp}.csv"'
    writer = csv.writer(response)
    writer.writerow(["panel_id", "status", "date", "completion_code"])
    for row in payment_rows(study):
        # Ids start with a letter or digit (remote_fields.PANEL_ID): no formula.
        writer.writerow([row.panel_id, row.status, row.date.isoformat(), row.completion_code])
    return response
