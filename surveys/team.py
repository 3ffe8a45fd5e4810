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

from surveys.models import Study, StudyMembership

COORDINATOR = StudyMembership.Role.COORDINATOR


class TeamChangeRefused(Exception):
    """The change would leave the study without a coordinator."""


def _locked_membership(study: Study, membership_id: int) -> StudyMembership:
    memberships = list(StudyMembership.objects.select_for_update().filter(study=study))
    for membership in memberships:
        if membership.pk == membership_id:
            membership.other_coordinators = sum(
                1
                for other in memberships
                if other.role == COORDINATOR and other.pk != membership_id
            )
            return membership
    raise StudyMembership.DoesNotExist


@transaction.atomic
def membership_remove(*, study: Study, membership_id: int) -> StudyMembership:
    membership = _locked_membership(study, membership_id)
    if membership.role == COORDINATOR and not membership.other_coordinators:
        raise TeamChangeRefused(_("A study needs a coordinator: invite another one first."))
    membership.delete()
    return membership


@transaction.atomic
def membership_change_role(*, study: Study, membership_id: int, role: str) -> StudyMembership:
    membership = _locked_membership(study, membership_id)
    if role != COORDINATOR and membership.role == COORDINATOR:
        if not membership.other_coordinators:
            raise TeamChangeRefused(_("A study needs a coordinator: invite another one first."))
    membership.role = role
    membership.save(update_fields=["role"])
    return membership
