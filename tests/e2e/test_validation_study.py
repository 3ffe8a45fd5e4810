"""The validation programme's participant pages in the browser (docs/design/validation.md
§14.1, §14.2): a remote participant on a phone gives the SUS after each SHS,
sees the retest link and its date on the end page, and comes back by that
link to rate both systems again."""

from datetime import timedelta

import pytest
from django.utils import timezone

from scoring.instruments.companions import COMPANION_SCALES
from surveys.models import CompanionResponse, Retest, RetestEvaluation
from tests.e2e.participant import PHONE, press, tap_answer
from tests.e2e.test_remote_study import _chat, _consent, _shs, _start
from tests.surveys.remote import make_remote_study, take_url

pytestmark = pytest.mark.e2e

SUS = COMPANION_SCALES["sus"]
SUS_ANSWERS = (5, 1, 4, 2, 4, 2, 5, 1, 4, 2)  # Brooke's rule: 4+4+3+3+3+3+4+4+3+3 = 34 -> 85


def _sus(page):
    page.wait_for_selector("form.companion-form")
    assert page.locator("h1").inner_text() == SUS.label_in("en")
    assert SUS.items[0].text_in("en") in page.content()
    assert "Digital Equipment Corporation" in page.locator(".credit").inner_text()
    for item, code in zip(SUS.items, SUS_ANSWERS, strict=True):
        tap_answer(page, item.key, code)
    press(page.get_by_role("button", name="Submit"))


def _retest_shs(page):
    page.wait_for_selector("form.shs-form")
    for number in range(1, 11):
        tap_answer(page, f"q{number}", 1 if number % 2 else -1)
    press(page.get_by_role("button", name="Submit"))


def test_a_remote_participant_gives_the_sus_and_comes_back_for_the_retest(
    participant,
    llm_server,
    settings,
):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    study = make_remote_study(llm_server)
    study.companion_scales = ["sus"]
    study.retest_after_days = 7
    study.save()
    page = participant(PHONE, True)

    _start(page, take_url(study), True)
    _consent(page, True)
    for block in (1, 2):
        page.wait_for_selector(f"h1:has-text('Part {block}: chat')")
        _chat(page, 1, "verified", True)
        _chat(page, 2, "glatteis", True)
        press(page.get_by_role("button", name="Continue to the questionnaire"))
        _shs(page, True)
        _sus(page)
    page.wait_for_selector("input[name=age_band]")
    for key in ("age_band", "gender", "education", "first_language", "llm_use"):
        tap_answer(page, key, 9)
    press(page.get_by_role("button", name="Finish"))
    page.wait_for_selector("text=Your completion code")
    link = page.locator("code.retest-link").inner_text().strip()

    responses = CompanionResponse.objects.filter(evaluation__session__study=study)
    assert [r.score for r in responses] == [85.0, 85.0]
    retest = Retest.objects.get(session__study=study)
    assert link.endswith("/") and retest.token_hash not in link

    # Before the day: a page saying when, and nothing to fill in.
    page.goto(link)
    assert page.locator("form.shs-form").count() == 0
    Retest.objects.filter(pk=retest.pk).update(due_at=timezone.now() - timedelta(minutes=1))

    page.goto(link)
    _retest_shs(page)
    _retest_shs(page)
    page.wait_for_selector("h1:has-text('Thank you')")
    again = RetestEvaluation.objects.filter(retest=retest, submitted_at__isnull=False)
    assert sorted(e.block for e in again) == [1, 2]
    assert all(e.shs == 0.5 for e in again)
