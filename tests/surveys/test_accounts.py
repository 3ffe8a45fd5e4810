from django.core import mail
from django.urls import reverse

from surveys.models import StudyMembership
from tests.personas import PASSWORD


def test_staff_log_in_with_email_and_password(client, personas):
    response = client.post(
        reverse("account_login"), {"login": "coord-a@example.org", "password": PASSWORD}
    )
    assert response.status_code == 302
    assert client.get(reverse("surveys:study_list")).status_code == 200


def test_there_is_no_public_sign_up(client, db):
    from surveys.models import User

    response = client.post(
        reverse("account_signup"),
        {"email": "walk-in@example.org", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert response.status_code == 200
    assert not User.objects.filter(email="walk-in@example.org").exists()


def test_password_reset_sends_a_mail(client, personas):
    response = client.post(reverse("account_reset_password"), {"email": "exp-a@example.org"})
    assert response.status_code == 302
    assert len(mail.outbox) == 1
    assert "exp-a@example.org" in mail.outbox[0].to


def test_failed_logins_are_rate_limited(client, personas):
    url = reverse("account_login")
    for _ in range(5):
        client.post(url, {"login": "coord-a@example.org", "password": "wrong"})

    # After the limit even the right password is refused for a while.
    response = client.post(url, {"login": "coord-a@example.org", "password": PASSWORD})

    assert "Too many failed login attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_coordinator_of_study_requiring_mfa_is_sent_to_set_up_totp(client_for, study_a):
    study_a.require_coordinator_mfa = True
    study_a.save()

    response = client_for("coordinator_a").get(reverse("surveys:study_detail", args=[study_a.slug]))

    assert response.status_code == 302
    assert response.url == reverse("mfa_activate_totp")


def test_mfa_requirement_does_not_block_experimenters(client_for, study_a):
    study_a.require_coordinator_mfa = True
    study_a.save()
    response = client_for("experimenter_a").get(
        reverse("surveys:study_detail", args=[study_a.slug])
    )
    assert response.status_code == 200


def test_coordinator_with_totp_passes(client_for, study_a, personas):
    from allauth.mfa.models import Authenticator

    study_a.require_coordinator_mfa = True
    study_a.save()
    Authenticator.objects.create(
        user=personas["coordinator_a"], type=Authenticator.Type.TOTP, data={"secret": "x"}
    )
    response = client_for("coordinator_a").get(reverse("surveys:study_detail", args=[study_a.slug]))
    assert response.status_code == 200
    assert StudyMembership.objects.filter(study=study_a).count() == 2


def _totp(secret: str, at: float | None = None) -> str:
    """RFC 6238 code (SHA-1, 30 s, 6 digits), written out independently of allauth."""
    import base64
    import hashlib
    import hmac
    import struct
    import time

    key = base64.b32decode(secret.upper() + "=" * (-len(secret) % 8))
    counter = int((at or time.time()) // 30)
    digest = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    number = struct.unpack(">I", digest[offset : offset + 4])[0] & 0x7FFFFFFF
    return f"{number % 1_000_000:06d}"


def test_a_coordinator_activates_totp_and_then_needs_it_to_log_in(client, personas, study_a):
    from allauth.mfa.models import Authenticator

    study_a.require_coordinator_mfa = True
    study_a.save()
    client.post(reverse("account_login"), {"login": "coord-a@example.org", "password": PASSWORD})
    # Setting up a second factor asks for the password once more (allauth's reauthentication).
    assert client.get(reverse("mfa_activate_totp")).url.startswith(
        reverse("account_reauthenticate")
    )
    client.post(reverse("account_reauthenticate"), {"password": PASSWORD})
    page = client.get(reverse("mfa_activate_totp"))
    assert page.status_code == 200
    secret = page.context["form"].secret

    response = client.post(reverse("mfa_activate_totp"), {"code": _totp(secret)})

    assert response.status_code == 302
    assert Authenticator.objects.filter(user=personas["coordinator_a"], type="totp").exists()
    assert client.get(reverse("surveys:study_detail", args=[study_a.slug])).status_code == 200

    client.post(reverse("account_logout"))
    step = client.post(
        reverse("account_login"), {"login": "coord-a@example.org", "password": PASSWORD}
    )
    assert step.url == reverse("mfa_authenticate")
    assert "_auth_user_id" not in client.session  # the password alone is not enough
    client.post(reverse("mfa_authenticate"), {"code": "000000"})
    assert "_auth_user_id" not in client.session
    client.post(reverse("mfa_authenticate"), {"code": _totp(secret)})
    assert client.session["_auth_user_id"] == str(personas["coordinator_a"].pk)
