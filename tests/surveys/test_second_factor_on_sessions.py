"""A study that requires TOTP of its coordinators requires it on every page of
the study, the session runner and the SHS autosave included (not only the
monitor, the records and the downloads)."""

import itertools

import pytest
from allauth.mfa.models import Authenticator
from django.urls import reverse

from surveys.models import Evaluation, PromptEntry
from surveys.steps import Step
from tests.surveys.runner import SessionRun


@pytest.fixture
def run_at_shs(study_a, client_for):
    """A session of study A at its first SHS, run by the experimenter; then the
    study starts requiring a second factor of its coordinators."""
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    run.get()
    study_a.require_coordinator_mfa = True
    study_a.save()
    return run


_SEQUENCE = itertools.count(1)


def autosave(client, run, value="2"):
    # Autosaves are numbered: an older one never overwrites a newer answer.
    return client.post(
        reverse("surveys:session_answer", args=[run.token]),
        {"step": "block1_shs", "item": "q1", "value": value, "sequence": next(_SEQUENCE)},
    )


def test_the_session_page_sends_a_coordinator_without_totp_to_set_it_up(run_at_shs, client_for):
    coordinator = client_for("coordinator_a")

    for response in (
        coordinator.get(run_at_shs.url),
        coordinator.post(run_at_shs.url, {"step": "block1_shs", "q1": "2"}),
        coordinator.get(reverse("surveys:session_withdraw", args=[run_at_shs.token])),
    ):
        assert response.status_code == 302
        assert response.url == reverse("mfa_activate_totp")
    assert run_at_shs.session.step == Step.BLOCK1_SHS
    assert Evaluation.objects.get(session=run_at_shs.session).q1 is None


def test_the_prompt_log_refuses_a_coordinator_without_totp(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_INTERACTION)
    study_a.require_coordinator_mfa = True
    study_a.save()

    response = client_for("coordinator_a").post(
        reverse("surveys:session_prompt_add", args=[run.token]),
        {"step": "block1_interaction", "category": "verified"},
    )

    assert response.url == reverse("mfa_activate_totp")
    assert not PromptEntry.objects.exists()


def test_the_autosave_refuses_a_coordinator_without_totp_and_saves_nothing(run_at_shs, client_for):
    response = autosave(client_for("coordinator_a"), run_at_shs)

    # A JSON answer, not a redirect the page's script would follow and take for success.
    assert response.status_code == 403
    assert response.json()["saved"] is False
    assert "second factor" in response.json()["error"]
    assert Evaluation.objects.get(session=run_at_shs.session).q1 is None


def test_a_coordinator_with_totp_and_the_experimenter_pass(run_at_shs, client_for, personas):
    Authenticator.objects.create(
        user=personas["coordinator_a"], type=Authenticator.Type.TOTP, data={"secret": "x"}
    )
    coordinator = client_for("coordinator_a")
    assert coordinator.get(run_at_shs.url).status_code == 200
    assert autosave(coordinator, run_at_shs).json()["saved"] is True
    # Experimenters are not asked for a second factor.
    assert run_at_shs.get().status_code == 200
    assert autosave(run_at_shs.client, run_at_shs, value="-1").status_code == 200
    assert Evaluation.objects.get(session=run_at_shs.session).q1 == -1
