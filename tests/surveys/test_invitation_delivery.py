"""A study title is one line, and an invitation's e-mail goes out from a task
once the invitation has committed. A mail server that refuses it or cannot be
reached never gives a 500 nor an invitation nobody knows was not received: it
is listed as "sending failed", and the coordinator sends it again. (A title
with a line break used to make the mail header, and so the whole request, fail
after the invitation was stored.)

The tests that send mail commit for real (transaction=True), as a request does
in production, so the e-mail task runs on commit exactly as it does there."""

import re
import smtplib
import time
from urllib.parse import urlsplit

import pytest
from django.core import mail
from django.core.exceptions import ValidationError
from django.core.mail.backends.base import BaseEmailBackend
from django.db import transaction
from django.urls import reverse

from surveys.invitations import invitation_create
from surveys.models import Invitation, Study
from tests.surveys.test_studies import _study_form


class RefusingBackend(BaseEmailBackend):
    """A mail server that answers every message with an SMTP error."""

    def send_messages(self, email_messages):
        raise smtplib.SMTPRecipientsRefused({"new.person@example.org": (550, b"refused")})


class UnreachableBackend(BaseEmailBackend):
    """A mail server that cannot be reached at all."""

    def send_messages(self, email_messages):
        raise ConnectionRefusedError(111, "Connection refused")


LOCMEM = "django.core.mail.backends.locmem.EmailBackend"
committed = pytest.mark.django_db(transaction=True)


def invite(client, study, email="new.person@example.org", follow=True):
    return client.post(
        reverse("surveys:member_list", args=[study.slug]),
        {"email": email, "role": "experimenter"},
        follow=follow,
    )


def team_page(client, study) -> str:
    return client.get(reverse("surveys:member_list", args=[study.slug])).content.decode()


@pytest.mark.parametrize("title", ["Two\nlines", "Two\r\nlines", "Carriage\rreturn", "A\u2028B"])
def test_a_study_title_with_a_line_break_is_refused(title, client_for, study_a):
    client = client_for("coordinator_a")

    created = client.post(reverse("surveys:study_create"), _study_form(title=title, slug="two"))
    edited = client.post(
        reverse("surveys:study_edit", args=[study_a.slug]),
        _study_form(title=title, slug=study_a.slug),
    )

    for response in (created, edited):
        assert response.status_code == 200
        assert "single line" in str(response.context["form"].errors["title"])
    assert not Study.objects.filter(slug="two").exists()
    study_a.refresh_from_db()
    assert study_a.title == "Study study-a"
    with pytest.raises(ValidationError) as refused:
        Study(title=title, slug="model", languages=["en"]).full_clean()
    assert "title" in refused.value.message_dict


@committed
def test_an_older_title_with_a_line_break_still_sends_invitations(client_for, study_a):
    Study.objects.filter(pk=study_a.pk).update(title="Line one\r\nline two")

    response = invite(client_for("coordinator_a"), study_a)

    assert response.status_code == 200
    assert len(mail.outbox) == 1
    assert mail.outbox[0].subject == "Invitation to the study “Line one line two”"
    assert Invitation.objects.get().sent_at is not None


@committed
@pytest.mark.parametrize("backend", ["RefusingBackend", "UnreachableBackend"])
def test_a_failed_send_is_reported_and_listed_as_not_sent(backend, client_for, study_a, settings):
    settings.EMAIL_BACKEND = f"tests.surveys.test_invitation_delivery.{backend}"
    coordinator = client_for("coordinator_a")

    response = invite(coordinator, study_a, follow=False)

    assert response.status_code == 302  # not a 500
    invitation = Invitation.objects.get()
    assert invitation.sent_at is None
    assert invitation.send_failed_at is not None
    page = coordinator.get(response.url).content.decode()
    assert "could not be sent" in page
    assert "Invitation sent" not in page
    assert "not sent — sending failed" in page and "Send again" in page
    assert "new.person@example.org" in page


@committed
def test_an_unsent_invitation_is_sent_again_and_replaced(client_for, study_a, settings, client):
    coordinator = client_for("coordinator_a")
    settings.EMAIL_BACKEND = "tests.surveys.test_invitation_delivery.RefusingBackend"
    invite(coordinator, study_a)
    settings.EMAIL_BACKEND = LOCMEM

    response = invite(coordinator, study_a)

    page = response.content.decode()
    assert "Invitation sent to new.person@example.org" in page
    assert "sending failed" not in page
    invitation = Invitation.objects.get()  # the unsent one is gone
    assert invitation.sent_at is not None
    assert invitation.send_failed_at is None
    assert len(mail.outbox) == 1
    link = re.search(r"http\S+/invitations/\S+/", mail.outbox[0].body).group(0)
    assert client.get(urlsplit(link).path).status_code == 200


@committed
def test_a_sent_pending_invitation_still_blocks_a_second_one(client_for, study_a):
    coordinator = client_for("coordinator_a")
    invite(coordinator, study_a)

    response = invite(coordinator, study_a)

    assert "still pending" in response.content.decode()
    assert Invitation.objects.count() == 1
    assert len(mail.outbox) == 1


@committed
def test_resending_a_failed_invitation_sends_it_and_clears_the_failure(
    client_for, study_a, settings, client
):
    coordinator = client_for("coordinator_a")
    settings.EMAIL_BACKEND = "tests.surveys.test_invitation_delivery.RefusingBackend"
    invite(coordinator, study_a)
    failed = Invitation.objects.get()
    settings.EMAIL_BACKEND = LOCMEM  # the mail server works again

    response = coordinator.post(
        reverse("surveys:invitation_resend", args=[study_a.slug, failed.pk]), follow=True
    )

    page = response.content.decode()
    assert "A new link was sent to new.person@example.org" in page
    assert "sending failed" not in page
    invitation = Invitation.objects.get()
    assert invitation.sent_at is not None and invitation.send_failed_at is None
    assert [message.to for message in mail.outbox] == [["new.person@example.org"]]
    link = re.search(r"http\S+/invitations/\S+/", mail.outbox[0].body).group(0)
    assert client.get(urlsplit(link).path).status_code == 200


@committed
def test_an_invitation_that_is_rolled_back_sends_no_mail(study_a, personas):
    coordinator = personas["coordinator_a"]

    with pytest.raises(RuntimeError), transaction.atomic():
        invitation_create(
            study=study_a, email="rolled.back@example.org", role="experimenter",
            invited_by=coordinator,
        )  # fmt: skip
        raise RuntimeError("something later in the same transaction fails")
    invitation_create(
        study=study_a, email="committed@example.org", role="experimenter", invited_by=coordinator
    )

    assert [message.to for message in mail.outbox] == [["committed@example.org"]]
    assert list(Invitation.objects.values_list("email", flat=True)) == ["committed@example.org"]


def test_a_worker_sends_the_invitation_in_the_coordinators_language(
    celery_worker_process, client_for, study_a
):
    coordinator = client_for("coordinator_a")
    coordinator.post(reverse("set_language"), {"language": "de", "next": "/"})

    response = invite(coordinator, study_a, follow=False)

    assert response.status_code == 302  # the request did not wait for the mail server
    invitation = Invitation.objects.get()
    deadline = time.monotonic() + 30
    while invitation.sent_at is None and time.monotonic() < deadline:
        time.sleep(0.2)
        invitation.refresh_from_db()
    log = celery_worker_process.log_text()
    assert invitation.sent_at is not None and invitation.send_failed_at is None, log
    # The worker's mail backend is the console: the mail is in its log.
    assert "coord-a@example.org lädt Sie ein" in log
    assert re.search(r"http://testserver/invitations/\S+/", log)
