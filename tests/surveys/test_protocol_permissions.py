"""Every session, participant and monitor URL, for every persona: members of the
study reach their sessions; everyone else gets 404 (anonymous: the login page),
and nothing changes."""

import pytest
from django.urls import reverse

from surveys.models import Evaluation, StudySession
from surveys.steps import Step
from tests.surveys.runner import SessionRun

# url name: (method, personas that reach it)
MEMBERS = {"coordinator_a", "experimenter_a"}
COORDINATOR = {"coordinator_a"}
SESSION_URLS = {
    "session_start": ("post", MEMBERS),
    "session": ("get", MEMBERS),
    "session_prompt_add": ("post", MEMBERS),
    "session_prompt_remove": ("post", MEMBERS),
    "session_answer": ("post", MEMBERS),
    "session_withdraw": ("get", MEMBERS),
    "session_pilot_request": ("post", MEMBERS),
    "session_record": ("get", COORDINATOR),
    "session_pilot": ("post", COORDINATOR),
    "session_erase": ("post", COORDINATOR),
    "session_find": ("get", COORDINATOR),
    "evaluation_correct": ("post", COORDINATOR),
}
PERSONAS = ["coordinator_a", "coordinator_b", "experimenter_a", "outsider", "anonymous"]


@pytest.fixture
def running_session(study_a, client_for, django_capture_on_commit_callbacks):
    run = SessionRun(client_for("experimenter_a"), study_a)
    with django_capture_on_commit_callbacks(execute=True):
        run.advance_to(Step.BLOCK2_INTERACTION)
    run.log_prompt("block2_interaction", "verified")
    return run


def _kwargs(name, run):
    session = run.session
    if name in ("session_start", "session_find"):
        return {"slug": session.study.slug}
    if name in ("session_record", "session_pilot", "session_erase"):
        return {"slug": session.study.slug, "token": session.token}
    if name == "evaluation_correct":
        return {"slug": session.study.slug, "pk": session.evaluations.get().pk}
    if name == "session_prompt_remove":
        return {"token": session.token, "pk": session.blocks.get(block=2).prompts.get().pk}
    return {"token": session.token}


def _state(run):
    session = StudySession.objects.get(pk=run.session.pk)
    evaluation = Evaluation.objects.get(session=session)
    prompts = session.blocks.get(block=2).prompts.count()
    return (
        session.step,
        session.is_pilot,
        session.pilot_requested_at,
        evaluation.answers,
        prompts,
        StudySession.objects.count(),
    )


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("name", sorted(SESSION_URLS))
def test_session_urls_answer_404_outside_the_study(name, persona, running_session, client_for):
    method, allowed = SESSION_URLS[name]
    url = reverse(f"surveys:{name}", kwargs=_kwargs(name, running_session))
    before = _state(running_session)
    data = {
        "step": "block2_interaction",
        "language": "en",
        "item": "q1",
        "new_value": "-2",
        "reason": "typo",
        "value": "1",
        "is_pilot": "1",
        "category": "verified",
    }

    client = client_for(persona)
    response = client.get(url) if method == "get" else client.post(url, data)

    if persona == "anonymous":
        assert response.status_code == 302
        assert response.url.startswith(reverse("account_login"))
    elif persona in allowed:
        assert response.status_code in (200, 302, 400, 409)
    else:
        assert response.status_code == 404
    if persona not in allowed:
        assert _state(running_session) == before


def test_a_participant_page_never_shows_another_session(study_a, client_for):
    client = client_for("experimenter_a")
    first, second = SessionRun(client, study_a), SessionRun(client, study_a)
    page = first.get().content.decode()
    assert second.token not in page
    assert second.session.participant.code not in page
    assert first.token in page  # its own forms post back to itself
