"""The participant's language on every page they read (docs/design/protocol.md §4.11),
whatever language their browser asks for: a French participant on a German
phone reads French in the page, its fragments, the protocol's refusals and the
JSON answers of the autosave and the chat. On the lab's device the
experimenter's own steps stay in the experimenter's language."""

import json

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient, Client
from django.urls import reverse
from django.utils import translation
from django.utils.html import escape
from django.utils.translation import gettext

from surveys.models import Study, StudySession
from surveys.protocol.state import WrongStep
from surveys.protocol.variants import missing_text
from surveys.steps import Step
from surveys.views.chat import STREAM
from tests.surveys.remote import RemoteRun, take_url
from tests.surveys.retests import RetestVisit, link_on, make_due, with_retest
from tests.surveys.runner import NEUTRAL_FEEDBACK, SessionRun, answers

GERMAN_PHONE = {"HTTP_ACCEPT_LANGUAGE": "de-DE,de;q=0.9"}
ENGLISH_BROWSER = {"HTTP_ACCEPT_LANGUAGE": "en-GB,en;q=0.9"}


def in_language(language, make):
    with translation.override(language):
        return str(make())


def wrong_step_text(token, language, posted):
    session = StudySession.objects.get(token=token)
    return in_language(language, lambda: WrongStep(session, posted))


@pytest.fixture
def french_on_german_phone(remote_study):
    """A remote participant who chose French, on a phone set to German, in the
    first chat of a naturalistic study (two messages and five minutes to go)."""
    run = RemoteRun(remote_study, "fr", Client(**GERMAN_PHONE))
    # Made naturalistic once the session runs: its task texts are not the point here.
    values = {"protocol": Study.Protocol.NATURALISTIC, "min_turns": 2, "min_minutes": 5}
    Study.objects.filter(pk=remote_study.pk).update(**values)
    assert run.consent().status_code == 302
    return run


def test_still_needed_is_in_the_participants_language(french_on_german_phone):
    response = french_on_german_phone.get()

    page = response.content.decode()
    missing = {"turns": 2, "minutes": 5}
    assert escape(in_language("fr", lambda: missing_text(missing))) in page
    assert escape(in_language("de", lambda: missing_text(missing))) not in page
    assert response["Content-Language"] == "fr"


def test_a_refused_form_says_why_in_the_participants_language(french_on_german_phone):
    run = french_on_german_phone

    response = run.post("block1_shs", q1="1")

    assert response.status_code == 409
    page = response.content.decode()
    assert escape(wrong_step_text(run.token, "fr", "block1_shs")) in page
    assert escape(wrong_step_text(run.token, "de", "block1_shs")) not in page


def test_the_autosave_refuses_in_the_participants_language(french_on_german_phone):
    run = french_on_german_phone
    url = reverse("surveys:session_answer", args=[run.token])

    response = run.client.post(
        url, {"step": "block1_shs", "item": "q1", "value": "1", "sequence": "1"}
    )

    assert response.status_code == 409
    assert response.json()["error"] == wrong_step_text(run.token, "fr", "block1_shs")


def test_the_chat_refuses_in_the_participants_language(french_on_german_phone):
    """The streaming chat's refusal: an async view, whose access check runs on a
    worker thread; the language it activates there holds for the answer."""
    run = french_on_german_phone

    response = run.send("Bonjour", step="block2_interaction", Accept=STREAM)

    assert response.status_code == 409
    error = json.loads(response.content)["error"]
    assert error == wrong_step_text(run.token, "fr", "block2_interaction")


def test_the_streamed_answer_comes_with_the_turns_in_the_participants_language(remote_study):
    """The turns the stream's last line brings (their tag forms) are drawn after
    the access check, on another thread: in the language it activated."""
    run = RemoteRun(remote_study, "fr", Client(**GERMAN_PHONE))
    run.consent()
    client = AsyncClient(**GERMAN_PHONE)
    client.cookies = run.client.cookies

    async def send():
        url = reverse("surveys:session_chat", args=[run.token])
        data = {"step": "block1_interaction", "text": "Quelle est la capitale de l'Australie ?"}
        response = await client.post(url, data, headers={"accept": STREAM})
        return [json.loads(line) async for line in response.streaming_content]

    turns = async_to_sync(send)()[-1]["stored"]["turns"]

    assert in_language("fr", lambda: gettext("Verified Knowledge")) in turns
    assert in_language("de", lambda: gettext("Verified Knowledge")) not in turns


def test_the_public_link_names_each_language_in_itself(remote_study):
    Study.objects.filter(pk=remote_study.pk).update(languages=["en", "de", "fr"])

    page = Client(**GERMAN_PHONE).get(take_url(remote_study)).content.decode()

    for code, name in (("en", "English"), ("de", "Deutsch"), ("fr", "Français")):
        assert f'<span lang="{code}">{name}</span>' in page
    assert "Französisch" not in page


@pytest.fixture
def lab(personas, study_a):
    """A French session run on the lab's device by an experimenter whose browser
    asks for English."""
    client = Client(**ENGLISH_BROWSER)
    client.force_login(personas["experimenter_a"])
    return SessionRun(client, study_a, "fr")


def test_the_hand_back_page_refuses_a_stale_form_in_the_participants_language(lab):
    assert lab.consent().status_code == 302  # the device waits to be handed back

    response = lab.consent()  # the participant's second click

    assert response.status_code == 409
    page = response.content.decode()
    assert '<html lang="fr">' in page
    assert escape(wrong_step_text(lab.token, "fr", "consent")) in page
    assert escape(wrong_step_text(lab.token, "en", "consent")) not in page


def test_the_experimenters_steps_stay_in_the_experimenters_language(lab):
    lab.consent()
    lab.hand_back()

    page = lab.get().content.decode()

    assert '<html lang="en">' in page
    assert escape(in_language("en", lambda: gettext("Log a prompt"))) in page


def test_the_administrator_feedback_is_in_the_participants_language(lab):
    lab.advance_to("feedback")
    lab.hand_back()

    page = lab.get().content.decode()

    assert '<html lang="fr">' in page
    assert escape(in_language("fr", lambda: gettext("Administrator feedback"))) in page
    # The experimenter then goes on in their own language.
    done = lab.client.post(lab.url, {"step": "feedback", **NEUTRAL_FEEDBACK}, follow=True)
    code = lab.session.participant.code
    assert f"Session of {code} complete." in done.content.decode()
    assert '<html lang="en">' in done.content.decode()


def test_a_form_too_large_to_read_is_refused_in_the_participants_language(
    french_on_german_phone, settings
):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    run = french_on_german_phone

    response = run.send("x" * 2000, step="block1_interaction")

    assert response.status_code == 413
    page = response.content.decode()
    assert escape(in_language("fr", lambda: gettext("The form was not read"))) in page
    assert '<html lang="fr">' in page


def test_the_retest_refuses_in_the_participants_language(lab, study_a):
    with_retest(study_a)
    lab.advance_to(Step.FEEDBACK)
    path, _token = link_on(lab.get())
    lab.hand_back()
    lab.feedback()
    make_due()
    visit = RetestVisit(path, Client(**GERMAN_PHONE))
    visit.get()

    response = visit.post("block2_shs", **answers())

    assert response.status_code == 409
    page = response.content.decode()
    assert '<html lang="fr">' in page
    refusal = "This form belongs to another part of the retest. Nothing was saved; continue here."
    assert escape(in_language("fr", lambda: gettext(refusal))) in page
    assert escape(in_language("de", lambda: gettext(refusal))) not in page


def test_a_missing_page_is_in_the_participants_language(french_on_german_phone, client, db):
    response = french_on_german_phone.client.get("/retest/no-such-link/slip/")

    assert response.status_code == 404
    page = response.content.decode()
    assert escape(in_language("fr", lambda: gettext("Page not found"))) in page
    assert '<html lang="fr">' in page
    # Without a session, the browser's language.
    response = client.get("/no/such/page/", **GERMAN_PHONE)
    assert response.status_code == 404
    assert escape(in_language("de", lambda: gettext("Page not found"))) in response.content.decode()
