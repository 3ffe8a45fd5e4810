from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from surveys.access import get_study_for_user
from surveys.forms import AcceptInvitationForm, InvitationForm
from surveys.invitations import InvitationUnusable, invitation_accept, invitation_create
from surveys.models import Invitation, User


@login_required
def member_list(request, slug):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    form = InvitationForm(request.POST or None, study=study)
    if request.method == "POST" and form.is_valid():
        invitation_create(
            study=study,
            email=form.cleaned_data["email"],
            role=form.cleaned_data["role"],
            invited_by=request.user,
            request=request,
        )
        messages.success(
            request, _("Invitation sent to %(email)s.") % {"email": form.cleaned_data["email"]}
        )
        return redirect("surveys:member_list", slug=study.slug)
    memberships = study.memberships.select_related("user").order_by("role", "user__email")
    invitations = study.invitations.filter(accepted_at__isnull=True)
    return render(
        request,
        "surveys/member_list.html",
        {"study": study, "form": form, "memberships": memberships, "invitations": invitations},
    )


@login_required
@require_POST
def invitation_revoke(request, slug, pk):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    invitation = get_object_or_404(study.invitations, pk=pk, accepted_at__isnull=True)
    invitation.delete()
    messages.success(request, _("Invitation revoked."))
    return redirect("surveys:member_list", slug=study.slug)


def invitation_accept_view(request, token):
    invitation = Invitation.find_by_token(token)
    if invitation is None:
        raise Http404
    if not invitation.is_usable:
        reason = (
            _("This invitation link has already been used.")
            if invitation.accepted_at
            else _("This invitation link has expired. Ask the study coordinator for a new one.")
        )
        return render(request, "surveys/invitation_unusable.html", {"reason": reason}, status=410)

    existing = User.objects.filter(email__iexact=invitation.email).first()
    if existing is not None:
        # An existing account joins once its owner is logged in as that account.
        if request.user != existing:
            return render(
                request,
                "surveys/invitation_login.html",
                {"invitation": invitation, "next": request.get_full_path()},
            )
        if request.method == "POST":
            return _accept(request, invitation, user=existing)
        return render(request, "surveys/invitation_accept.html", {"invitation": invitation})

    form = AcceptInvitationForm(request.POST or None, email=invitation.email)
    if request.method == "POST" and form.is_valid():
        return _accept(request, invitation, password=form.cleaned_data["password1"])
    return render(
        request, "surveys/invitation_accept.html", {"invitation": invitation, "form": form}
    )


def _accept(request, invitation, *, user=None, password=""):
    try:
        user = invitation_accept(invitation_id=invitation.pk, user=user, password=password)
    except InvitationUnusable:
        return render(
            request,
            "surveys/invitation_unusable.html",
            {"reason": _("This invitation link has already been used.")},
            status=410,
        )
    if request.user != user:
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    messages.success(request, _("Welcome to “%(study)s”.") % {"study": invitation.study.title})
    return redirect("surveys:study_detail", slug=invitation.study.slug)
