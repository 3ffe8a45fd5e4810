"""The account pages (allauth) as staff see them: the login page says
accounts come by invitation and links to no sign-up; in German every page
addresses people as "Sie", as the rest of the platform does, although
allauth's own German catalogue uses "du" in places."""

import re

import pytest
from django.core import mail
from django.urls import reverse
from django.utils import translation

from tests.personas import PASSWORD

# Informal German forms allauth's catalogue uses ("du", "dein", "gib", ...).
INFORMAL = re.compile(
    r"\b(du|dich|dir|dein\w*|bist|hast|kannst|musst|gib|kontaktiere|versuche|lass|erhältst)\b",
    re.IGNORECASE,
)


def _shown(response) -> str:
    page = response.content.decode()
    main = page[page.index("<main") : page.index("</main>")]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", main))


def _de(client):
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "de"
    return client


def test_the_login_page_says_accounts_come_by_invitation(client, db):
    response = client.get(reverse("account_login"))
    page = response.content.decode()
    assert "Accounts are created by invitation" in page
    assert reverse("account_signup") not in page
    assert "sign up" not in page.lower()


def test_the_german_login_page_uses_sie_and_has_no_sign_up(client, db):
    shown = _shown(_de(client).get(reverse("account_login")))
    assert "Konten werden nur auf Einladung angelegt" in shown
    assert INFORMAL.findall(shown) == []


@pytest.mark.parametrize(
    "name",
    ["account_login", "account_reset_password", "account_reset_password_done", "account_logout"],
)
def test_german_entrance_pages_use_sie(client, personas, name):
    if name == "account_logout":
        client.force_login(personas["experimenter_a"])
    shown = _shown(_de(client).get(reverse(name)))
    assert INFORMAL.findall(shown) == [], shown


def test_german_pages_of_a_logged_in_user_use_sie(client, personas):
    client = _de(client)
    client.force_login(personas["experimenter_a"])
    for name in ("account_change_password", "mfa_index", "mfa_activate_totp"):
        # Setting up TOTP first asks for the password again (the reauthentication page).
        shown = _shown(client.get(reverse(name), follow=True))
        assert INFORMAL.findall(shown) == [], (name, shown)
    activate = client.post(
        reverse("account_reauthenticate") + "?next=" + reverse("mfa_activate_totp"),
        {"password": PASSWORD},
        follow=True,
    )
    shown = _shown(activate)
    assert "Authenticator" in shown and INFORMAL.findall(shown) == [], shown
    wrong = client.post(
        reverse("account_change_password"),
        {"oldpassword": "not-it", "password1": "x-long-pass-1", "password2": "x-long-pass-2"},
    )
    shown = _shown(wrong)
    assert "Sie müssen zweimal dasselbe Passwort eingeben." in shown
    assert INFORMAL.findall(shown) == [], shown


def test_a_bad_reset_link_in_german_uses_sie(client, db):
    shown = _shown(_de(client).get("/accounts/password/reset/key/1-not-a-key/", follow=True))
    assert "Bitte fordern Sie" in shown
    assert INFORMAL.findall(shown) == [], shown


def test_the_german_password_reset_mail_uses_sie(client, personas):
    _de(client).post(reverse("account_reset_password"), {"email": "exp-a@example.org"})
    body = mail.outbox[-1].body
    assert "Sie erhalten diese E-Mail" in body
    assert INFORMAL.findall(body) == [], body


@pytest.mark.parametrize(
    "message",
    [
        "Too many failed login attempts. Try again later.",
        "You are about to deactivate authenticator app based authentication. Are you sure?",
        "You are about to generate a new set of recovery codes for your account.",
        "Are you sure you want to sign out?",
    ],
)
def test_our_catalogue_takes_precedence_over_allauths(message):
    with translation.override("de"):
        german = translation.gettext(message)
    assert german != message and INFORMAL.findall(german) == [], german
