"""The HTML report and its plots: every figure readable, methods and non-claims stated."""

import base64
import html
import re

import numpy as np
import pytest

from scoring.stats.reliability.analysis import analyze
from scoring.web import plots
from scoring.web.numbers import fixed, p_value, signed
from scoring.web.report import analysis_context, render_analysis_html

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def study():
    rng = np.random.default_rng(21)
    perceived = rng.normal(0.2, 1, size=(200, 1))
    noise = rng.normal(size=(200, 10))
    answers = np.clip(np.rint(perceived * np.array([1, -1] * 5) + noise), -2, 2).astype(int)
    return answers, analyze(answers)


@pytest.fixture(scope="module")
def page(study):
    answers, result = study
    return render_analysis_html(result, answers, title="Pilot study", source="pilot.csv")


def text_of(page: str) -> str:
    page = re.sub(r"<style>.*?</style>", " ", page, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def test_report_is_one_self_contained_file(page):
    assert page.startswith("<!DOCTYPE html>")
    assert "<style>" in page and ".shs-analysis" in page  # the stylesheet is inlined
    assert 'rel="stylesheet"' not in page and "<script" not in page
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(images) == 3
    assert all(base64.b64decode(image).startswith(PNG_MAGIC) for image in images)


def test_report_tables_show_every_figure(study, page):
    _, result = study
    text = text_of(page)
    assert f"{result['n']} evaluations with the SHS (shs-1.0)" in text
    assert f"Cronbach's alpha {result['cronbach_alpha']['alpha']:.2f}" in text
    lower, upper = result["cronbach_alpha"]["ci95"]
    assert f"[{lower:.2f}, {upper:.2f}]" in text
    assert f"{result['additions']['omega_total']:.2f}" in text
    for key in ("q1", "q7", "q10"):
        assert signed(result["item_total"][key]) in text
        assert fixed(result["alpha_if_deleted"][key]) in text
    for pair in ("FA – SR", "LC – DP", "DP – RG"):
        assert pair in text
    first = result["dimension_correlations"]["FA-SR"]
    assert f"FA – SR {signed(first['r'])} {p_value(first['p'])}" in text
    assert f"χ²(4) = {result['response_chi2']['chi2']:.1f}" in text
    assert f"Shapiro-Wilk W {result['shapiro']['W']:.3f}" in text
    assert f"Skewness {result['skewness']:.2f}" in text


def test_report_states_each_method(page):
    text = text_of(page)
    for method in (
        "Feldt (1965)",
        "bias-corrected sample skewness",
        "bias-corrected excess kurtosis",
        "as SPSS reports it",
        "corrected item-total correlation",
        "Royston's approximation",
        "minimum residuals",
        "Spearman-Brown: 2r / (1 + r)",
        "p two-sided, from the t distribution",
        "against a uniform distribution",
    ):
        assert method.lower() in text.lower(), method


def test_report_says_what_the_scores_are_not(page):
    text = text_of(page)
    assert "Perceived, not measured, reliability." in text
    assert "Systems are pooled, not compared." in text
    assert "It is not a measurement of whether the system is reliable." in text
    assert "beyond the paper" in text


def test_report_credits_the_scale(page):
    assert "Heimo Müller, Dominik Steiger, Markus Plass and Andreas Holzinger" in page
    assert 'href="https://creativecommons.org/licenses/by-nc-nd/4.0/"' in page


def test_report_in_french_shows_the_french_items():
    answers = np.random.default_rng(2).integers(-2, 3, size=(30, 10))
    page = render_analysis_html(analyze(answers), answers, language="fr", with_plots=False)
    assert '<html lang="fr">' in page
    assert "Le LLM a ignoré mes instructions et a continué à générer des fausses informations." in (
        html.unescape(page)
    )


def test_a_degenerate_analysis_renders_with_dashes_and_reasons():
    answers = np.array([[1, -1] * 5, [2, -2] * 5])
    page = render_analysis_html(analyze(answers), answers, with_plots=False)
    text = text_of(page)
    assert "Cronbach's alpha —" in text
    assert "Cronbach's alpha: needs at least 3 evaluations, got 2" in text
    assert "McDonald's omega total: needs at least 3 evaluations, got 2" in text
    assert "nan" not in text.lower().split()


def test_context_without_plots_for_pages_that_draw_their_own(study):
    _, result = study
    context = analysis_context(result, with_plots=False, sample_note="Adversarial prompting.")
    assert context["plots"] is None
    assert context["sample_note"] == "Adversarial prompting."
    assert [row["key"] for row in context["dimensions"]] == ["FA", "SR", "LC", "DP", "RG"]


@pytest.mark.parametrize(
    ("value", "text"), [(None, "—"), (0.87, "0.87"), (-0.0001, "0.00"), (-0.25, "-0.25")]
)
def test_fixed_formatting(value, text):
    assert fixed(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "—"), (0.25, "+0.25"), (-0.25, "-0.25"), (0, "0.00"), (0.004, "0.00")]
    + [(-0.004, "0.00")],
)
def test_signed_formatting_gives_no_sign_to_zero(value, text):
    assert signed(value) == text


def test_p_value_formatting():
    assert (p_value(0.0004), p_value(0.051), p_value(None)) == ("< 0.001", "0.051", "—")


def test_png_data_uri():
    assert plots.png_data_uri(b"\x89PNG") == "data:image/png;base64,iVBORw=="


def test_plots_cope_with_missing_figures():
    result = analyze(np.zeros((2, 10), dtype=int))
    assert plots.dimension_profile_png(result).startswith(PNG_MAGIC)
    assert np.isnan(plots.correlation_matrix(result)[0, 1])
    assert plots.correlation_heatmap_png(result).startswith(PNG_MAGIC)
    assert plots.item_distribution_png(np.zeros((0, 10), dtype=int)).startswith(PNG_MAGIC)


# --- caveats in the reader's words, small samples, localised numbers -------------

INTERNAL_KEYS = re.compile(
    r"additions\.|omega_total|cronbach_alpha|paired_item|item_total\.|spearman_brown\.|"
    r"dimension_correlations|alpha_if_deleted"
)


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_caveats_name_figures_for_a_reader_never_by_key(language):
    answers = np.random.default_rng(4).integers(-2, 3, size=(12, 10))
    answers[:, 3] = 1  # q4 never varies: several figures are null, with reasons
    page = render_analysis_html(analyze(answers), answers, language=language, with_plots=False)
    assert not INTERNAL_KEYS.search(text_of(page))


def test_small_samples_show_a_caution_next_to_alpha_correlations_and_normality():
    answers = np.random.default_rng(6).integers(-2, 3, size=(12, 10))
    small = text_of(render_analysis_html(analyze(answers), answers, with_plots=False))
    assert "Small sample. These figures rest on 12 evaluations, fewer than the 30" in small
    assert small.count("(small sample)") == 3  # alpha, Shapiro-Wilk, paired-item r
    assert "Small sample (n = 12): read these correlations with caution." in small

    relaxed = analyze(answers, small_sample_n=10)
    large = text_of(render_analysis_html(relaxed, answers, with_plots=False))
    assert "Small sample" not in large and "(small sample)" not in large


def test_paired_item_p_and_a_flagged_spearman_brown_are_shown():
    rng = np.random.default_rng(8)
    answers = rng.integers(-2, 3, size=(200, 10))
    answers[:150, 1] = answers[:150, 0]  # q1 and reversed q2 correlate strongly negative
    result = analyze(answers)
    text = text_of(render_analysis_html(result, answers, with_plots=False))
    first = result["paired_item_r"]["FA"]
    assert f"{signed(first)} < 0.001 {fixed(2 * first / (1 + first))} (not interpretable" in text
    second = result["paired_item_p"]["SR"]
    assert p_value(second) in text


def test_numbers_are_localised_by_the_report_language(study):
    answers, result = study
    alpha = result["cronbach_alpha"]["alpha"]
    lower, upper = result["cronbach_alpha"]["ci95"]
    for language, decimal, separator in (("en", ".", ", "), ("de", ",", "; "), ("fr", ",", "; ")):
        text = text_of(render_analysis_html(result, answers, language=language, with_plots=False))
        assert f"{alpha:.2f}".replace(".", decimal) in text
        interval = separator.join(f"{v:.2f}".replace(".", decimal) for v in (lower, upper))
        assert f"[{interval}]" in text
        assert f"< 0{decimal}001" in text


def test_report_in_german_is_translated():
    answers = np.random.default_rng(2).integers(-2, 3, size=(40, 10))
    text = text_of(render_analysis_html(analyze(answers), answers, language="de", with_plots=False))
    for german in (
        "Die Antwort war sachlich zuverlässig.",
        "Faktische Genauigkeit",
        "Stimme voll zu",
    ):
        assert german in text
    for english in ("Overall score", "Internal consistency", "Dimension profile", "Strongly agree"):
        assert english not in text
