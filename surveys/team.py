"""Changing a study's team: removing a member and changing a role.

A study always keeps at least one coordinator, or nobody could run it. The
study's memberships are locked while a change is checked, so two
coordinators removing each other at the same moment cannot both succeed.
A removed member keeps their account and the sessions they ran (exports
still name them by their pseudonym); they lose access with their next
request, because every view checks membership afresh.
"""

from django.db import transaction
from django.utils.translation import gettext as _

from audit.log import record
from audit.models import AuditEntry
from surveys.models import Study, StudyMembership

COORDINATOR = StudyMembership.Role.COORDINATOR


class TeamChangeRefused(Exception):
    """The change would leave the study without a coordinator."""


def _locked_team(study: Study, membership_id: int) -> tuple[StudyMembership, int]:
    """The membership to change and how many other coordinators the study has,
    with every membership of the study locked (in one order, so no deadlock)."""
    team = list(StudyMembership.objects.select_for_update().filter(study=study).order_by("pk"))
    membership = next((member for member in team if member.pk == membership_id), None)
    if membership is None:
        raise StudyMembership.DoesNotExist
    others = sum(1 for member in team if member.role == COORDINATOR and member != membership)
    return membership, others


@transaction.atomic
def membership_remove(*, study: Study, membership_id: int, actor=None) -> StudyMembership:
    membership, other_coordinators = _locked_team(study, membership_id)
    if membership.role == COORDINATOR and not other_coordinators:
        raise TeamChangeRefused(_("A study needs a coordinator: invite another one first."))
    email = membership.user.email
    membership.delete()
    record(
        AuditEntry.Kind.MEMBER_REMOVED,
        actor=actor,
        study_id=study.pk,
        target=f"user {membership.user_id}",
        details={"email": email, "role": membership.role},
    )
    return membership


@transaction.atomic
def membership_change_role(
    *, study: Study, membership_id: int, role: str, actor=None
) -> StudyMembership:
    membership, other_coordinators = _locked_team(study, membership_id)
    stepping_down = membership.role == COORDINATOR and role != COORDINATOR
    if stepping_down and not other_coordinators:
        raise TeamChangeRefused(_("A study needs a coordinator: invite another one first."))
    old_role = membership.role
    membership.role = role
    membership.save(update_fields=["role"])
    if role != old_role:
        record(
            AuditEntry.Kind.MEMBER_ROLE_CHANGED,
            actor=actor,
            study_id=study.pk,
            target=f"user {membership.user_id}",
            details={"email": membership.user.email, "role": {"old": old_role, "new": role}},
        )
    return membership
