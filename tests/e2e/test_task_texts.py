"""The naturalistic task per language in the browser (docs/design/remote.md §11.5):
the coordinator, at desktop width, is held back by the readiness panel until
every language has its task, sees the invitation it waits for instead of being
told to invite someone, and writes the French task on its own page; a French
participant on a 390 px phone reads the French task under "Tâche"."""

import pytest
from django.utils import timezone

from surveys.models import Invitation, Study, StudyMembership, StudySession, TaskText
from tests.e2e.conftest import log_in, serious_violations
from tests.e2e.participant import AGREE, PHONE, agree, press, read, tap_answer
from tests.personas import PASSWORD
from tests.surveys.remote import make_remote_study, take_url

pytestmark = pytest.mark.e2e

FRENCH_TASK = "Préparez un week-end à Vienne avec le système."
ENGLISH_TASK = "Plan a weekend trip to Vienna with the help of the system."
TEXTS = "els => els.map(e => e.textContent.replace(/\\s+/g, ' ').trim())"


def _readiness(page) -> list[str]:
    return read(page, lambda p: p.locator(".readiness .checklist li").evaluate_all(TEXTS))


def test_the_coordinator_writes_the_french_task_before_activating(
    axe_page, personas, study_a, settings
):
    # Given: a draft naturalistic study without its French task or an
    # experimenter, one invited, and systems with no collection window.
    Study.objects.filter(pk=study_a.pk).update(
        status=Study.Status.DRAFT, protocol=Study.Protocol.NATURALISTIC
    )
    study_a.task_texts.filter(language="fr").delete()
    study_a.memberships.filter(role=StudyMembership.Role.EXPERIMENTER).delete()
    study_a.systems.update(collection_start=None, collection_end=None)
    Invitation.objects.create(
        study=study_a,
        email="new@example.org",
        token_hash="0" * 64,
        expires_at=timezone.now() + Invitation.VALID_FOR,
    )
    page = axe_page
    log_in(page, "coord-a@example.org", PASSWORD)

    # The study page says what is missing, in words.
    page.goto(f"/studies/{study_a.slug}/")
    checks = _readiness(page)
    assert "✗ Naturalistic task: French: Not written yet." in checks
    assert "✓ Naturalistic task: German" in checks
    assert (
        "✗ At least one experimenter: 1 invitation pending (new@example.org): "
        "activate once it is accepted."
    ) in checks
    cells = page.locator("main table.table tbody tr td:nth-child(6)").all_inner_texts()
    assert cells and all(cell.strip() == "no collection window set" for cell in cells)
    assert serious_violations(page) == []

    # When: the coordinator writes the French task on its page.
    page.get_by_role("link", name="Naturalistic task").click()
    page.get_by_role("link", name="Write").click()
    assert serious_violations(page) == []
    page.fill("textarea[name=text]", FRENCH_TASK)
    page.get_by_role("button", name="Save").click()
    page.wait_for_selector(f".task-description[lang=fr]:has-text('{FRENCH_TASK}')")
    assert serious_violations(page) == []

    # Then: once the invitation is accepted, the study can become active.
    StudyMembership.objects.create(
        user=personas["experimenter_a"], study=study_a, role=StudyMembership.Role.EXPERIMENTER
    )
    page.goto(f"/studies/{study_a.slug}/")
    assert "✓ Naturalistic task: French" in _readiness(page)
    page.get_by_role("button", name="Activate").click()
    page.wait_for_selector("h1 .badge:text-is('Active')")


def test_a_french_participant_reads_the_french_task_on_a_phone(participant, llm_server, settings):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    study = make_remote_study(llm_server, protocol=Study.Protocol.NATURALISTIC, min_minutes=0)
    TaskText.objects.filter(study=study, language="en").update(text=ENGLISH_TASK)
    TaskText.objects.filter(study=study, language="fr").update(text=FRENCH_TASK)
    phone = participant(PHONE)

    phone.goto(take_url(study))
    tap_answer(phone, "language", "fr")
    press(phone.locator("form:has(input[name=action][value=start]) button[type=submit]"))
    phone.wait_for_selector(AGREE)
    agree(phone)
    phone.wait_for_selector("#task .task-description")

    assert StudySession.objects.get(study=study).language == "fr"
    assert phone.locator("#task h2").inner_text().strip() == "Tâche"
    assert phone.locator("#task .task-description").inner_text().strip() == FRENCH_TASK
    assert ENGLISH_TASK not in phone.content()
    width = phone.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"]
