"""The site's audit log (docs/design/audit.md §15.4): logins, failed logins and
second factors, for the site's administrators (superusers) only; everyone
else gets 404. A study's log is a page of its study (surveys.views.audit_log)."""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache

from audit.browse import browse, csv_response, page_context, site_entries


def _require_site_administrator(request) -> None:
    if not request.user.is_superuser:
        raise Http404


@login_required
@never_cache
def site_log(request):
    _require_site_administrator(request)
    context = page_context(request, site_entries())
    context["csv_url"] = reverse("audit:site_log_csv")
    return render(request, "audit/log.html", context)


@login_required
@never_cache
def site_log_csv(request):
    _require_site_administrator(request)
    _form, rows = browse(request, site_entries())
    stamp = timezone.localtime().strftime("%Y%m%d-%H%M%S")
    return csv_response(rows, f"site-audit-{stamp}.csv")
