"""The `explain` filter: a reason, problem or verdict of the validation analyses
in the report's language, its numbers written by scoring.numbers."""

import pytest
from django.template import Context, Template
from django.utils import translation

from scoring.bland_altman import TOO_FEW
from scoring.caveats import reason, sentence
from scoring.cfa import FITS_BETTER
from scoring.invariance import DOES_NOT_HOLD
from validation.templatetags.validation_text import explain


def _render(value, language: str) -> str:
    with translation.override(language):
        return Template("{% load validation_text %}{{ value|explain }}").render(
            Context({"value": value})
        )


def test_a_reason_is_filled_and_translated_not_printed_as_its_template():
    # The defect: "needs at least {needed} retest pairs, got {n}" printed as it stands.
    why = reason(TOO_FEW, needed=10, n=3)
    assert _render(why, "en") == "needs at least 10 retest pairs, got 3"
    german = _render(why, "de")
    assert "{" not in german and "10" in german and "3" in german
    assert german != why["reason"]


def test_numbers_follow_the_language_p_and_signed_deltas_included():
    said = sentence(FITS_BETTER, chi2=30.5, df=10, p=0.0004)
    assert said["text"].endswith("(chi-square difference 30.50, df 10, p < 0.001).")
    german = _render(said, "de")
    # Rendered with autoescape on: "<" is "&lt;".
    assert "30,50" in german and "p &lt; 0,001" in german and "signifikant besser" in german
    holds = sentence(DOES_NOT_HOLD, step="Metric", delta_cfi=-0.012)
    assert "-0.012" in holds["text"]
    french = _render(holds, "fr")
    assert "-0,012" in french and "métrique" in french and "{" not in french


def test_a_plain_string_goes_through_gettext_and_nothing_renders_as_nothing():
    with translation.override("de"):
        assert explain("the SHS") == "die SHS"
        assert explain(None) == "" and explain("") == ""
        # A stored report from before the templates: its English text under the key.
        assert explain({"problem": "unknown words"}, "problem") == "unknown words"


@pytest.mark.parametrize("language", ["de", "fr"])
def test_a_nested_problem_inside_a_warning_is_translated_too(language):
    from scoring.cfa import FIVE_PROBLEM
    from scoring.cfa_fit import NOT_CONVERGED, problem

    inner = problem(NOT_CONVERGED)
    warning = sentence(FIVE_PROBLEM, problem=inner)
    assert warning["text"] == "five-factor model: " + inner["problem"]
    rendered = _render(warning, language)
    assert "ML" in rendered and "did not converge" not in rendered
