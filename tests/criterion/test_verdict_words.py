"""The falsification verdict as the report, the page and `shs_criterion` word it
(docs/design/criterion-verdicts.md §13.6): the verdict first, the interval named by its
level, the threshold named by where it came from, in en, de and fr."""

import io
import json

import pytest
from django.core.management import call_command

from criterion.page import verdict_text

BASE = {
    "threshold": 0.2,
    "analysis": "clustered",
    "level": 0.95,
    "n": 60,
    "n_participants": 30,
    "threshold_source": "preregistered",
    "reason": None,
    "criterion_agreement": [],
}
CASES = {
    "falsified": {"r": 0.02, "ci_low": -0.2, "ci_high": 0.15, "leaning": None},
    "not_falsified": {"r": 0.5, "ci_low": 0.3, "ci_high": 0.65, "leaning": None},
    "inconclusive": {"r": 0.1, "ci_low": -0.07, "ci_high": 0.29, "leaning": "below"},
}
HEADLINES = {
    "falsified": "Verdict: falsified.",
    "not_falsified": "Verdict: not falsified.",
    "inconclusive": "Verdict: inconclusive. Nothing was decided.",
    "not_computable": "Verdict: not computable.",
}


def falsification(verdict, **changes):
    figures = CASES.get(verdict, {"r": None, "ci_low": None, "ci_high": None, "leaning": None})
    return {**BASE, **figures, "verdict": verdict, **changes}


@pytest.mark.parametrize("verdict", list(HEADLINES))
def test_the_headline_opens_with_the_verdict(verdict):
    text = verdict_text(falsification(verdict))
    assert text.startswith(HEADLINES[verdict])
    if verdict == "inconclusive":
        assert "falsified" not in text  # nothing in the headline reads as a decision
        assert "includes the threshold" in text and "below the threshold" in text


def test_an_inconclusive_verdict_without_an_interval_does_not_speak_of_one():
    text = verdict_text(falsification("inconclusive", ci_low=None, ci_high=None))
    assert "has no interval" in text and "includes the threshold" not in text


def test_the_interval_is_named_by_its_level():
    text = verdict_text(falsification("inconclusive", level=0.99))
    assert "99 % interval" in text and "95" not in text
    assert "99.9 % interval" in verdict_text(falsification("falsified", level=0.999))


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("preregistered", "was pre-registered before data collection began"),
        ("registered_late", "registered after data collection began: this is not a pre-registered"),
        ("paper", "Nothing was pre-registered: the threshold of 0.20 is the paper's"),
    ],
)
def test_the_threshold_is_named_by_where_it_came_from(source, words):
    text = verdict_text(falsification("falsified", threshold_source=source))
    assert words in text
    if source != "preregistered":
        assert "was pre-registered before" not in text


@pytest.mark.parametrize("language", ["de", "fr"])
@pytest.mark.parametrize("verdict", list(HEADLINES))
def test_the_headline_is_in_the_report_language(language, verdict):
    english = verdict_text(falsification(verdict))
    text = verdict_text(falsification(verdict), language)
    assert text != english
    for english_only in (
        "Nothing was decided",
        "includes the threshold",
        "lies below the threshold",
        "not computable",
        "Overall SHS correlates",
        "was pre-registered",
    ):
        assert english_only not in text, english_only


@pytest.mark.django_db(transaction=True)
def test_a_small_simulated_study_reads_inconclusive_from_the_headline(study_a, personas, tmp_path):
    call_command(
        "simulate_study", study_a.slug, "--participants", "15", "--seed", "3",
        "--annotators", "2", "--annotation-correlation", "0.2", "--store-annotations",
        stdout=io.StringIO(),
    )  # fmt: skip
    out, html = tmp_path / "c.json", tmp_path / "c.html"
    stdout = io.StringIO()
    call_command("shs_criterion", study_a.slug, "-o", str(out), "--html", str(html), stdout=stdout)
    falsification = json.loads(out.read_text())["analysis"]["falsification"]
    assert falsification["ci_low"] < 0.2 <= falsification["ci_high"]
    assert falsification["verdict"] == "inconclusive"
    printed = stdout.getvalue().splitlines()
    assert printed[1].startswith("Verdict: inconclusive. Nothing was decided.")
    page = html.read_text()
    assert page.index("Verdict: inconclusive. Nothing was decided.") < page.index("H1")
    assert "Report neither that the instrument failed nor that it passed" in page
    assert f"about {falsification['evaluations_needed']} evaluations" in page
