"""Remote studies in the browser (docs/design/remote.md §11), against the live server
and the shipped demo LLM server: a coordinator sets one up from the forms
(naturalistic, the issue's "done when", and the paper's two-category
protocol), a panel participant takes it alone on a phone from its public link
to the completion URL, and the coordinator finds the session in the monitor, the
payment list and an export (without the panel id). Then the same walk on a
desktop, a resume with the participant code on a second device, and a
personal link that works once."""

import csv
import io
import re

import pytest
from django.contrib.auth.models import Permission

from surveys.models import Study, StudyMembership, StudySession, User
from surveys.steps import Step
from tests.e2e.conftest import log_in
from tests.e2e.participant import AGREE, DEMOGRAPHICS, agree, interactive, press, read, tap_answer
from tests.personas import PASSWORD, make_user
from tests.surveys.remote import make_remote_study, take_url

pytestmark = pytest.mark.e2e

DESKTOP = {"width": 1280, "height": 800}
PANEL = "https://panel.example.org"
COMPLETION_URL = PANEL + "/done?cc={code}"
SLUG = "remote-browser"
PANEL_ID = "abc123"
TEXTS = "els => els.map(e => e.textContent.trim())"


@pytest.fixture
def coordinator(new_page, db, llm_server, settings):
    """A logged-in coordinator's page (the demo server is on loopback http); one
    who may create studies."""
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    user = User.objects.filter(email="coord@example.org").first() or make_user("coord@example.org")
    user.user_permissions.add(Permission.objects.get(codename="add_study"))
    page = new_page()
    log_in(page, "coord@example.org", PASSWORD)
    return page


@pytest.fixture
def coordinated(llm_server, settings):
    """An active remote study, made in the database, and its coordinator."""
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    study = make_remote_study(llm_server, completion_url=COMPLETION_URL)
    StudyMembership.objects.create(
        user=make_user("coord@example.org"), study=study, role=StudyMembership.Role.COORDINATOR
    )
    return study


TASK = "Plan a weekend trip with the assistant's help."


def _set_up_remote_study(page, llm_server, protocol: str) -> str:
    """The coordinator's way from the study form to an active study; its public link."""
    page.goto("/studies/new/")
    page.fill("input[name=title]", "Remote browser study")
    page.fill("input[name=slug]", SLUG)
    page.locator("input[name=languages][value=en]").check()
    page.fill("input[name=min_verified_prompts]", "1")
    page.fill("input[name=min_glatteis_prompts]", "1")
    page.select_option("select[name=protocol]", protocol)
    if protocol == "naturalistic":
        page.fill("input[name=min_turns]", "2")
        page.fill("input[name=min_minutes]", "0")
    page.select_option("select[name=mode]", "remote")
    page.fill("input[name=completion_url]", COMPLETION_URL)
    page.fill("input[name=panel_parameter]", "PROLIFIC_PID")
    page.locator("form.stacked button[type=submit]").click()
    page.wait_for_url(f"**/studies/{SLUG}/")
    for name in ("Model A", "Model B"):
        page.get_by_role("link", name="Add a system").click()
        page.fill("input[name=name]", name)
        page.locator("input[name=kind][value=connected]").check()
        page.fill("input[name=base_url]", llm_server)
        page.fill("input[name=model_name]", "demo")
        page.locator("form.stacked button[type=submit]").click()
        page.wait_for_url(f"**/studies/{SLUG}/")
    page.get_by_role("link", name="Consent texts").click()
    page.get_by_role("link", name="Write").click()
    page.fill("textarea[name=information_sheet]", "What the study is about.")
    page.fill("textarea[name=consent_text]", "I agree to take part.")
    page.get_by_role("button", name="Save").click()
    if protocol == "naturalistic":
        page.goto(f"/studies/{SLUG}/")
        page.get_by_role("link", name="Naturalistic task").click()
        page.get_by_role("link", name="Write").click()
        page.fill("textarea[name=text]", TASK)
        page.get_by_role("button", name="Save").click()
    page.goto(f"/studies/{SLUG}/")
    page.get_by_role("button", name="Activate").click()
    page.wait_for_selector("h1 .badge:text-is('Active')")
    link = page.locator("#public-link").input_value()
    return "/" + link.strip().split("/", 3)[3]


def _start(page, link: str, touch: bool) -> str:
    """Language, start, the first page: the participant code it shows."""
    page.goto(link)
    tap_answer(page, "language", "en", touch)
    press(page.get_by_role("button", name="Start", exact=True), touch)
    page.wait_for_selector(AGREE)
    return page.locator(".participant-code-note strong").inner_text()


def _consent(page, touch: bool):
    agree(page, touch)
    interactive(page, "#chat-text")


def _chat(page, number: int, category: str, touch: bool):
    """One message, its streamed answer, and the participant's own tag."""
    page.fill("#chat-text", f"Question {number} for the {category} tag?")
    press(page.get_by_role("button", name="Send", exact=True), touch)
    page.wait_for_function(
        f"() => document.querySelectorAll('#chat .turn-user form.tag-form').length === {number}"
        " && document.querySelector('#chat').getAttribute('aria-busy') !== 'true'"
    )
    assert page.locator("#chat .turn-assistant .turn-text").nth(number - 1).inner_text().strip()
    tag = page.locator("#chat .turn-user form.tag-form").nth(number - 1)
    press(tag.locator(f"button[value={category}]"), touch)
    # Tagging posts the form: the page comes back with the count.
    page.wait_for_selector(f"#count-{category}:text-is('1')")


def _shs(page, touch: bool):
    interactive(page, "#shs-form")
    for number, value in enumerate([2, -2, 1, -1, 0, 0, 1, -1, 2, -2], start=1):
        with page.expect_response(re.compile(r"/answer/$")):
            tap_answer(page, f"q{number}", value, touch)
    press(page.get_by_role("button", name="Submit"), touch)


def _talk(page, number: int, touch: bool):
    """One message and its streamed answer, under the naturalistic protocol:
    the task above the chat, no category to choose."""
    assert page.locator("#task .task-description").inner_text().strip() == TASK
    page.fill("#chat-text", f"Message {number} about the task")
    press(page.get_by_role("button", name="Send", exact=True), touch)
    page.wait_for_function(
        f"() => document.querySelectorAll('#chat .turn-assistant').length === {number}"
        " && document.querySelector('#chat').getAttribute('aria-busy') !== 'true'"
    )
    assert page.locator("#chat form.tag-form").count() == 0


def _take_part(page, link: str, touch: bool = True, protocol: str = "two_category") -> str:
    """The whole remote session; the completion code on the end page."""
    _start(page, link, touch)
    _consent(page, touch)
    for block in (1, 2):
        page.wait_for_selector(f"h1:has-text('Part {block}: chat')")
        if protocol == "naturalistic":
            _talk(page, 1, touch)
            _talk(page, 2, touch)
        else:
            _chat(page, 1, "verified", touch)
            _chat(page, 2, "glatteis", touch)
        press(page.get_by_role("button", name="Continue to the questionnaire"), touch)
        _shs(page, touch)
    page.wait_for_selector("input[name=age_band]")
    for key in DEMOGRAPHICS:
        tap_answer(page, key, 9, touch)
    press(page.get_by_role("button", name="Finish"), touch)
    page.wait_for_selector("text=Your completion code")
    return page.locator(".completion-code strong").inner_text()


def _download(page, click) -> bytes:
    with page.expect_download() as download:
        click()
    return open(download.value.path(), "rb").read()


@pytest.mark.parametrize("protocol", ["naturalistic", "two_category"])
def test_a_panel_participant_takes_a_remote_study_on_a_phone(
    coordinator, participant, llm_server, settings, tmp_path, protocol
):
    """The issue's "done when": a remote naturalistic study made from the UI,
    taken alone on a phone-sized screen; and the same under the paper's protocol."""
    link = _set_up_remote_study(coordinator, llm_server, protocol)
    assert re.fullmatch(r"/take/[\w-]+/", link)

    phone = participant()
    code = _take_part(phone, f"{link}?PROLIFIC_PID={PANEL_ID}", protocol=protocol)
    # The end page sends the participant to the panel, the code in its URL.
    phone.wait_for_url(lambda url: url == f"{PANEL}/done?cc={code}")

    session = StudySession.objects.get(study__slug=SLUG)
    assert (session.step, session.completion_code) == (Step.COMPLETE, code)
    assert session.evaluations.count() == 2
    assert set(session.evaluations.values_list("protocol", flat=True)) == {protocol}

    coordinator.goto(f"/studies/{SLUG}/")
    coordinator.get_by_role("link", name="Monitor").click()
    # The monitor redraws its tables every 10 s: one read, again if it met a redraw.
    codes = read(coordinator, lambda p: p.locator(".completion-code").evaluate_all(TEXTS))
    assert codes == [code]

    coordinator.goto(f"/studies/{SLUG}/")
    coordinator.get_by_role("link", name="Payment list").click()
    rows = coordinator.locator("table.payment-list tbody tr")
    assert rows.count() == 1
    cells = [cell.strip() for cell in rows.first.locator("td").all_inner_texts()]
    assert (cells[0], cells[1], cells[3]) == (PANEL_ID, "Complete", code)

    # The export runs in-process (Celery eager) and holds both evaluations, not the id.
    settings.PRIVATE_STORAGE_ROOT = tmp_path / "private"
    coordinator.goto(f"/studies/{SLUG}/")
    coordinator.get_by_role("link", name="Exports").click()
    coordinator.locator("input[name=format][value=csv]").check()
    coordinator.locator("main form button[type=submit]").click()
    coordinator.wait_for_selector("a:text-is('Download')")
    data = _download(coordinator, coordinator.get_by_role("link", name="Download").click)
    text = data.decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(row["block"], row["q1"], row["q10"], row["protocol"]) for row in rows] == [
        ("1", "2", "-2", protocol),
        ("2", "2", "-2", protocol),
    ]
    assert PANEL_ID not in text


NATURALISTIC = {"protocol": "naturalistic", "min_turns": 2, "min_minutes": 0}


@pytest.mark.parametrize("protocol", ["two_category", "naturalistic"])
def test_a_remote_session_on_a_desktop(coordinated, participant, protocol):
    if protocol == "naturalistic":
        Study.objects.filter(pk=coordinated.pk).update(**NATURALISTIC)
        coordinated.task_texts.update(text=TASK)
    page = participant(DESKTOP, touch=False)
    code = _take_part(page, take_url(coordinated), touch=False, protocol=protocol)
    assert StudySession.objects.get(study=coordinated).completion_code == code
    # The link on the end page goes to the panel at once.
    page.get_by_role("link", name="Continue to confirm your completion").click()
    page.wait_for_url(lambda url: url == f"{PANEL}/done?cc={code}")


def test_a_participant_resumes_on_a_second_device(coordinated, participant):
    first = participant()
    code = _start(first, take_url(coordinated), touch=True)
    _consent(first, touch=True)
    url = first.url
    first.context.close()

    second = participant(DESKTOP, touch=False)
    second.goto(take_url(coordinated))
    second.fill("input[name=code]", code.lower().replace("-", " "))
    second.get_by_role("button", name="Continue").click()
    second.wait_for_selector("#chat-text")
    assert second.url == url
    session = StudySession.objects.get(study=coordinated)
    assert session.step == Step.BLOCK1_INTERACTION


def test_a_personal_link_starts_one_session(coordinated, coordinator, participant):
    coordinator.goto(f"/studies/{coordinated.slug}/")
    coordinator.fill("#id_link_count", "2")
    data = _download(coordinator, coordinator.get_by_role("button", name="Make and download").click)
    links = [row["link"] for row in csv.DictReader(io.StringIO(data.decode("utf-8-sig")))]
    assert len(links) == 2 and len(set(links)) == 2
    path = "/" + links[0].split("/", 3)[3]

    first = participant()
    _start(first, path, touch=True)
    assert StudySession.objects.filter(study=coordinated).count() == 1

    again = participant()
    response = again.goto(path)
    assert response.status == 410
    assert "has been used already" in again.locator("main").inner_text()
    assert again.locator("input[name=language]").count() == 0
    assert Study.objects.get(pk=coordinated.pk).sessions.count() == 1
