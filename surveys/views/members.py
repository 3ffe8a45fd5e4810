from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from audit.log import record
from audit.models import AuditEntry
from surveys.access import get_study_for_user
from surveys.forms import AcceptInvitationForm, InvitationForm
from surveys.invitations import (
    InvitationUnusable,
    invitation_accept,
    invitation_create,
    invitation_resend,
)
from surveys.models import Invitation, StudyMembership, User
from surveys.team import TeamChangeRefused, membership_change_role, membership_remove


@login_required
def member_list(request, slug):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    form = InvitationForm(request.POST or None, study=study)
    if request.method == "POST" and form.is_valid():
        invitation, _token = invitation_create(
            study=study,
            email=form.cleaned_data["email"],
            role=form.cleaned_data["role"],
            invited_by=request.user,
            request=request,
        )
        _report_sending(request, invitation, sent=_("Invitation sent to %(email)s."))
        return redirect("surveys:member_list", slug=study.slug)
    memberships = study.memberships.select_related("user").order_by("role", "user__email")
    invitations = study.invitations.filter(accepted_at__isnull=True)
    return render(
        request,
        "surveys/member_list.html",
        {
            "study": study,
            "form": form,
            "memberships": memberships,
            "invitations": invitations,
            "roles": StudyMembership.Role.choices,
        },
    )


def _confirm(request, study, *, question, consequence, action):
    """Removing a member or revoking an invitation is asked once more first."""
    return render(
        request,
        "surveys/team_confirm.html",
        {"study": study, "question": question, "consequence": consequence, "action": action},
    )


@login_required
def invitation_revoke(request, slug, pk):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    invitation = get_object_or_404(study.invitations, pk=pk, accepted_at__isnull=True)
    if request.method != "POST":
        return _confirm(
            request,
            study,
            question=_("Revoke the invitation of %(email)s?") % {"email": invitation.email},
            consequence=_("The link sent to them stops working."),
            action=_("Revoke"),
        )
    with transaction.atomic():
        invitation.delete()
        record(
            AuditEntry.Kind.INVITATION_REVOKED,
            actor=request.user,
            study_id=study.pk,
            target=f"invitation {pk}",
            details={"email": invitation.email, "role": invitation.role},
        )
    messages.success(request, _("Invitation revoked."))
    return redirect("surveys:member_list", slug=study.slug)


@login_required
@require_POST
def invitation_resend_view(request, slug, pk):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    invitation = get_object_or_404(study.invitations, pk=pk, accepted_at__isnull=True)
    try:
        invitation, _token = invitation_resend(invitation=invitation, resent_by=request.user)
    except InvitationUnusable:
        messages.error(request, _("This invitation was accepted or revoked meanwhile."))
    else:
        _report_sending(
            request,
            invitation,
            sent=_("A new link was sent to %(email)s; the old one no longer works."),
        )
    return redirect("surveys:member_list", slug=study.slug)


def _report_sending(request, invitation, *, sent):
    """Say how the e-mail fared. With tasks in-process it has gone out (or failed)
    by now; with a worker it is still on its way and the team list shows the outcome."""
    state = (
        Invitation.objects.filter(pk=invitation.pk).values("sent_at", "send_failed_at").first()
        or {}  # revoked meanwhile
    )
    email = {"email": invitation.email}
    if state.get("sent_at"):
        messages.success(request, sent % email)
    elif state.get("send_failed_at"):
        messages.error(
            request,
            _(
                "The invitation to %(email)s could not be sent: the mail server refused it "
                "or could not be reached. It is listed as not sent; send it again later."
            )
            % email,
        )
    else:
        messages.info(request, _("The invitation to %(email)s is being sent.") % email)


@login_required
def member_remove(request, slug, pk):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    membership = get_object_or_404(study.memberships.select_related("user"), pk=pk)
    if request.method != "POST":
        return _confirm(
            request,
            study,
            question=_("Remove %(email)s from the team?") % {"email": membership.user.email},
            consequence=_(
                "They lose access to the study at once. The sessions they ran stay in the "
                "study, attributed to their pseudonym in exports."
            ),
            action=_("Remove"),
        )
    try:
        membership_remove(study=study, membership_id=membership.pk, actor=request.user)
    except TeamChangeRefused as refusal:
        messages.error(request, str(refusal))
        return redirect("surveys:member_list", slug=study.slug)
    messages.success(request, _("%(email)s was removed.") % {"email": membership.user.email})
    if membership.user == request.user:
        return redirect("surveys:study_list")
    return redirect("surveys:member_list", slug=study.slug)


@login_required
@require_POST
def member_role(request, slug, pk):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    membership = get_object_or_404(study.memberships.select_related("user"), pk=pk)
    role = request.POST.get("role", "")
    if role not in StudyMembership.Role.values:
        messages.error(request, _("Choose a role; nothing was changed."))
        return redirect("surveys:member_list", slug=study.slug)
    try:
        membership_change_role(
            study=study, membership_id=membership.pk, role=role, actor=request.user
        )
    except TeamChangeRefused as refusal:
        messages.error(request, str(refusal))
        return redirect("surveys:member_list", slug=study.slug)
    messages.success(
        request,
        _("%(email)s is now %(role)s.")
        % {"email": membership.user.email, "role": StudyMembership.Role(role).label},
    )
    if membership.user == request.user and role != StudyMembership.Role.COORDINATOR:
        return redirect("surveys:study_detail", slug=study.slug)
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
        login(request, user, backend="surveys.auth_backends.ModelBackend")
    messages.success(request, _("Welcome to “%(study)s”.") % {"study": invitation.study.title})
    return redirect("surveys:study_detail", slug=invitation.study.slug)
