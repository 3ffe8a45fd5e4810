"""The monitor reads entirely in the coordinator's language: every
heading and column, the state names and the participants' languages."""

import re

import pytest
from django.urls import reverse

from surveys.steps import Step
from tests.surveys.runner import SessionRun

# The same words in English and German or French.
SAME_EVERYWHERE = {"System", "Block 1", "Block 2", "Pilot", "Block 1: SHS", "Block 2: SHS"}
SAME_IN = {"de": set(), "fr": {"Participant"}}


def _labels(page: str) -> list[str]:
    cells = re.findall(r"<(h1|h2|th|td|label|button)[^>]*>(.*?)</\1>", page, re.S)
    texts = [re.sub(r"<[^>]+>|\s+", " ", text).strip() for _tag, text in cells]
    return [text for text in texts if re.search(r"[A-Za-z]{3}", text)]


@pytest.mark.parametrize("language", ["de", "fr"])
def test_no_english_label_is_left_on_the_monitor(study_a, client_for, language):
    experimenter = client_for("experimenter_a")
    SessionRun(experimenter, study_a, language="de").complete()
    SessionRun(experimenter, study_a, is_pilot=True).advance_to(Step.BLOCK1_SHS)
    url = reverse("surveys:monitor", args=[study_a.slug])
    coordinator = client_for("coordinator_a")

    english = _labels(coordinator.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode())
    translated = _labels(coordinator.get(url, HTTP_ACCEPT_LANGUAGE=language).content.decode())

    assert len(english) == len(translated)
    untouched = [
        text
        for text, other in zip(english, translated, strict=True)
        if text == other
        and text not in SAME_EVERYWHERE | SAME_IN[language]
        and "@" not in text
        and not text.startswith(("System ", "P-"))
    ]
    assert untouched == []
    assert ("Deutsch" if language == "de" else "Allemand") in translated
