"""Staff log in with their e-mail address: it changes only to an address its
owner has confirmed through the link e-mailed to it, and an address with a
pending invitation cannot be added to another account."""

import re

import pytest
from django.core import mail
from django.urls import reverse

from surveys.invitations import invitation_create
from surveys.models import User
from tests.personas import PASSWORD

OLD, NEW = "exp-a@example.org", "exp-a.new@example.org"


@pytest.fixture
def staff(client, personas):
    """The experimenter, logged in through the login form (allauth then knows
    they authenticated just now and asks for no password again)."""
    client.post(reverse("account_login"), {"login": OLD, "password": PASSWORD})
    client.get(reverse("account_email"))
    return client


def login_email() -> str:
    return User.objects.get(email__in=[OLD, NEW]).email


def add(client, email):
    return client.post(reverse("account_email"), {"action_add": "", "email": email}, follow=True)


def act(client, action, email):
    return client.post(reverse("account_email"), {action: "", "email": email}, follow=True)


def test_an_added_address_is_not_the_login_address_before_it_is_confirmed(staff, personas):
    add(staff, NEW)

    assert login_email() == OLD
    response = act(staff, "action_primary", NEW)
    assert login_email() == OLD
    assert "Confirm this address first" in response.content.decode()
    # Removing the login address would fall back to the unconfirmed one.
    act(staff, "action_remove", OLD)
    assert login_email() == OLD


def test_the_confirmed_address_becomes_the_login_address(staff, personas, client):
    add(staff, NEW)
    assert [message.to for message in mail.outbox] == [[NEW]]
    link = re.search(r"http\S+/confirm-email/\S+/", mail.outbox[0].body).group(0)
    key = link.rstrip("/").rsplit("/", 1)[-1]

    staff.post(reverse("account_confirm_email", args=[key]))

    assert login_email() == NEW


def test_an_address_with_a_pending_invitation_cannot_be_added(staff, personas, study_b):
    invitation_create(
        study=study_b, email=NEW, role="coordinator", invited_by=personas["coordinator_b"]
    )
    mail.outbox.clear()

    response = add(staff, NEW.upper())

    assert "pending invitation" in response.content.decode()
    assert not personas["experimenter_a"].emailaddress_set.filter(email__iexact=NEW).exists()
    assert mail.outbox == []
