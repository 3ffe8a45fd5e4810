"""The `explain` filter: a reason, problem or verdict of the validation analyses
in the report's language, its numbers written by scoring.web.numbers."""

import pytest
from django.template import Context, Template
from django.utils import translation

from scoring.stats.caveats import reason, sentence
from scoring.stats.factors.cfa import FITS_BETTER
from scoring.stats.factors.invariance import DOES_NOT_HOLD
from scoring.stats.retest.bland_altman import TOO_FEW
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
    from scoring.stats.factors.cfa import FIVE_PROBLEM
    from scoring.stats.factors.fit import NOT_CONVERGED, problem

    inner = problem(NOT_CONVERGED)
    warning = sentence(FIVE_PROBLEM, problem=inner)
    assert warning["text"] == "five-factor model: " + inner["problem"]
    rendered = _render(warning, language)
    assert "ML" in rendered and "did not converge" not in rendered


def _template(name: str, language: str = "en", **context) -> str:
    from django.template.loader import render_to_string

    with translation.override(language):
        return render_to_string(f"validation/{name}", context)


def test_alpha_is_written_without_a_sign_and_a_correlation_with_one():
    figure = {"n": 80, "estimate": 0.85, "reason": None, "ci95_naive": None,
              "ci95_clustered": {"interval": [0.8, 0.9]}}  # fmt: skip
    assert ">0.85<" in _template("_nested_row.html", f=figure, unsigned=True)
    assert ">+0.85<" in _template("_nested_row.html", f=figure)


def test_invariance_without_a_group_large_enough_says_so_instead_of_groups_colon_dot():
    import numpy as np

    from scoring.stats.factors.invariance import invariance

    answers = np.random.default_rng(1).integers(-2, 3, size=(60, 10))
    language = np.array(["de", "fr"] * 30)
    result = invariance(answers, language, grouping="language")  # 30 each, below 100
    assert result["groups"] == [] and len(result["too_small"]) == 2
    html = _template("_invariance.html", "de", invariance={"language": result})
    assert "Gruppen: ." not in html and "Groups: ." not in html
    assert "Keine Gruppe ist groß genug" in html
    assert "Invariance needs" not in html and "mindestens zwei Gruppen" in html


def test_a_disattenuated_r_above_one_shows_its_note():
    from scoring.stats.validity.convergent import disattenuated

    corrected = disattenuated(0.8, [0.7, 0.88], 0.7, 0.8)
    assert corrected["r"] > 1 and corrected["note"]
    pair = {
        "n": 50,
        "r": 0.8,
        "ci": [0.7, 0.88],
        "reasons": [],
        "verdict": "not distinguishable",
        "reliability_score": {"value": 0.7},
        "reliability_companion": {"value": 0.8},
        "disattenuated": corrected,
        "explanation": "x",
        "message": "x",
        "params": {},
    }
    convergent = {"pairs": {"shs": {"sus": pair}, "FA": {"sus": pair}}, "companions": ["sus"],
                  "ceiling": 0.85, "method": "m"}  # fmt: skip
    html = _template("_convergent.html", convergent=convergent)
    assert html.count("the corrected r exceeds 1 in size") == 2


def test_the_cfa_difference_writes_p_as_a_statement():
    difference = {"problem": None, "chi2": 30.5, "df": 10, "p": 0.0004, "verdict": "v"}
    cfa = {"n": 300, "estimator": "ML", "five": {"problem": "a"}, "one": {"problem": "b"},
           "difference": difference, "warnings": [], "method": "m"}  # fmt: skip
    html = _template("_cfa.html", cfa=cfa)
    assert "Δdf = 10, p &lt; 0.001." in html and "p p" not in html


def test_the_retest_section_names_the_icc_unit_and_the_clustered_interval_in_french():
    import numpy as np

    from scoring.stats.retest.stability import retest_report
    from scoring.stats.validation_data import RetestPairs
    from scoring.web import numbers

    rng = np.random.default_rng(2)
    person = rng.normal(size=30)
    polarity = np.array([1, -1] * 5)

    def answers():
        noise = rng.normal(scale=0.8, size=(30, 10))
        return np.clip(np.rint(person[:, None] * polarity + noise), -2, 2).astype(int)

    pairs = RetestPairs(answers(), answers(), np.arange(30), np.full(30, 14.0))
    retest = retest_report(pairs, resamples=200, seed=1)
    html = _template("_retest.html", "fr", retest=retest)
    assert "est la paire de retest, une par participant" in html and "(N = 30)" in html
    assert "graine 1" in html  # how the clustered intervals were drawn
    assert "IC à 95 %, par grappes de participants" in html and "Paires (participants)" in html
    with translation.override("fr"):
        clustered = retest["scores"]["shs"]["icc2_1"]["ci95_clustered"]["interval"]
        assert numbers.interval(clustered) in html
