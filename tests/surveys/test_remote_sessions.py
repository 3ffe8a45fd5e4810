"""A remote session from the public link to the end page: the participant acts
on every step, there is no experimenter and no feedback, and the end page
gives a completion code (docs/design/remote.md §11.1)."""

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from surveys.models import FeedbackResponse, StepRecord, Study, StudyMembership
from surveys.steps import Step
from tests.surveys.remote import RemoteRun, take_url


@pytest.fixture
def study(remote_study):
    return remote_study


def test_a_remote_session_runs_from_the_link_to_the_completion_code(study):
    run = RemoteRun(study, language="de")
    session = run.session
    assert (session.remote, session.experimenter, session.language) == (True, None, "de")
    assert session.first_system != session.second_system
    consent_page = run.get().content.decode()
    assert session.participant.code in consent_page
    assert "Information about remote [de]" in consent_page

    session = run.complete()

    assert session.step == Step.COMPLETE
    assert len(session.completion_code) == 10
    steps = list(StepRecord.objects.filter(session=session).values_list("step", flat=True))
    assert Step.FEEDBACK not in steps and Step.DEMOGRAPHICS in steps
    assert not FeedbackResponse.objects.filter(session=session).exists()
    assert [e.block for e in session.evaluations.submitted()] == [1, 2]
    for block in (1, 2):
        assert [t.role for t in run.turns(block)] == ["user", "assistant"] * 2
    end = run.get()
    assert end.status_code == 200 and end["Content-Language"] == "de"
    assert session.completion_code in end.content.decode()
    assert "http-equiv" not in end.content.decode()  # no completion URL: no redirect


def test_every_page_is_the_participants_own(study):
    run = RemoteRun(study)
    run.consent()

    page = run.get().content.decode()

    assert "participant-mode" in page
    assert "countdown" not in page and "/studies/" not in page
    assert "Hand the device" not in page
    assert 'id="chat"' in page


def test_the_minimum_of_prompts_holds_for_a_remote_participant(study):
    run = RemoteRun(study)
    run.consent()

    refused = run.chat_block(1, categories=("verified",))

    assert refused.status_code == 409
    assert run.session.step == Step.BLOCK1_INTERACTION
    assert run.post("block1_interaction", override_reason="No time").status_code == 302
    assert run.session.step == Step.BLOCK1_SHS


def test_a_completion_url_gets_the_code_and_the_end_page_sends_the_participant_there(study):
    study.completion_url = "https://panel.example.org/done?cc={code}"
    study.save()
    run = RemoteRun(study)
    session = run.complete()

    page = run.get().content.decode()

    target = f"https://panel.example.org/done?cc={session.completion_code}"
    assert f'<meta http-equiv="refresh" content="3;url={escape(target)}">' in page
    assert f'href="{escape(target)}"' in page


def test_withdrawal_deletes_the_remote_participants_data(study):
    run = RemoteRun(study)
    run.consent()
    run.chat_block(1)

    run.client.post(f"/sessions/{run.token}/withdraw/")

    session = run.session
    assert session.step == Step.WITHDRAWN and session.participant is None
    assert session.completion_code == ""
    page = run.get().content.decode()
    assert "You have withdrawn" in page and "experimenter" not in page


def test_the_link_of_a_study_that_is_not_active_starts_nothing(study):
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    client = Client()
    response = client.post(take_url(study), {"action": "start", "language": "en"})

    assert response.status_code == 200
    assert "not taking participants" in response.content.decode()
    assert not study.sessions.exists()


def test_a_supervised_study_has_no_public_link(study):
    Study.objects.filter(pk=study.pk).update(mode=Study.Mode.SUPERVISED)

    assert Client().get(take_url(study)).status_code == 404


def test_coordinators_see_the_completion_code_in_the_monitor_and_the_record(
    study, personas, client_for, django_assert_max_num_queries
):
    StudyMembership.objects.create(
        user=personas["coordinator_a"], study=study, role=StudyMembership.Role.COORDINATOR
    )
    code = RemoteRun(study).complete().completion_code
    RemoteRun(study).consent()  # one in progress beside it
    coordinator = client_for("coordinator_a")

    with django_assert_max_num_queries(30):
        monitor = coordinator.get(reverse("surveys:monitor", args=[study.slug]))
    record_url = reverse("surveys:session_record", args=[study.slug, run_token(study, code)])
    record = coordinator.get(record_url).content.decode()

    assert monitor.status_code == 200
    page = monitor.content.decode()
    assert code in page and "remote participants (no experimenter)" in page
    assert f"completion code {code}" in record


def run_token(study, completion_code):
    return study.sessions.get(completion_code=completion_code).token
