import re
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.core import mail
from django.test import TestCase, override_settings
from django.urls import reverse
from django.utils import timezone

from surveys.invitations import invitation_create
from surveys.models import Invitation, StudyMembership, User
from tests.personas import PASSWORD

NEW_PASSWORD = "a-long-new-password-2026"


def _invite(client, study, email="new.person@example.org", role="experimenter"):
    # The e-mail goes out once the invitation commits (tasks run in-process).
    with TestCase.captureOnCommitCallbacks(execute=True):
        return client.post(
            reverse("surveys:member_list", args=[study.slug]), {"email": email, "role": role}
        )


def _link_from_mail() -> str:
    return re.search(r"http\S+/invitations/\S+/", mail.outbox[-1].body).group(0)


def _path(link: str) -> str:
    return urlsplit(link).path


def test_invited_experimenter_sets_password_and_sees_only_that_study(
    client_for, study_a, study_b, client
):
    response = _invite(client_for("coordinator_a"), study_a)
    assert response.status_code == 302
    assert len(mail.outbox) == 1

    path = _path(_link_from_mail())
    page = client.get(path)
    assert page.status_code == 200
    response = client.post(path, {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD})

    assert response.status_code == 302
    user = User.objects.get(email="new.person@example.org")
    assert user.check_password(NEW_PASSWORD)
    membership = StudyMembership.objects.get(user=user)
    assert (membership.study, membership.role) == (study_a, "experimenter")
    # The new experimenter logs in and sees exactly that study.
    client.logout()
    assert client.login(email="new.person@example.org", password=NEW_PASSWORD)
    assert client.get(reverse("surveys:study_detail", args=[study_a.slug])).status_code == 200
    assert client.get(reverse("surveys:study_detail", args=[study_b.slug])).status_code == 404
    assert client.get(reverse("surveys:study_edit", args=[study_a.slug])).status_code == 404


def test_reused_link_is_refused_with_a_message(client_for, study_a, client):
    _invite(client_for("coordinator_a"), study_a)
    path = _path(_link_from_mail())
    client.post(path, {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD})
    client.logout()

    response = client.post(
        path, {"password1": "another-pass-12345", "password2": "another-pass-12345"}
    )

    assert response.status_code == 410
    assert "already been used" in response.content.decode()
    assert User.objects.get(email="new.person@example.org").check_password(NEW_PASSWORD)
    assert StudyMembership.objects.filter(user__email="new.person@example.org").count() == 1


def test_expired_link_is_refused_and_creates_no_account(client_for, study_a, client):
    _invite(client_for("coordinator_a"), study_a)
    Invitation.objects.update(expires_at=timezone.now() - timedelta(minutes=1))

    response = client.post(
        _path(_link_from_mail()), {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD}
    )

    assert response.status_code == 410
    assert "expired" in response.content.decode()
    assert not User.objects.filter(email="new.person@example.org").exists()


def test_unknown_token_is_404(client, db):
    assert client.get(reverse("surveys:invitation_accept", args=["x" * 43])).status_code == 404


def test_invitation_for_an_existing_member_is_refused(client_for, study_a, personas):
    response = _invite(client_for("coordinator_a"), study_a, email="EXP-A@example.org")

    assert response.status_code == 200
    assert "already a member" in response.content.decode()
    assert not Invitation.objects.exists()
    assert not mail.outbox


def test_second_pending_invitation_is_refused(client_for, study_a):
    client = client_for("coordinator_a")
    _invite(client, study_a)
    response = _invite(client, study_a)
    assert "still pending" in response.content.decode()
    assert Invitation.objects.count() == 1


def test_existing_account_joins_after_logging_in(client_for, study_b, personas):
    # coordinator_a already has an account; coordinator_b invites them to study B.
    _invite(client_for("coordinator_b"), study_b, email="coord-a@example.org")
    path = _path(_link_from_mail())

    anonymous = client_for("anonymous")
    page = anonymous.get(path)
    assert "Log in" in page.content.decode()
    assert not StudyMembership.objects.filter(
        user=personas["coordinator_a"], study=study_b
    ).exists()

    member = client_for("coordinator_a")
    response = member.post(path)
    assert response.status_code == 302
    assert StudyMembership.objects.get(user=personas["coordinator_a"], study=study_b).role == (
        "experimenter"
    )
    assert personas["coordinator_a"].check_password(PASSWORD)


def test_mismatched_passwords_create_nothing(client_for, study_a, client):
    _invite(client_for("coordinator_a"), study_a)
    response = client.post(
        _path(_link_from_mail()), {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD + "x"}
    )
    assert response.status_code == 200
    assert not User.objects.filter(email="new.person@example.org").exists()
    assert Invitation.objects.get().accepted_at is None


@pytest.mark.parametrize("persona", ["experimenter_a", "coordinator_b", "outsider"])
def test_only_the_coordinator_may_invite(client_for, study_a, persona):
    assert _invite(client_for(persona), study_a).status_code == 404
    assert not Invitation.objects.exists()


@override_settings(ALLOWED_HOSTS=["shs.uni-graz.example"], SITE_URL="http://127.0.0.1:8000")
def test_the_link_uses_the_host_the_coordinator_is_on(client_for, study_a):
    client = client_for("coordinator_a")
    with TestCase.captureOnCommitCallbacks(execute=True):
        response = client.post(
            reverse("surveys:member_list", args=[study_a.slug]),
            {"email": "new.person@example.org", "role": "experimenter"},
            HTTP_HOST="shs.uni-graz.example",
            secure=True,
        )

    assert response.status_code == 302
    link = urlsplit(_link_from_mail())
    assert (link.scheme, link.netloc) == ("https", "shs.uni-graz.example")


@override_settings(SITE_URL="https://studies.example.org")
def test_an_invitation_made_without_a_request_links_to_site_url(study_a, personas):
    with TestCase.captureOnCommitCallbacks(execute=True):
        invitation_create(
            study=study_a,
            email="new.person@example.org",
            role="experimenter",
            invited_by=personas["coordinator_a"],
        )

    assert _link_from_mail().startswith("https://studies.example.org/invitations/")
