"""Inviting staff to a study: the link carries a one-time token of 256 bits."""

import logging
import secrets

from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone, translation
from kombu.exceptions import OperationalError

from audit.log import record
from audit.models import AuditEntry
from surveys.models import Invitation, Study, StudyMembership, User
from surveys.models.studies import hash_token
from surveys.tasks import send_invitation

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


@transaction.atomic
def invitation_create(
    *, study: Study, email: str, role: str, invited_by: User, request: HttpRequest | None = None
) -> tuple[Invitation, str]:
    """Create the invitation; its e-mail goes out from a task once it is committed.

    The mail server is never waited on in the request, and a rolled-back
    invitation sends nothing. Inviting the address again replaces an
    invitation whose e-mail has not gone out (its link never reached anyone).
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
    _send_after_commit(invitation.pk, invitation_link(raw_token, request))
    # Sent again (invitation_resend) is a new invitation, and one row too.
    record(
        AuditEntry.Kind.INVITATION_SENT,
        actor=invited_by,
        study_id=study.pk,
        target=f"invitation {invitation.pk}",
        details={"email": invitation.email, "role": role},
    )
    return invitation, raw_token


def _send_after_commit(invitation_id: int, link: str) -> None:
    """Queue the e-mail once the invitation is committed.

    Only the token's hash is stored, so the link travels in the task message
    (and then in the mail), never through the database. If the task cannot be
    queued the invitation is marked failed, for the coordinator to send again.
    """
    language = translation.get_language() or settings.LANGUAGE_CODE

    def enqueue():
        try:
            send_invitation.delay(invitation_id, link, language)
        except OperationalError:
            logger.warning("could not queue invitation %s", invitation_id, exc_info=True)
            Invitation.objects.filter(pk=invitation_id).update(send_failed_at=timezone.now())

    transaction.on_commit(enqueue)


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
    membership, joined = StudyMembership.objects.get_or_create(
        user=user, study=invitation.study, defaults={"role": invitation.role}
    )
    invitation.accepted_at = timezone.now()
    invitation.save(update_fields=["accepted_at"])
    if joined:
        # The person who joins is the one who acts: the invitation was theirs.
        record(
            AuditEntry.Kind.MEMBER_ADDED,
            actor=user,
            study_id=invitation.study_id,
            target=f"user {user.pk}",
            details={"email": user.email, "role": membership.role, "invitation": invitation.pk},
        )
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
