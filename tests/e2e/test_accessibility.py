"""Every participant-facing page passes axe-core with no serious or critical
violation, and the SHS can be completed with the keyboard alone."""

import json
import re

import pytest

from surveys.models import ConsentText, StudySession
from surveys.protocol import flow
from surveys.steps import Step
from tests.e2e.conftest import log_in, serious_violations
from tests.personas import PASSWORD

pytestmark = pytest.mark.e2e
ELIGIBLE = {
    "adult": True,
    "fluent": True,
    "ai_professional": False,
    "earlier_shs_study": False,
    "llm_company": False,
}


def _start(page, study):
    log_in(page, "exp-a@example.org", PASSWORD)
    page.goto(f"/studies/{study.slug}/")
    page.get_by_role("button", name="Start session").click()
    page.wait_for_url(re.compile(r"/sessions/[\w-]+/$"))
    return StudySession.objects.get(study=study)


def _to_step(session, step):
    if step == Step.CONSENT:
        return
    flow.consent_submit(
        session_id=session.pk,
        eligibility=ELIGIBLE,
        consented=True,
        shown_text=ConsentText.current(session.study_id, session.language).fingerprint,
    )
    path = [
        (Step.BLOCK1_INTERACTION, lambda: flow.interaction_finish(
            session_id=session.pk, step=Step.BLOCK1_INTERACTION, override_reason="test")),
        (Step.BLOCK1_SHS, lambda: flow.shs_submit(
            session_id=session.pk, step=Step.BLOCK1_SHS, responses=_answers())),
        (Step.BLOCK2_INTERACTION, lambda: flow.interaction_finish(
            session_id=session.pk, step=Step.BLOCK2_INTERACTION, override_reason="test")),
        (Step.BLOCK2_SHS, lambda: flow.shs_submit(
            session_id=session.pk, step=Step.BLOCK2_SHS, responses=_answers())),
    ]  # fmt: skip
    for name, action in path:
        if name == step:
            return
        action()


def _answers():
    return {f"q{i}": 1 for i in range(1, 11)}


@pytest.mark.parametrize("step", [Step.CONSENT, Step.BLOCK1_SHS, Step.DEMOGRAPHICS])
def test_participant_pages_have_no_serious_violations(step, axe_page, personas, study_a):
    session = _start(axe_page, study_a)
    _to_step(session, step)
    axe_page.reload()
    assert serious_violations(axe_page) == []


def test_the_end_and_withdrawal_pages_have_no_serious_violations(axe_page, personas, study_a):
    session = _start(axe_page, study_a)
    axe_page.goto(f"/sessions/{session.token}/withdraw/")
    assert serious_violations(axe_page) == []
    axe_page.get_by_role("button", name=re.compile("withdraw", re.I)).click()
    axe_page.wait_for_selector("h1")
    assert serious_violations(axe_page) == []


def test_the_shs_can_be_completed_with_the_keyboard_alone(axe_page, personas, study_a):
    session = _start(axe_page, study_a)
    _to_step(session, Step.BLOCK1_SHS)
    page = axe_page
    page.reload()
    page.wait_for_selector("#shs-form")

    for _ in range(30):  # Tab from the top of the page to the first answer
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.name") == "q1":
            break
    for number in range(1, 11):
        assert page.evaluate("document.activeElement.name") == f"q{number}"
        page.keyboard.press("ArrowRight")  # selects the second option, -1
        page.keyboard.press("Tab")  # on to the next question
    assert page.evaluate("document.activeElement.type") == "submit"
    page.keyboard.press("Enter")
    # The hand-back page, also by keyboard, and as accessible as the forms.
    page.wait_for_selector("form.handback")
    assert serious_violations(page) == []
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.closest('form.handback') !== null"):
            break
    page.keyboard.press("Enter")
    page.wait_for_selector("#prompt-form")

    evaluation = session.evaluations.get(block=1)
    assert evaluation.is_submitted
    assert set(evaluation.answers.values()) == {-1}
    assert json.dumps(evaluation.answers)  # stored as plain numbers
