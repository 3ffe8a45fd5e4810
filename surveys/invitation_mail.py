"""The invitation's e-mail (the send_invitation task's work). Below
surveys.invitations, which queues the task once an invitation is committed."""

import logging

from django.core.mail import BadHeaderError, send_mail
from django.utils import timezone
from django.utils.translation import gettext as _

from surveys.models import Invitation, StudyMembership

logger = logging.getLogger(__name__)


def invitation_send(*, invitation_id: int, link: str) -> bool:
    """E-mail the link (the task's work); False if it was not sent.

    A failed send is marked on the invitation, never raised: the coordinator
    sees it in the team list and sends it again.
    """
    invitation = (
        Invitation.objects.select_related("study", "invited_by")
        .filter(pk=invitation_id, accepted_at__isnull=True, sent_at__isnull=True)
        .first()
    )
    if invitation is None:  # revoked, replaced or sent before this task ran
        return False
    try:
        send_mail(**_invitation_mail(invitation, link), from_email=None)
    except (OSError, BadHeaderError):  # SMTP errors are OSErrors too
        logger.exception("The invitation %s could not be sent", invitation.pk)
        Invitation.objects.filter(pk=invitation.pk).update(send_failed_at=timezone.now())
        return False
    Invitation.objects.filter(pk=invitation.pk).update(sent_at=timezone.now())
    return True


def _invitation_mail(invitation: Invitation, link: str) -> dict:
    study = invitation.study
    inviter = invitation.invited_by.email if invitation.invited_by else _("The coordinator")
    return {
        "subject": _("Invitation to the study “%(study)s”") % {"study": _one_line(study.title)},
        "message": _(
            "%(inviter)s invites you to join the study “%(study)s” on the SHS Study Platform "
            "as %(role)s.\n\nOpen this link to accept (valid for %(days)s days, once):\n"
            "%(link)s\n"
        )
        % {
            "inviter": inviter,
            "study": study.title,
            "role": StudyMembership.Role(invitation.role).label,
            "link": link,
            "days": Invitation.VALID_FOR.days,
        },
        "recipient_list": [invitation.email],
    }


def _one_line(text: str) -> str:
    """Titles are single-line now, but older ones may hold line breaks, which a
    mail header refuses."""
    return " ".join(text.split())
