"""Single-use personal links of a remote study, made in bulk by a coordinator
for a closed panel and downloaded once as CSV (docs/design/remote.md §11.4)."""

import csv

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from surveys.access import get_study_for_user
from surveys.models import PersonalLink
from surveys.models.personal_links import new_link_token
from surveys.models.studies import hash_token

MAX_LINKS_PER_BATCH = 5000


class PersonalLinksForm(forms.Form):
    count = forms.IntegerField(
        label=gettext_lazy("Number of personal links"), min_value=1, max_value=MAX_LINKS_PER_BATCH
    )


def personal_links_create(*, study, count: int, created_by) -> list[str]:
    """Make `count` links; the raw tokens are returned once and stored only hashed."""
    tokens = [new_link_token() for _ in range(count)]
    made = {"study": study, "created_by": created_by, "created_at": timezone.now()}
    PersonalLink.objects.bulk_create(
        [PersonalLink(token_hash=hash_token(token), **made) for token in tokens]
    )
    return tokens


@login_required
@require_POST
def personal_links_view(request, slug):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    form = PersonalLinksForm(request.POST)
    if not study.is_remote or not form.is_valid():
        messages.error(
            request,
            _("Personal links are for remote studies, from 1 to %(max)d at a time.")
            % {"max": MAX_LINKS_PER_BATCH},
        )
        return redirect("surveys:study_detail", slug=study.slug)
    with transaction.atomic():
        tokens = personal_links_create(
            study=study, count=form.cleaned_data["count"], created_by=request.user
        )
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    stamp = timezone.localtime().strftime("%Y%m%d-%H%M%S")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-links-{stamp}.csv"'
    response["Cache-Control"] = "no-store"  # the links open sessions: no copy in a cache
    writer = csv.writer(response)
    writer.writerow(["link"])
    for token in tokens:
        path = reverse("surveys:remote_take_personal", args=[study.public_code, token])
        writer.writerow([request.build_absolute_uri(path)])
    return response
