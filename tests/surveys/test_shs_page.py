"""The SHS page as the participant gets it. Its items are built in Python, not
through the template language (they were half the page's CPU), so
this checks what the template used to guarantee: the published wording and
answer labels in each language, the names, ids and labels that the autosave
script and assistive technology rely on, the saved answers checked, the items
of a refused submission marked; and the queries the page costs."""

from html import unescape
from html.parser import HTMLParser

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext

from scoring.instruments.shs import CREDIT, ITEMS, SCALE
from surveys.steps import Step
from tests.surveys.runner import SessionRun
from tests.surveys.statements import statement_shapes

SAVED = {"q1": 2, "q2": -2, "q7": 0}
POSTED = {"q3": 1, "q4": -1}


class _Items(HTMLParser):
    """Each fieldset of the page: its attributes, legend, radios and error."""

    def __init__(self):
        super().__init__()
        self.items, self._open = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "fieldset":
            self.items.append({"attrs": attrs, "legend": "", "radios": [], "labels": []})
            self.items[-1].update(error=None, radiogroup=False)
        if not self.items:
            return
        item = self.items[-1]
        if tag == "div" and attrs.get("role") == "radiogroup":
            item["radiogroup"] = True
        if tag == "div" and attrs.get("class") == "errors":
            item["error"] = ""
            self._open.add("error")
        if tag == "input":
            item["radios"].append(attrs)
        if tag == "label":
            item["labels"].append([attrs["for"], ""])
        if tag in ("legend", "label"):
            self._open.add(tag)

    def handle_endtag(self, tag):
        self._open.discard("error" if tag == "div" else tag)

    def handle_data(self, data):
        item = self.items[-1] if self.items else None
        if "legend" in self._open:
            item["legend"] += data
        elif "label" in self._open:
            item["labels"][-1][1] += data
        elif "error" in self._open:
            item["error"] += data


def _items(page) -> list[dict]:
    parser = _Items()
    parser.feed(page.content.decode())
    return parser.items


def _shs_run(study, client_for, language) -> SessionRun:
    run = SessionRun(client_for("experimenter_a"), study, language=language)
    run.advance_to(Step.BLOCK1_SHS)
    run.hand_back()
    return run


def _autosave(run, answers):
    for sequence, (item, value) in enumerate(answers.items(), start=1):
        run.client.post(
            reverse("surveys:session_answer", args=[run.token]),
            {"step": Step.BLOCK1_SHS, "item": item, "value": value, "sequence": sequence},
        )


def _assert_items(page, language, checked, errors=()):
    with translation.override(language):
        message = gettext("Please choose an answer.")
    items = _items(page)
    assert len(items) == len(ITEMS)
    for item, shown in zip(ITEMS, items, strict=True):
        assert shown["attrs"]["id"] == f"fieldset-{item.key}"
        has_error = item.key in errors
        assert shown["attrs"]["class"] == ("question has-errors" if has_error else "question")
        assert shown["error"] == (message if has_error else None)
        assert shown["radiogroup"]
        assert unescape(shown["legend"]) == f"{item.number}. {item.text_in(language)}"
        for n, (option, radio, label) in enumerate(
            zip(SCALE, shown["radios"], shown["labels"], strict=True), start=1
        ):
            assert radio["type"] == "radio" and "required" in radio
            assert (radio["id"], radio["name"], radio["value"]) == (
                f"{item.key}_{n}",
                item.key,
                str(option.code),
            )
            assert ("checked" in radio) == (checked.get(item.key) == option.code)
            assert label[0] == radio["id"]
            assert unescape(label[1]).strip() == option.label_in(language)


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_the_shs_page_shows_the_published_items_and_the_saved_answers(
    language, study_a, client_for
):
    run = _shs_run(study_a, client_for, language)
    page = run.get()
    _assert_items(page, language, checked={})
    content = page.content.decode()
    assert 'data-autosave-url="' + reverse("surveys:session_answer", args=[run.token]) in content
    assert unescape(content).count(CREDIT[language]) == 1

    _autosave(run, SAVED)
    _assert_items(run.get(), language, checked=SAVED)

    refused = run.post(Step.BLOCK1_SHS, **POSTED)
    assert refused.status_code == 400
    unanswered = {item.key for item in ITEMS} - set(POSTED)
    _assert_items(refused, language, checked={**SAVED, **POSTED}, errors=unanswered)


def test_languages_do_not_share_their_wording(study_a, client_for):
    # The items are built once per language: a page must never get another's.
    for language in ("fr", "en", "de", "fr"):
        _assert_items(_shs_run(study_a, client_for, language).get(), language, checked={})


def _queries(request) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        assert request().status_code in (200, 400)
    return [query["sql"] for query in captured.captured_queries]


def _tables(queries) -> list[str]:
    return sorted(statement_shapes(queries))


def test_the_shs_page_costs_few_queries(study_a, client_for):
    run = _shs_run(study_a, client_for, "en")
    run.get()  # first display
    # A reload: the user, the session with its study and systems (one join),
    # the evaluation. Nothing is looked up twice; the activity time is fresh
    # (tests/surveys/test_request_cost.py has the stale case).
    assert _tables(_queries(run.get)) == [
        "SELECT surveys_evaluation",
        "SELECT surveys_studysession",
        "SELECT surveys_user",
    ]


def test_the_first_display_also_creates_the_evaluation(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    run.hand_back()  # the hand-back page does not display the SHS yet
    first = [sql for sql in _queries(run.get) if "SAVEPOINT" not in sql]
    assert _tables(first) == [
        "INSERT surveys_evaluation",
        "SELECT surveys_evaluation",
        "SELECT surveys_studysession",
        "SELECT surveys_user",
    ]
