"""A block's prompt log closes with its interaction: once the SHS of the block
is open, a prompt can be neither added nor removed, and a removal naming a step
that has no prompt log is refused like any other wrong step (409, nothing changed)."""

import pytest
from django.urls import reverse

from surveys.models import PromptEntry
from surveys.steps import Step
from tests.surveys.runner import SessionRun


def remove(run, prompt, step):
    return run.client.post(
        reverse("surveys:session_prompt_remove", args=[run.token, prompt.pk]), {"step": step}
    )


@pytest.mark.parametrize("block", [1, 2])
def test_a_prompt_of_an_ended_block_cannot_be_removed_from_its_shs_step(block, study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(f"block{block}_shs")
    run.get()
    prompt = PromptEntry.objects.filter(interaction__session=run.session, interaction__block=block)
    logged = prompt.count()

    response = remove(run, prompt.first(), f"block{block}_shs")

    assert response.status_code == 409
    assert "Nothing was saved" in response.content.decode()
    assert prompt.count() == logged
    assert run.session.step == f"block{block}_shs"


def test_a_prompt_cannot_be_added_to_an_ended_block_from_its_shs_step(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    logged = PromptEntry.objects.count()

    response = run.log_prompt("block1_shs", "verified")

    assert response.status_code == 409
    assert PromptEntry.objects.count() == logged


@pytest.mark.parametrize("current", [Step.CONSENT, Step.FEEDBACK, Step.DEMOGRAPHICS])
def test_a_removal_naming_a_step_without_prompt_log_is_409(current, study_a, client_for):
    """The step named is the session's own step, so only the step kind can refuse it."""
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(current)
    prompts = PromptEntry.objects.filter(interaction__session=run.session)
    target = prompts.first() or PromptEntry(pk=1)
    logged = prompts.count()

    response = remove(run, target, current)

    assert response.status_code == 409
    assert "Nothing was saved" in response.content.decode()
    assert prompts.count() == logged


def test_a_prompt_of_block_1_cannot_be_removed_in_block_2(study_a, client_for):
    # Given block 2 runs, and block 1's log (now rated) holds its prompts,
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK2_INTERACTION)
    block1 = PromptEntry.objects.filter(interaction__session=run.session, interaction__block=1)
    logged = block1.count()

    # when a removal from block 2's page names a prompt of block 1,
    response = remove(run, block1.first(), Step.BLOCK2_INTERACTION)

    # then it is refused and block 1's log stays as it was rated.
    assert response.status_code == 409
    assert "not part of this block" in response.content.decode()
    assert block1.count() == logged
