"""One click consents, one click logs a prompt: the consent page and the
experimenter's prompt log post what their forms expect from a button's name
and value (consent=on, category=<value>), and Enter in a field presses a
silent first button that posts neither (docs/benchmarks.md, "Clicks and taps")."""

from html.parser import HTMLParser

from surveys.models import PromptEntry
from surveys.steps import Step
from tests.surveys.runner import ELIGIBLE, SessionRun


class _Controls(HTMLParser):
    """The buttons and inputs of each form of the page, in page order."""

    def __init__(self):
        super().__init__()
        self.forms: list[dict] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms.append({"attrs": attrs, "buttons": [], "inputs": []})
        elif self.forms and tag in ("button", "input"):
            self.forms[-1][f"{tag}s"].append(attrs)


def _form(page: str, **wanted) -> dict:
    """The form of the page with the attributes `wanted`, or holding a control with them."""
    parser = _Controls()
    parser.feed(page)
    for form in parser.forms:
        elements = [form["attrs"], *form["buttons"], *form["inputs"]]
        if any(all(e.get(k) == v for k, v in wanted.items()) for e in elements):
            return form
    raise AssertionError(f"no form with {wanted}")


def _fields(form: dict) -> dict:
    """What the form posts without a button: its hidden inputs."""
    return {i["name"]: i.get("value", "") for i in form["inputs"] if i.get("type") == "hidden"}


def test_the_consent_page_consents_with_its_one_button(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    form = _form(run.get().content.decode(), name="consent")

    assert [i for i in form["inputs"] if i.get("name") == "consent"] == []  # no box to tick
    agree = [b for b in form["buttons"] if b.get("name") == "consent"]
    assert [(b.get("type"), b["value"]) for b in agree] == [("submit", "on")]
    # Enter in an answer presses the first submit button: a silent one.
    assert form["buttons"][0] == {"type": "submit", "hidden": None}

    silent = run.client.post(run.url, {**_fields(form), **ELIGIBLE})
    assert silent.status_code == 400
    assert run.session.step == Step.CONSENT

    pressed = run.client.post(run.url, {**_fields(form), **ELIGIBLE, "consent": agree[0]["value"]})
    assert pressed.status_code == 302
    assert run.session.consent.consent_text.fingerprint == _fields(form)["shown_text"]
    assert run.session.step == Step.BLOCK1_INTERACTION


def test_the_prompt_log_has_one_button_per_category(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_INTERACTION)
    run.hand_back()  # the participant gives the device back after the consent
    form = _form(run.get().content.decode(), id="prompt-form")

    assert [i for i in form["inputs"] if i.get("name") == "category"] == []  # no radios
    buttons = [b for b in form["buttons"] if b.get("name") == "category"]
    assert [b["value"] for b in buttons] == list(PromptEntry.Category.values)
    assert all(b.get("type") == "submit" for b in buttons)
    assert form["buttons"][0] == {"type": "submit", "hidden": None}

    url = form["attrs"]["action"]
    assert run.client.post(url, {**_fields(form), "is_challenge": "on"}).status_code == 302
    assert not PromptEntry.objects.exists()  # Enter in a field logs nothing
    for button in buttons:
        run.client.post(url, {**_fields(form), "is_challenge": "on", "category": button["value"]})
    logged = PromptEntry.objects.order_by("pk").values_list("category", "is_challenge")
    assert list(logged) == [(value, True) for value in PromptEntry.Category.values]
