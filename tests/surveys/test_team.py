"""Team management: a coordinator removes members, changes roles and
resends invitations; removing and revoking are confirmed first; a study never
loses its last coordinator; nobody else reaches these pages."""

import re

import pytest
from django.core import mail
from django.urls import reverse

from exports.anonymize import administrator_pseudonyms
from surveys.invitations import invitation_create
from surveys.models import Invitation, StudyMembership
from surveys.steps import Step
from tests.personas import make_user
from tests.surveys.runner import SessionRun

COORDINATOR = StudyMembership.Role.COORDINATOR
EXPERIMENTER = StudyMembership.Role.EXPERIMENTER


def _membership(user, study):
    return StudyMembership.objects.get(user=user, study=study)


def _remove_url(study, membership):
    return reverse("surveys:member_remove", args=[study.slug, membership.pk])


def _role_url(study, membership):
    return reverse("surveys:member_role", args=[study.slug, membership.pk])


def test_removing_asks_for_confirmation_first(client_for, personas, study_a):
    membership = _membership(personas["experimenter_a"], study_a)
    page = client_for("coordinator_a").get(_remove_url(study_a, membership))

    assert page.status_code == 200
    assert "Remove exp-a@example.org from the team?" in page.content.decode()
    assert StudyMembership.objects.filter(pk=membership.pk).exists()


def test_a_removed_experimenter_loses_access_at_once_and_keeps_their_sessions(
    client_for, personas, study_a
):
    experimenter = client_for("experimenter_a")
    run = SessionRun(experimenter, study_a)
    run.advance_to(Step.BLOCK1_INTERACTION)
    pseudonym_before = administrator_pseudonyms(study_a)[personas["experimenter_a"].pk]
    membership = _membership(personas["experimenter_a"], study_a)

    response = client_for("coordinator_a").post(_remove_url(study_a, membership))

    assert response.status_code == 302
    assert not StudyMembership.objects.filter(pk=membership.pk).exists()
    # Their next request (same logged-in browser) is refused.
    assert experimenter.get(reverse("surveys:study_detail", args=[study_a.slug])).status_code == 404
    assert experimenter.get(reverse("surveys:session", args=[run.token])).status_code == 404
    # Their session stays in the study, under the same pseudonym.
    run.session.refresh_from_db()
    assert run.session.experimenter == personas["experimenter_a"]
    assert administrator_pseudonyms(study_a)[personas["experimenter_a"].pk] == pseudonym_before


def test_the_last_coordinator_cannot_be_removed_or_demoted(client_for, personas, study_a):
    coordinator = client_for("coordinator_a")
    own = _membership(personas["coordinator_a"], study_a)

    page = coordinator.post(_remove_url(study_a, own), follow=True)
    assert "A study needs a coordinator" in page.content.decode()
    page = coordinator.post(_role_url(study_a, own), {"role": EXPERIMENTER}, follow=True)
    assert "A study needs a coordinator" in page.content.decode()

    own.refresh_from_db()
    assert own.role == COORDINATOR


def test_with_a_second_coordinator_one_may_step_down(client_for, personas, study_a):
    second = make_user("coord-a2@example.org")
    StudyMembership.objects.create(user=second, study=study_a, role=COORDINATOR)
    own = _membership(personas["coordinator_a"], study_a)

    response = client_for("coordinator_a").post(_remove_url(study_a, own))

    assert response.url == reverse("surveys:study_list")
    assert list(study_a.memberships.filter(role=COORDINATOR).values_list("user", flat=True)) == [
        second.pk
    ]


def test_a_coordinator_changes_a_role(client_for, personas, study_a):
    membership = _membership(personas["experimenter_a"], study_a)
    coordinator = client_for("coordinator_a")

    coordinator.post(_role_url(study_a, membership), {"role": COORDINATOR})
    membership.refresh_from_db()
    assert membership.role == COORDINATOR
    # The promoted member now reaches the coordinator pages.
    monitor = reverse("surveys:monitor", args=[study_a.slug])
    assert client_for("experimenter_a").get(monitor).status_code == 200

    coordinator.post(_role_url(study_a, membership), {"role": EXPERIMENTER})
    assert client_for("experimenter_a").get(monitor).status_code == 404


@pytest.mark.parametrize("role", ["", "owner", "admin"])
def test_an_unknown_role_changes_nothing(client_for, personas, study_a, role):
    membership = _membership(personas["experimenter_a"], study_a)
    page = client_for("coordinator_a").post(
        _role_url(study_a, membership), {"role": role}, follow=True
    )
    assert "Choose a role; nothing was changed." in page.content.decode()
    membership.refresh_from_db()
    assert membership.role == EXPERIMENTER


def test_resending_sends_a_new_link_and_the_old_one_stops_working(
    client_for, personas, study_a, client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        invitation, old_token = invitation_create(
            study=study_a,
            email="late@example.org",
            role=EXPERIMENTER,
            invited_by=personas["coordinator_a"],
        )
    mail.outbox.clear()

    with django_capture_on_commit_callbacks(execute=True):
        response = client_for("coordinator_a").post(
            reverse("surveys:invitation_resend", args=[study_a.slug, invitation.pk])
        )

    assert response.status_code == 302
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["late@example.org"]
    new_path = re.search(r"/invitations/\S+/", mail.outbox[0].body).group(0)
    assert client.get(reverse("surveys:invitation_accept", args=[old_token])).status_code == 404
    assert client.get(new_path).status_code == 200
    pending = Invitation.objects.get(study=study_a, email="late@example.org")
    assert (pending.role, pending.invited_by) == (EXPERIMENTER, personas["coordinator_a"])


def test_revoking_an_invitation_asks_first(client_for, personas, study_a):
    invitation, _token = invitation_create(
        study=study_a,
        email="late@example.org",
        role=EXPERIMENTER,
        invited_by=personas["coordinator_a"],
    )
    url = reverse("surveys:invitation_revoke", args=[study_a.slug, invitation.pk])
    coordinator = client_for("coordinator_a")

    page = coordinator.get(url)
    assert "Revoke the invitation of late@example.org?" in page.content.decode()
    assert Invitation.objects.filter(pk=invitation.pk).exists()

    coordinator.post(url)
    assert not Invitation.objects.filter(pk=invitation.pk).exists()


@pytest.mark.parametrize("persona", ["experimenter_a", "coordinator_b", "outsider"])
def test_only_coordinators_of_the_study_manage_its_team(client_for, personas, study_a, persona):
    membership = _membership(personas["experimenter_a"], study_a)
    invitation, _token = invitation_create(
        study=study_a,
        email="late@example.org",
        role=EXPERIMENTER,
        invited_by=personas["coordinator_a"],
    )
    client = client_for(persona)
    mail.outbox.clear()

    for url, data in [
        (_remove_url(study_a, membership), {}),
        (_role_url(study_a, membership), {"role": COORDINATOR}),
        (reverse("surveys:invitation_resend", args=[study_a.slug, invitation.pk]), {}),
        (reverse("surveys:invitation_revoke", args=[study_a.slug, invitation.pk]), {}),
    ]:
        assert client.post(url, data).status_code == 404, url

    membership.refresh_from_db()
    assert membership.role == EXPERIMENTER
    assert Invitation.objects.filter(pk=invitation.pk).exists()
    assert mail.outbox == []


def test_a_membership_of_another_study_is_404(client_for, personas, study_a, study_b):
    other = _membership(personas["coordinator_b"], study_b)
    coordinator = client_for("coordinator_a")
    assert coordinator.get(_remove_url(study_a, other)).status_code == 404
    assert coordinator.post(_remove_url(study_a, other)).status_code == 404
    assert coordinator.post(_role_url(study_a, other), {"role": EXPERIMENTER}).status_code == 404
    assert StudyMembership.objects.filter(pk=other.pk, role=COORDINATOR).exists()


def test_the_team_page_offers_each_action(
    client_for, personas, study_a, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):  # the e-mail goes out
        invitation, _token = invitation_create(
            study=study_a,
            email="late@example.org",
            role=EXPERIMENTER,
            invited_by=personas["coordinator_a"],
        )
    membership = _membership(personas["experimenter_a"], study_a)
    page = client_for("coordinator_a").get(reverse("surveys:member_list", args=[study_a.slug]))
    html = page.content.decode()
    assert f'href="{_remove_url(study_a, membership)}"' in html
    assert f'action="{_role_url(study_a, membership)}"' in html
    assert (
        f'action="{reverse("surveys:invitation_resend", args=[study_a.slug, invitation.pk])}"'
        in html
    )
    assert (
        f'href="{reverse("surveys:invitation_revoke", args=[study_a.slug, invitation.pk])}"' in html
    )


@pytest.mark.django_db(transaction=True)
def test_two_coordinators_removing_each_other_at_once_leave_one(postgres_only, study_a, personas):
    from surveys.team import TeamChangeRefused, membership_remove
    from tests.surveys.test_concurrency import _in_threads

    second = make_user("coord-a2@example.org")
    memberships = [
        _membership(personas["coordinator_a"], study_a),
        StudyMembership.objects.create(user=second, study=study_a, role=COORDINATOR),
    ]

    def remove(index):
        try:
            membership_remove(study=study_a, membership_id=memberships[index].pk)
        except TeamChangeRefused:
            pass

    assert _in_threads(2, remove) == []
    assert study_a.memberships.filter(role=COORDINATOR).count() == 1
