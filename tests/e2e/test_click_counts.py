"""How many clicks and taps a session costs the people who give it
(docs/benchmarks.md, "Clicks and taps"): a supervised session with two prompts
per block and the SUS after each SHS, the experimenter and the participant on
one device, and a remote participant on a 390 px phone.

The page counts, not the walk: every pointer press (a click with the mouse, a
tap with a finger, a tick of a box) and every key press the browser delivers
to the site is counted in the tab's sessionStorage, so the figure does not
depend on how the walk is written. Typing into a text field (Playwright's
fill) is not counted: it is typing, not a click. Each test fails when its
count rises above the figure recorded here, so a change that adds a click
must say so in the benchmarks."""

import re

import pytest

from surveys.models import Study, StudySession
from surveys.steps import Step
from tests.e2e.conftest import CLICK_COUNTS, log_in
from tests.e2e.participant import DEMOGRAPHICS, agree, tap_answer
from tests.e2e.test_remote_study import _take_part
from tests.personas import PASSWORD
from tests.surveys.remote import make_remote_study, take_url

pytestmark = pytest.mark.e2e

# The figures of docs/benchmarks.md: a regression guard, and the targets beside
# them. A change that saves clicks lowers its walk's guard to the new count.
SUPERVISED_WITH_SUS = 72
SUPERVISED = 50
REMOTE_PHONE = 46
TARGETS = {"supervised, SUS after each SHS": 60, "remote, 390 px phone": 50}

# Runs in every document before the site's own scripts. Each press is put down
# under the page's heading, so the summary says where the clicks go.
COUNTER = """
addEventListener('pointerdown', count, true);
addEventListener('keydown', count, true);
function count(event) {
  if (!event.isTrusted || (event.type === 'keydown' && event.repeat)) return;
  const heading = document.querySelector('h1');
  const presses = JSON.parse(sessionStorage.getItem('shs-presses') || '[]');
  presses.push(heading ? heading.textContent.trim().replace(/\\s+/g, ' ') : location.pathname);
  sessionStorage.setItem('shs-presses', JSON.stringify(presses));
}
"""


def _presses(page) -> list[str]:
    return page.evaluate("JSON.parse(sessionStorage.getItem('shs-presses') || '[]')")


def _by_page(presses: list[str]) -> list[tuple[str, int]]:
    """Consecutive presses on pages of one heading, in the order of the walk."""
    runs: list[tuple[str, int]] = []
    for heading in presses:
        if runs and runs[-1][0] == heading:
            runs[-1] = (heading, runs[-1][1] + 1)
        else:
            runs.append((heading, 1))
    return runs


@pytest.fixture
def report(request):
    """report(walk, presses): the count, into the suite's terminal summary."""

    def add(walk: str, presses: list[str]):
        target = TARGETS.get(walk)
        line = f"{walk}: {len(presses)} clicks and taps" + (f" (target {target})" if target else "")
        pages = ", ".join(f"{heading} {n}" for heading, n in _by_page(presses))
        request.config.stash.setdefault(CLICK_COUNTS, []).append(f"{line}\n    {pages}")
        print(line, pages, sep="\n    ")

    return add


def _prompts_and_sus(study: Study, companion_scales: list[str]) -> Study:
    Study.objects.filter(pk=study.pk).update(
        min_verified_prompts=1, min_glatteis_prompts=1, companion_scales=companion_scales
    )
    study.refresh_from_db()
    return study


def _supervised_session(page, study):
    """The experimenter's and the participant's clicks, from "Start session" to the
    experimenter's feedback, as tests/e2e/test_sessions.py walks it."""
    page.goto(f"/studies/{study.slug}/")
    page.evaluate("sessionStorage.removeItem('shs-presses')")  # the log-in is not the session's
    page.get_by_role("button", name="Start session").click()
    page.wait_for_url(re.compile(r"/sessions/[\w-]+/$"))
    agree(page, touch=False)
    _hand_back(page)
    for block in (1, 2):
        page.wait_for_selector("#prompt-form")
        for category in ("verified", "glatteis"):
            page.locator(f"#prompt-form button[name=category][value={category}]").click()
            page.wait_for_selector(f"#count-{category}:text-is('1')")
        page.get_by_role("button", name=re.compile("SHS")).click()
        page.wait_for_selector("#shs-form")
        for number in range(1, 11):
            tap_answer(page, f"q{number}", 1, touch=False)
        page.locator("#shs-form button[type=submit]").click()
        for _scale in study.companion_scales:
            page.wait_for_selector("form.companion-form")
            for key in page.locator("form.companion-form fieldset input[value='3']").evaluate_all(
                "inputs => inputs.map(input => input.name)"
            ):
                tap_answer(page, key, 3, touch=False)
            page.locator("form.companion-form button[type=submit]").click()
        if block == 1:
            _hand_back(page)
    page.wait_for_selector("input[name=age_band]")
    for key in DEMOGRAPHICS:
        tap_answer(page, key, 9, touch=False)
    page.locator("main form button[type=submit]").first.click()
    _hand_back(page)
    page.wait_for_selector("input[name=clarity]")
    for key in ("clarity", "relevance", "response_options", "explanation_needed"):
        tap_answer(page, key, 1, touch=False)
    tap_answer(page, "demographics_length", 1, touch=False)
    page.locator("main form button[type=submit]").first.click()
    page.wait_for_url(f"**/studies/{study.slug}/")
    presses = _presses(page)
    assert StudySession.objects.get(study=study).step == Step.COMPLETE
    return presses


def _hand_back(page):
    page.wait_for_selector("form.handback")
    page.locator("form.handback button").click()
    page.wait_for_load_state()


@pytest.mark.parametrize(
    ("walk", "scales", "guard"),
    [("supervised, SUS after each SHS", ["sus"], SUPERVISED_WITH_SUS),
     ("supervised, no companion scale", [], SUPERVISED)],
)  # fmt: skip
def test_the_clicks_of_a_supervised_session(
    walk, scales, guard, new_page, personas, study_a, report
):
    study = _prompts_and_sus(study_a, scales)
    page = new_page()
    page.context.add_init_script(COUNTER)
    log_in(page, "exp-a@example.org", PASSWORD)
    presses = _supervised_session(page, study)
    report(walk, presses)
    assert len(presses) <= guard


def test_the_taps_of_a_remote_participant_on_a_phone(participant, llm_server, settings, report):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    study = make_remote_study(llm_server)  # no completion URL: the end page stays
    page = participant()
    page.context.add_init_script(COUNTER)
    _take_part(page, take_url(study))
    presses = _presses(page)
    report("remote, 390 px phone", presses)
    assert StudySession.objects.get(study=study).step == Step.COMPLETE
    assert len(presses) <= REMOTE_PHONE
