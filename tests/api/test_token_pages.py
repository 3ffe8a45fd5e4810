"""The account pages for personal API tokens (docs/design/api.md §16.2): a
staff member lists, creates and revokes their own tokens; the secret is shown
once, in the answer to the form, and stored nowhere; the pages are browser
pages, with a session and CSRF, which no API token opens."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from api.models import ApiToken
from audit.models import AuditEntry
from surveys.models import Study, StudyMembership
from tests.api.conftest import READ, READ_WRITE, ApiClient
from tests.personas import make_user

LIST = reverse("api_tokens:list")
Kind = AuditEntry.Kind
SECRET = re.compile(r"shs_[A-Za-z0-9_\-]{20,}")


def _form(studies, **fields) -> dict:
    data = {
        "name": "nightly export",
        "studies": [study.pk for study in studies],
        "access": READ,
        "expires": (timezone.localdate() + timedelta(days=30)).isoformat(),
    }
    data.update(fields)
    return data


def _secret_in(response) -> str:
    found = set(SECRET.findall(response.content.decode()))
    assert len(found) == 1, found
    return found.pop()


def _rows_of(kind):
    return AuditEntry.objects.filter(kind=kind)


# --- Who sees the page --------------------------------------------------------


@pytest.mark.parametrize("persona", ["coordinator_a", "experimenter_a", "coordinator_b"])
def test_every_member_of_a_study_has_the_page(client_for, persona):
    response = client_for(persona).get(LIST)

    assert response.status_code == 200
    assert "max-age=0" in response["Cache-Control"]


def test_staff_without_a_study_has_the_page_and_is_told_why_nothing_can_be_chosen(db):
    given = make_user("admin@example.org")
    given.is_staff = True
    given.save()
    client = Client()
    client.force_login(given)

    response = client.get(LIST)

    assert response.status_code == 200
    assert "You are not a member of any study yet" in response.content.decode()


def test_someone_of_no_study_gets_404(client_for):
    assert client_for("outsider").get(LIST).status_code == 404
    assert client_for("outsider").post(LIST, _form([])).status_code == 404
    assert not ApiToken.objects.exists()


def test_a_former_member_keeps_the_page_to_revoke_their_tokens(
    client_for, personas, token_for, study_a
):
    token, _secret = token_for("experimenter_a", [study_a])
    StudyMembership.objects.filter(user=personas["experimenter_a"]).delete()
    client = client_for("experimenter_a")

    assert client.get(LIST).status_code == 200
    client.post(reverse("api_tokens:revoke", args=[token.pk]))

    token.refresh_from_db()
    assert token.revoked_at is not None


def test_someone_logged_out_is_sent_to_log_in(client):
    response = client.get(LIST)

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login"))


# --- The list -------------------------------------------------------------------


def test_the_list_shows_ones_own_tokens_and_no_secret(client_for, token_for, study_a, study_b):
    mine, my_secret = token_for("coordinator_a", [study_a], access=READ, name="R pipeline")
    theirs, _ = token_for("coordinator_b", [study_b], name="their script")

    page = client_for("coordinator_a").get(LIST).content.decode()

    assert "R pipeline" in page and f"{mine.prefix}…" in page
    assert "Read only" in page and study_a.title in page
    assert "Never" in page  # not used yet
    assert "their script" not in page and theirs.prefix not in page
    assert my_secret not in page


def test_the_list_tells_active_expired_and_revoked_apart(client_for, token_for, study_a):
    token_for("coordinator_a", [study_a], name="live")
    expired, _ = token_for("coordinator_a", [study_a], name="old")
    ApiToken.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(days=1))
    revoked, _ = token_for("coordinator_a", [study_a], name="gone")
    client = client_for("coordinator_a")
    client.post(reverse("api_tokens:revoke", args=[revoked.pk]))

    page = client.get(LIST).content.decode()

    rows = {
        name: row
        for row in page.split("<tr>")[1:]
        for name in ("live", "old", "gone")
        if f"<td>{name}</td>" in row
    }
    assert "Active" in rows["live"] and "/revoke/" in rows["live"]
    assert "Expired" in rows["old"] and "/revoke/" not in rows["old"]
    assert "Revoked" in rows["gone"] and "/revoke/" not in rows["gone"]


def test_the_list_costs_the_same_queries_for_many_tokens(client_for, token_for, study_a, study_b):
    client = client_for("coordinator_a")
    token_for("coordinator_a", [study_a])
    with CaptureQueriesContext(connection) as one:
        client.get(LIST)
    for number in range(5):
        token_for("coordinator_a", [study_a], name=f"token {number}")

    with CaptureQueriesContext(connection) as six:
        client.get(LIST)

    assert len(six) == len(one)


# --- The form ---------------------------------------------------------------------


def test_the_form_offers_only_ones_own_studies_and_a_default_expiry(client_for, study_a, study_b):
    page = client_for("coordinator_a").get(LIST).content.decode()

    assert f'value="{study_a.pk}"' in page and study_a.title in page
    assert study_b.title not in page
    default = timezone.localdate() + timedelta(days=90)
    assert f'value="{default.isoformat()}"' in page


def test_every_field_of_the_form_has_a_label(client_for):
    page = client_for("coordinator_a").get(LIST).content.decode()
    form = page[page.index('<h2 id="new">') :]

    ids = re.findall(r'<input[^>]*\bid="([^"]+)"', form)
    labelled = set(re.findall(r'<label[^>]*\bfor="([^"]+)"', form))
    assert {"id_name", "id_expires", "id_access_0", "id_access_1", "id_studies_0"} <= set(ids)
    assert set(ids) <= labelled
    assert form.count("<legend>") == 2  # the studies and the access, each a named group


def test_creating_shows_the_secret_once_and_stores_only_its_hash(client_for, personas, study_a):
    client = client_for("coordinator_a")

    response = client.post(LIST, _form([study_a], access=READ_WRITE))

    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    page = response.content.decode()
    assert "It will not be shown again" in page
    secret = _secret_in(response)
    assert f"Authorization: Bearer {secret}" in page
    token = ApiToken.objects.get()
    assert token.user == personas["coordinator_a"]
    assert (token.name, token.access) == ("nightly export", READ_WRITE)
    assert list(token.studies.all()) == [study_a]
    row = ApiToken.objects.filter(pk=token.pk).values().get()
    assert all(secret not in str(value) for value in row.values())
    assert secret.startswith(token.prefix)

    again = client.get(LIST)

    assert secret not in again.content.decode()
    assert SECRET.findall(again.content.decode()) == []


def test_creating_writes_one_audit_row_without_the_secret(client_for, study_a):
    response = client_for("coordinator_a").post(LIST, _form([study_a]))
    secret = _secret_in(response)

    rows = list(_rows_of(Kind.API_TOKEN_CREATED))

    assert len(rows) == 1
    assert secret not in str(rows[0].details) and secret not in rows[0].target
    assert rows[0].details["studies"] == [study_a.slug]
    assert all(
        secret not in str(entry.details) + entry.target for entry in AuditEntry.objects.all()
    )


def test_the_token_expires_on_the_chosen_day(client_for, study_a):
    chosen = timezone.localdate() + timedelta(days=366)

    response = client_for("coordinator_a").post(LIST, _form([study_a], expires=chosen.isoformat()))

    assert response.status_code == 200
    token = ApiToken.objects.get()
    assert timezone.localtime(token.expires_at).date() == chosen
    assert token.expires_at - timezone.now() <= timedelta(days=366)


@pytest.mark.parametrize(
    ("days", "error"),
    [
        (0, "Choose a day after today."),
        (-3, "Choose a day after today."),
        (367, "at most 366 days"),
    ],
)
def test_an_expiry_out_of_range_is_refused(client_for, study_a, days, error):
    day = timezone.localdate() + timedelta(days=days)

    response = client_for("coordinator_a").post(LIST, _form([study_a], expires=day.isoformat()))

    assert response.status_code == 200
    assert error in response.content.decode()
    assert not ApiToken.objects.exists()


@pytest.mark.parametrize(
    "change", [{"name": ""}, {"name": "x" * 81}, {"studies": []}], ids=["no name", "long", "none"]
)
def test_a_missing_or_long_name_or_no_study_is_refused(client_for, study_a, change):
    response = client_for("coordinator_a").post(LIST, {**_form([study_a]), **change})

    assert 'class="errors"' in response.content.decode()
    assert not ApiToken.objects.exists()


def test_a_study_one_is_not_a_member_of_is_refused(client_for, study_a, study_b):
    client = client_for("coordinator_a")

    response = client.post(LIST, _form([study_a, study_b]))

    assert response.status_code == 200
    assert "Choose only studies you are a member of." in response.content.decode()
    assert not ApiToken.objects.exists()
    assert not _rows_of(Kind.API_TOKEN_CREATED).exists()


def test_a_study_that_does_not_exist_reads_the_same(client_for, study_a):
    missing = Study.objects.order_by("-pk").first().pk + 100

    response = client_for("coordinator_a").post(LIST, {**_form([study_a]), "studies": [missing]})

    assert "Choose only studies you are a member of." in response.content.decode()
    assert not ApiToken.objects.exists()


# --- Revoking ---------------------------------------------------------------------


def test_revoking_ones_own_token(client_for, token_for, study_a):
    token, secret = token_for("coordinator_a", [study_a], name="old laptop")
    client = client_for("coordinator_a")

    response = client.post(reverse("api_tokens:revoke", args=[token.pk]), follow=True)

    assert response.redirect_chain == [(LIST, 302)]
    assert "The token “old laptop” is revoked." in response.content.decode()
    token.refresh_from_db()
    assert token.revoked_at is not None
    rows = list(_rows_of(Kind.API_TOKEN_REVOKED))
    assert len(rows) == 1
    assert secret not in str(rows[0].details) and secret not in rows[0].target


def test_revoking_twice_writes_one_row(client_for, token_for, study_a):
    token, _ = token_for("coordinator_a", [study_a], name="old laptop")
    client = client_for("coordinator_a")
    client.post(reverse("api_tokens:revoke", args=[token.pk]))

    response = client.post(reverse("api_tokens:revoke", args=[token.pk]), follow=True)

    assert "was revoked already" in response.content.decode()
    assert _rows_of(Kind.API_TOKEN_REVOKED).count() == 1


def test_another_users_token_cannot_be_revoked(client_for, token_for, study_a, study_b):
    theirs, _ = token_for("coordinator_b", [study_b])

    response = client_for("coordinator_a").post(reverse("api_tokens:revoke", args=[theirs.pk]))

    assert response.status_code == 404
    theirs.refresh_from_db()
    assert theirs.revoked_at is None
    assert not _rows_of(Kind.API_TOKEN_REVOKED).exists()


def test_revoking_is_a_post(client_for, token_for, study_a):
    token, _ = token_for("coordinator_a", [study_a])

    response = client_for("coordinator_a").get(reverse("api_tokens:revoke", args=[token.pk]))

    assert response.status_code == 405
    token.refresh_from_db()
    assert token.revoked_at is None


# --- A browser page, not an API ------------------------------------------------


def test_a_post_without_the_csrf_token_is_refused(personas, study_a, token_for):
    token, _ = token_for("coordinator_a", [study_a])
    client = Client(enforce_csrf_checks=True)
    client.force_login(personas["coordinator_a"])

    created = client.post(LIST, _form([study_a]))
    revoked = client.post(reverse("api_tokens:revoke", args=[token.pk]))

    assert (created.status_code, revoked.status_code) == (403, 403)
    assert list(ApiToken.objects.all()) == [token]
    token.refresh_from_db()
    assert token.revoked_at is None


def test_with_the_csrf_token_the_same_post_succeeds(personas, study_a):
    client = Client(enforce_csrf_checks=True)
    client.force_login(personas["coordinator_a"])
    page = client.get(LIST).content.decode()
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]

    response = client.post(LIST, {**_form([study_a]), "csrfmiddlewaretoken": csrf})

    assert response.status_code == 200
    assert ApiToken.objects.count() == 1


def test_an_api_token_opens_no_page(token_for, study_a):
    _token, secret = token_for("coordinator_a", [study_a])
    bearer = ApiClient(secret)

    for address in (reverse("surveys:study_detail", args=[study_a.slug]), LIST):
        response = bearer.get(address)
        assert response.status_code == 302, address
        assert response["Location"].startswith(reverse("account_login")), address


def test_an_api_token_creates_no_token(token_for, study_a):
    """Without a session the CSRF check refuses first; were it passed, the login would."""
    token, secret = token_for("coordinator_a", [study_a])
    lenient = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")

    refused = ApiClient(secret).post(LIST, _form([study_a]))
    redirected = lenient.post(LIST, _form([study_a]))
    not_revoked = lenient.post(reverse("api_tokens:revoke", args=[token.pk]))

    assert refused.status_code == 403
    assert redirected.status_code == 302 and not_revoked.status_code == 302
    assert list(ApiToken.objects.all()) == [token]
    token.refresh_from_db()
    assert token.revoked_at is None


def test_the_account_navigation_links_the_page(client_for):
    page = client_for("coordinator_a").get(reverse("surveys:study_list")).content.decode()

    assert f'href="{LIST}"' in page


@pytest.mark.parametrize(
    ("language", "heading", "warning"),
    [
        ("de", "API-Tokens", "Er wird nicht noch einmal angezeigt."),
        ("fr", "Jetons d’API", "Il ne sera plus affiché."),
    ],
)
def test_the_pages_speak_the_users_language(client_for, study_a, language, heading, warning):
    client = client_for("coordinator_a")
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = language

    listed = client.get(LIST).content.decode()
    created = client.post(LIST, _form([study_a])).content.decode()

    assert f"<h1>{heading}</h1>" in listed
    assert warning in created
    if language == "de":  # the site addresses staff formally (tests/surveys/test_account_pages.py)
        assert not re.search(r"\b(du|dich|dir|dein\w*)\b", listed + created, re.IGNORECASE)
