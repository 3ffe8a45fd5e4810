"""The account pages where a staff member manages their personal API tokens
(docs/design/api.md §16.2).

These are ordinary browser pages: a session and a CSRF token, never the
Authorization header, so an API token cannot create or revoke tokens. A token's
secret appears once, in the answer to the form that created it, and nowhere
else: not in a redirect, the session or a message, so neither the list page nor
the browser's history can show it again.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from api.forms import ApiTokenForm
from api.models import ApiToken
from api.tokens import api_token_issue, api_token_revoke
from surveys.models import Study


def _require_staff(request) -> None:
    """404 for anyone who is no study's member, not staff and holds no token:
    a former member keeps the page, to revoke what they made."""
    user = request.user
    if user.is_staff or user.memberships.exists() or user.api_tokens.exists():
        return
    raise Http404


@login_required
@never_cache
@require_http_methods(["GET", "POST"])
def token_list(request):
    """The user's tokens and the form for a new one, which also posts here."""
    _require_staff(request)
    if request.method == "POST":
        return _create(request)
    return _list_page(request, ApiTokenForm(user=request.user))


def _create(request) -> HttpResponse:
    form = ApiTokenForm(request.POST, user=request.user)
    if not form.is_valid():
        return _list_page(request, form)
    token, secret = api_token_issue(
        user=request.user,
        name=form.cleaned_data["name"],
        access=form.cleaned_data["access"],
        studies=form.cleaned_data["studies"],
        expires_at=form.expires_at(),
    )
    # Rendered, not redirected: the secret lives in this one answer, which
    # never_cache keeps out of every cache (Cache-Control: no-store).
    context = {
        "token": token,
        "secret": secret,
        "studies_url": request.build_absolute_uri(reverse("api:study_list")),
        "docs_url": reverse("api:docs"),
    }
    return render(request, "api/token_created.html", context)


def _list_page(request, form: ApiTokenForm) -> HttpResponse:
    tokens = ApiToken.objects.filter(user=request.user).prefetch_related(
        Prefetch("studies", queryset=Study.objects.order_by("title").only("title"))
    )
    context = {"form": form, "tokens": tokens, "docs_url": reverse("api:docs")}
    return render(request, "api/token_list.html", context)


@login_required
@require_POST
def token_revoke(request, pk: int):
    _require_staff(request)
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    if api_token_revoke(token=token, user=request.user):
        messages.success(request, _("The token “%(name)s” is revoked.") % {"name": token.name})
    else:
        messages.info(
            request, _("The token “%(name)s” was revoked already.") % {"name": token.name}
        )
    return redirect("api_tokens:list")
