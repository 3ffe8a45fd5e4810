"""Which study a call may reach, and with which role (docs/design/api.md §16.3).

A token reaches a study only while three things hold at the moment of the
call: the token names the study, its owner is still a member of it, and the
owner's role there allows what the page allows. Everything else answers 404,
as the pages do, so a token tells nobody what exists outside its studies.
A read-only token that asks to change something gets 403: the study is
visible to it, the change is not allowed.
"""

from django.utils.translation import gettext as _
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.permissions import SAFE_METHODS

from api.models import ApiToken
from surveys.access import COORDINATOR, SecondFactorRequired, user_has_totp
from surveys.models import Study, StudyMembership


def reachable_memberships(token: ApiToken):
    """The owner's memberships of the studies the token names, with their studies."""
    return StudyMembership.objects.select_related("study").filter(
        user_id=token.user_id,
        study_id__in=ApiToken.studies.through.objects.filter(apitoken_id=token.pk).values(
            "study_id"
        ),
    )


def study_for_call(request, slug: str, *, coordinator: bool = False) -> tuple[Study, str]:
    """The study with this slug and the owner's role in it, or NotFound;
    PermissionDenied for a change asked with a read-only token."""
    token: ApiToken = request.auth
    membership = reachable_memberships(token).filter(study__slug=slug).first()
    if membership is None or (coordinator and membership.role != COORDINATOR):
        raise NotFound(_("Not found, or not yours to see."))
    study = membership.study
    if membership.role == COORDINATOR and study.require_coordinator_mfa:
        if not user_has_totp(token.user):
            raise PermissionDenied(str(SecondFactorRequired(study)))
    if request.method not in SAFE_METHODS and not token.may_write:
        raise PermissionDenied(
            _("This token is read-only. Create a read-write token to change anything.")
        )
    return study, membership.role
