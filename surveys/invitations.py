"""Inviting staff to a study: the link carries a one-time token of 256 bits."""

import logging
import secrets

from django.conf import settings
from django.core.mail import BadHeaderError, send_mail
from django.db import IntegrityError, transaction
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from surveys.models import Invitation, Study, StudyMembership, User
from surveys.models.studies import hash_token

logger = logging.getLogger(__name__)


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
    """Create the invitation and e-mail its link.

    A failed send does not fail the request: the invitation stays without
    `sent_at`, the caller tells the coordinator, and inviting the address
    again replaces it (its link never reached anyone).
    """
    Invitation.objects.filter(
        study=study, email=email.lower(), accepted_at__isnull=True, sent_at__isnull=True
    ).delete()
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
    try:
        send_mail(
            subject=_("Invitation to the study “%(study)s”") % {"study": _one_line(study.title)},
            message=_(
                "%(inviter)s invites you to join the study “%(study)s” on the SHS Study Platform "
                "as %(role)s.\n\nOpen this link to accept (valid for %(days)s days, once):\n"
                "%(link)s\n"
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
    except (OSError, BadHeaderError):  # SMTP errors are OSErrors too
        logger.exception("The invitation %s could not be sent", invitation.pk)
        return invitation, raw_token
    invitation.sent_at = timezone.now()
    invitation.save(update_fields=["sent_at"])
    return invitation, raw_token


def _one_line(text: str) -> str:
    """Titles are single-line now, but older ones may hold line breaks, which a
    mail header refuses."""
    return " ".join(text.split())


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


@transaction.atomic
def invitation_resend(*, invitation: Invitation, resent_by: User) -> tuple[Invitation, str]:
    """A fresh link for a pending invitation (lost e-mail, expired link).

    The old link stops working: its row is replaced by a new invitation with a
    new token and a new validity period, sent the same way as the first.
    """
    deleted, _rows = Invitation.objects.filter(pk=invitation.pk, accepted_at__isnull=True).delete()
    if not deleted:  # accepted (or revoked) since the page was loaded
        raise InvitationUnusable
    return invitation_create(
        study=invitation.study, email=invitation.email, role=invitation.role, invited_by=resent_by
    )
