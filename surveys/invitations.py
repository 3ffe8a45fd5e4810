"""Inviting staff to a study: the link carries a one-time token of 256 bits."""

import secrets

from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from surveys.models import Invitation, Study, StudyMembership, User
from surveys.models.studies import hash_token


class InvitationUnusable(Exception):
    """The invitation was used already or has expired."""


def invitation_link(raw_token: str, request: HttpRequest | None = None) -> str:
    """The acceptance link on the host the coordinator is using, as in the password
    reset mail; SITE_URL where there is no request (a command, a shell)."""
    path = reverse("surveys:invitation_accept", args=[raw_token])
    if request is not None:
        return request.build_absolute_uri(path)
    return settings.SITE_URL + path


def invitation_create(
    *, study: Study, email: str, role: str, invited_by: User, request: HttpRequest | None = None
) -> tuple[Invitation, str]:
    raw_token = secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(
        study=study,
        email=email.lower(),
        role=role,
        token_hash=hash_token(raw_token),
        invited_by=invited_by,
        expires_at=timezone.now() + Invitation.VALID_FOR,
    )
    link = invitation_link(raw_token, request)
    send_mail(
        subject=_("Invitation to the study “%(study)s”") % {"study": study.title},
        message=_(
            "%(inviter)s invites you to join the study “%(study)s” on the SHS Study Platform "
            "as %(role)s.\n\nOpen this link to accept (valid for %(days)s days, once):\n%(link)s\n"
        )
        % {
            "inviter": invited_by.email,
            "study": study.title,
            "role": StudyMembership.Role(role).label,
            "link": link,
            "days": Invitation.VALID_FOR.days,
        },
        from_email=None,
        recipient_list=[invitation.email],
    )
    return invitation, raw_token


@transaction.atomic
def invitation_accept(*, invitation_id: int, user: User | None = None, password: str = "") -> User:
    """Join the invited person to the study, creating their account if they have none.

    The invitation row is locked so that a link opened twice at once joins
    only once; a used or expired invitation raises InvitationUnusable.
    """
    invitation = Invitation.objects.select_for_update().get(pk=invitation_id)
    if not invitation.is_usable:
        raise InvitationUnusable
    if user is None:
        try:
            with transaction.atomic():
                user = User.objects.create_user(email=invitation.email, password=password)
        except IntegrityError as exc:
            raise InvitationUnusable from exc
    StudyMembership.objects.get_or_create(
        user=user, study=invitation.study, defaults={"role": invitation.role}
    )
    invitation.accepted_at = timezone.now()
    invitation.save(update_fields=["accepted_at"])
    return user
