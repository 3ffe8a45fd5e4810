"""The readable report of an SHS analysis: tables of every figure, plots, methods.

Ways to use it:

- `render_analysis_html(result, answers)` gives a complete, self-contained
  HTML document (CSS inline, plots as data: URIs), as `shs_analyze --html`
  writes it;
- `render_analysis_fragment(result, answers)` gives the report body alone,
  and `analysis_context(result, answers)` the context for the template
  include `scoring/_analysis.html` (as `analysis`), for a page of the site
  that shows the analysis among other things; such a page loads
  `static/scoring/report.css` in its head.

The study report includes the same template with the same context, built
from its stored analysis and its stored plots (`figures`), so an analysis
reads the same wherever it is shown. Numbers are written by scoring.web.numbers
(its docstring states the convention), localised by the report's language
("0.25" in English, "0,25" in German and French); the JSON keeps its numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.staticfiles import finders
from django.template.loader import render_to_string
from django.utils import timezone, translation
from django.utils.safestring import mark_safe
from numpy.typing import NDArray

from scoring.instruments.common import translated
from scoring.instruments.shs import (
    DIMENSIONS,
    INSTRUMENT_VERSION,
    INTERPRETATION_NOTE,
    ITEMS,
    SCALE,
    attribution,
)
from scoring.scores.engine import score_array
from scoring.stats.caveats import SB_NOT_INTERPRETABLE, SMALL_SAMPLE
from scoring.stats.reliability.analysis import DIMENSION_PAIRS, MIN_EVALUATIONS
from scoring.stats.validation_data import ValidationData
from scoring.web.bland_altman_plot import bland_altman_svg
from scoring.web.numbers import MISSING, fixed, interval, p_statement, p_value, percent, signed
from scoring.web.readable import readable_warnings

REPORT_CSS = "scoring/report.css"
NOT_AVAILABLE = MISSING


def _item_rows(result: dict[str, Any], language: str) -> list[dict[str, Any]]:
    return [
        {
            "key": item.key,
            "number": item.number,
            "text": item.text_in(language),
            "dimension": item.dimension,
            "polarity": "+" if item.polarity > 0 else "−",
            "item_total": signed(result["item_total"][item.key]),
            "alpha_if_deleted": fixed(result["alpha_if_deleted"][item.key]),
            "agreement": percent(result["item_agreement"][item.key]),
        }
        for item in ITEMS
    ]


def _flagged(result: dict[str, Any], message: str) -> set[str]:
    """The figures that carry a caveat with this message."""
    return {w["figure"] for w in result["warnings"] if w.get("message") == message}


def _dimension_rows(result: dict[str, Any], language: str) -> list[dict[str, Any]]:
    additions = result["additions"]
    flagged = _flagged(result, SB_NOT_INTERPRETABLE)
    paired_p = result.get("paired_item_p", {})
    return [
        {
            "key": dimension.key,
            "label": dimension.label_in(language),
            "items": f"Q{dimension.positive_item[1:]} / Q{dimension.negative_item[1:]}",
            "mean": signed(result["dimension_profile"][dimension.key]["mean"]),
            "sd": fixed(result["dimension_profile"][dimension.key]["sd"]),
            "consistent_share": percent(result["consistent_share"][dimension.key]),
            "paired_item_r": signed(result["paired_item_r"][dimension.key]),
            "paired_item_p": p_value(paired_p.get(dimension.key)),
            "spearman_brown": fixed(additions["spearman_brown"][dimension.key]),
            "spearman_brown_flagged": (f"additions.spearman_brown.{dimension.key}" in flagged),
        }
        for dimension in DIMENSIONS
    ]


def _correlation_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for first, second in DIMENSION_PAIRS:
        figures = result["dimension_correlations"][f"{first}-{second}"]
        rows.append(
            {"pair": f"{first} – {second}", "r": signed(figures["r"]), "p": p_value(figures["p"])}
        )
    return rows


def _answer_counts(result: dict[str, Any], language: str) -> list[dict[str, Any]]:
    counts = result["response_chi2"]["counts"]
    total = sum(counts.values())
    return [
        {
            "code": f"{option.code:+d}" if option.code else "0",
            "label": option.label_in(language),
            "count": counts[str(option.code)],
            "share": percent(counts[str(option.code)] / total) if total else NOT_AVAILABLE,
        }
        for option in SCALE
    ]


def _plots(result: dict[str, Any], answers: NDArray[Any] | None, language: str) -> dict[str, Any]:
    from scoring.web import plots  # matplotlib only for a report that draws its plots

    uris = {
        "profile": plots.png_data_uri(plots.dimension_profile_png(result, language)),
        "heatmap": plots.png_data_uri(plots.correlation_heatmap_png(result)),
        "items": None,
    }
    if answers is not None:
        uris["items"] = plots.png_data_uri(plots.item_distribution_png(answers, language))
    return uris


def _overall(result: dict[str, Any]) -> dict[str, Any]:
    mean = result["overall"]["mean"]
    return {
        "overall_mean": signed(mean),
        "overall_sd": fixed(result["overall"]["sd"]),
        "overall_mean_100": fixed(None if mean is None else 50 * (mean + 1), 1),
        "shapiro_w": fixed(result["shapiro"]["W"], 3),
        "shapiro_p": p_value(result["shapiro"]["p"]),
        "skewness": fixed(result["skewness"]),
        "kurtosis": fixed(result["kurtosis"]),
    }


def analysis_context(
    result: dict[str, Any],
    answers: NDArray[Any] | None = None,
    *,
    language: str = "en",
    with_plots: bool = True,
    sample_note: str = "",
    figures: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything `scoring/_analysis.html` shows, formatted for reading.

    `answers` (the raw (n, 10) array) adds the item-answer distribution plot;
    `figures` are plots drawn before (a stored study report's data: URIs),
    shown instead of drawing them again; `sample_note` is stated next to each
    block of figures (for a study: its sample, prompting regime and exclusions).
    """
    alpha = result["cronbach_alpha"]
    chi2 = result["response_chi2"]
    plots: dict[str, Any] | None
    if figures is not None:
        plots = {key: figures.get(key) for key in ("profile", "heatmap", "items")}
    else:
        plots = _plots(result, answers, language) if with_plots else None
    correlations = _correlation_rows(result)
    return {
        "language": language,
        "n": result["n"],
        "instrument_version": INSTRUMENT_VERSION,
        "min_evaluations": MIN_EVALUATIONS,
        "alpha": fixed(alpha["alpha"]),
        "alpha_ci95": interval(alpha["ci95"]),
        "omega_total": fixed(result["additions"]["omega_total"]),
        "items": _item_rows(result, language),
        "dimensions": _dimension_rows(result, language),
        "correlations": correlations,
        "no_correlations": all(row["r"] == MISSING for row in correlations),
        **_overall(result),
        "chi2": fixed(chi2["chi2"], 1),
        "chi2_df": chi2["df"],
        "chi2_p": p_statement(chi2["p"]),
        "answer_counts": _answer_counts(result, language),
        "warnings": readable_warnings(result["warnings"]),
        "small_sample": result.get("small_sample"),
        # Which reported figures rest on fewer evaluations than the study asks for.
        "caution": {figure: True for figure in _flagged(result, SMALL_SAMPLE)},
        "input": result.get("input"),
        "plots": plots,
        "interpretation": translated(INTERPRETATION_NOTE, language),
        **attribution(language),
        "sample_note": sample_note,
    }


def _report_css() -> str:
    """Our own static stylesheet, inlined so the report needs no server."""
    found = finders.find(REPORT_CSS)
    return mark_safe(Path(found).read_text(encoding="utf-8")) if found else ""


def render_analysis_fragment(
    result: dict[str, Any],
    answers: NDArray[Any] | None = None,
    *,
    language: str = "en",
    **options: Any,
) -> str:
    """The report body (`scoring/_analysis.html`) for embedding in another page."""
    with translation.override(language):
        context = {"analysis": analysis_context(result, answers, language=language, **options)}
        return render_to_string("scoring/_analysis.html", context)


def validation_section(
    validation: dict[str, Any], data: ValidationData, language: str = "en"
) -> dict[str, Any]:
    """What `validation/_validation.html` shows of `validation_analysis`'s result, as
    the study report has it (validation/report.py): with the Bland-Altman plot
    of the overall SHS where the retest is estimable."""
    section = dict(validation)
    retest = validation.get("retest") or {}
    if retest.get("scores", {}).get("shs", {}).get("estimable") and data.retest is not None:
        first = score_array(data.retest.first).shs
        second = score_array(data.retest.second).shs
        with translation.override(language):
            plot = bland_altman_svg(first, second, score_label="SHS")
        section["retest"] = {**retest, "plot_svg": plot}
    return section


def render_analysis_html(
    result: dict[str, Any],
    answers: NDArray[Any] | None = None,
    *,
    language: str = "en",
    title: str = "",
    source: str = "",
    validation: dict[str, Any] | None = None,
    **options: Any,
) -> str:
    """A complete, self-contained HTML report: open it from disk, mail it, archive it.

    `validation` (from `validation_section`) adds the validation programme's
    section, the study report's own template."""
    with translation.override(language):
        context = {
            "analysis": analysis_context(result, answers, language=language, **options),
            "validation": validation,
            "title": title,
            "source": source,
            "generated": timezone.localdate().isoformat(),
            "css": _report_css(),
        }
        return render_to_string("scoring/analysis_report.html", context)
