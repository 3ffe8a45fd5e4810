"""A remote participant reaches their own session and nothing else: a signed
cookie names it, the participant code resumes it on another device, and every
other session and staff page stays closed (docs/design/remote.md §11.2)."""

import pytest
from django.core import signing
from django.test import Client
from django.urls import reverse

from surveys.participant_access import COOKIE
from surveys.steps import Step
from tests.surveys.remote import RemoteRun, take_url


@pytest.fixture
def study(remote_study):
    return remote_study


def at_block1_chat(study, **kwargs) -> RemoteRun:
    run = RemoteRun(study, **kwargs)
    assert run.consent().status_code == 302
    return run


def test_the_link_again_resumes_at_the_stored_step_on_the_same_device(study):
    run = at_block1_chat(study)

    response = run.client.get(take_url(study))

    assert response.status_code == 302 and response.url == run.url
    assert run.get().status_code == 200
    assert study.sessions.count() == 1
    # A second start from the same device resumes too: no second session.
    again = run.client.post(take_url(study), {"action": "start", "language": "en"})
    assert again.url == run.url and study.sessions.count() == 1


def test_the_participant_code_resumes_on_a_second_device(study):
    run = at_block1_chat(study)
    code = run.session.participant.code
    other_device = Client()
    assert other_device.get(run.url).status_code == 302  # no cookie: the login page

    typed = f"  {code.lower().replace('p-', '')} "  # as a person may type it
    response = other_device.post(take_url(study), {"action": "resume", "code": typed})

    assert response.status_code == 302 and response.url == run.url
    page = other_device.get(run.url)
    assert page.status_code == 200 and 'id="chat"' in page.content.decode()
    assert other_device.get(take_url(study)).url == run.url  # the cookie is set there now


def test_a_wrong_code_resumes_nothing(study):
    at_block1_chat(study)

    response = Client().post(take_url(study), {"action": "resume", "code": "P-AAAAAAAA"})

    assert response.status_code == 400
    assert "No running session of this study has this code" in response.content.decode()
    assert COOKIE not in response.cookies


def test_a_code_of_an_ended_session_resumes_nothing(study):
    run = at_block1_chat(study)
    run.client.post(reverse("surveys:session_withdraw", args=[run.token]))
    code = "P-" + "X" * 8  # the participant row is gone with the withdrawal

    response = Client().post(take_url(study), {"action": "resume", "code": code})

    assert response.status_code == 400


def test_the_cookie_opens_no_other_session(study, make_session):
    mine = at_block1_chat(study)
    other = at_block1_chat(study)
    supervised = make_session()
    client = mine.client

    for token in (other.token, supervised.token):
        assert client.get(reverse("surveys:session", args=[token])).status_code == 404
        for name in ("session_withdraw", "session_answer", "session_chat", "session_chat_retry"):
            url = reverse(f"surveys:{name}", args=[token])
            assert client.post(url, {"step": "block1_interaction"}).status_code == 404, name
    other.send("Hello?")
    turn = other.turns()[0]
    tag = reverse("surveys:session_chat_tag", args=[other.token, turn.pk])
    tagged = client.post(tag, {"step": "block1_interaction", "category": "verified"})
    assert tagged.status_code == 404
    assert other.turns()[0].prompt_id is None


def test_a_forged_or_unsigned_cookie_opens_nothing(study):
    run = at_block1_chat(study)
    forged = Client()
    forged.cookies[COOKIE] = run.token  # the token without a signature
    assert "/accounts/login/" in forged.get(run.url).url  # as if there were no cookie
    forged.cookies[COOKIE] = signing.get_cookie_signer(salt="another purpose").sign(run.token)
    assert "/accounts/login/" in forged.get(run.url).url


def test_staff_pages_are_closed_to_the_participant(study):
    run = at_block1_chat(study)

    for url in (
        reverse("surveys:study_list"),
        reverse("surveys:study_detail", args=[study.slug]),
        reverse("surveys:monitor", args=[study.slug]),
        reverse("surveys:session_transcripts", args=[run.token]),
        reverse("surveys:session_record", args=[study.slug, run.token]),
    ):
        response = run.client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response.url, url


def test_the_chat_views_take_the_participants_cookie(study):
    run = at_block1_chat(study)

    assert run.send("What is the capital of Australia?").status_code == 302
    user, answer = run.turns()
    assert run.tag(user, "glatteis", is_challenge=True).status_code == 302
    assert run.untag(user).status_code == 302
    assert answer.role == "assistant" and run.session.step == Step.BLOCK1_INTERACTION


def test_staff_of_the_study_still_see_the_remote_session(study, personas, client_for):
    from surveys.models import StudyMembership

    run = at_block1_chat(study)
    StudyMembership.objects.create(
        user=personas["coordinator_a"], study=study, role=StudyMembership.Role.COORDINATOR
    )

    assert client_for("coordinator_a").get(run.url).status_code == 200
    assert client_for("experimenter_a").get(run.url).status_code == 404
