"""A study's audit log (docs/design/audit.md §15.4), for its coordinators only:
who changed, exported or corrected what and when, filtered, a page at a time
or as CSV. The log itself is the audit app's; this page decides who reads it."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache

from audit.browse import browse, csv_response, page_context, study_entries
from surveys.access import get_study_for_user


@login_required
@never_cache
def audit_log(request, slug):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    context = page_context(request, study_entries(study.pk))
    context.update(study=study, csv_url=reverse("surveys:audit_log_csv", args=[study.slug]))
    return render(request, "audit/log.html", context)


@login_required
@never_cache
def audit_log_csv(request, slug):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    _form, rows = browse(request, study_entries(study.pk))
    stamp = timezone.localtime().strftime("%Y%m%d-%H%M%S")
    return csv_response(rows, f"{study.slug}-audit-{stamp}.csv")
