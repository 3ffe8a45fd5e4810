"""The figures of the criterion-validity section (docs/design/criterion.md §13.3), for the
study report and `shs_criterion --html`.

Three small self-contained SVGs, drawn as scoring/web/bland_altman_plot.py draws
its plot (through scoring/web/svg_chart.py): plain SVG text, coordinates with a
point as decimal separator, the numbers written through scoring.web.numbers and
the words through gettext, in the active language.

- `h1_svg`: overall SHS against factual precision with the OLS line, and under
  it a strip of Pearson r with its interval against the falsification and H1
  thresholds. A threshold on r has no place on a scatter; on an r axis it has.
- `h2_svg`: each dimension's r with citation support with its interval, SR
  highlighted.
- `h3_svg`: the residual of the mean of the four dimensions other than
  Deceptiveness on factual precision, against the DP score, with the OLS line
  (or, where the pre-registration made the annotated presentation measure H3's
  predictor, the residual of SHS against that measure: the figure shows what
  the test tests).

SHS measures perceived reliability: the titles say so, and none of them says
that a system is reliable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.utils.translation import get_language, gettext
from numpy.typing import NDArray

from scoring.instruments.shs import DIMENSIONS_BY_KEY
from scoring.stats.validity.hypotheses import DECEPTIVENESS
from scoring.web import svg_chart as svg
from scoring.web.numbers import MISSING, fixed, percent, signed

HIGHLIGHTED = "SR"  # H2 is about Source Reliability
_FALSIFICATION, _H1, _HIGHLIGHT = "#b42318", "#027a48", "#b54708"

# H1: the scatter, and the strip of r under it.
H1_PRECISION = svg.Axis(0.0, 1.0, 74.0, 496.0)
H1_SHS = svg.Axis(-1.0, 1.0, 250.0, 14.0)
H1_STRIP = svg.Axis(-1.0, 1.0, 74.0, 496.0)
H1_STRIP_BAND = svg.Axis(0.0, 1.0, 352.0, 324.0)  # the strip's height, bottom to top
_H1_HEIGHT = 400
# H2: one row per dimension, its name left of the r axis.
H2_R = svg.Axis(-1.0, 1.0, 226.0, 496.0)
_H2_TOP, _H2_ROW, _H2_HEIGHT = 14.0, 28.0, 214
# H3: DP (or the presentation measure) on x; the residual's axis (bottom to top) from
# the data.
H3_DECEPTIVENESS = svg.Axis(-1.0, 1.0, 74.0, 496.0)
H3_PRESENTATION = svg.Axis(0.0, 1.0, 74.0, 496.0)
_H3_BOTTOM, _H3_TOP, _H3_HEIGHT = 290.0, 14.0, 340
# The residual axis is the smallest of these extents that holds every point.
_RESIDUAL_EXTENTS = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0)


@dataclass(frozen=True)
class Estimate:
    """A correlation with its interval as the analysis reports it (None: not available)."""

    r: float | None
    ci_low: float | None = None
    ci_high: float | None = None

    @classmethod
    def of(cls, figures: Mapping[str, Any]) -> Estimate:
        return cls(figures.get("r"), figures.get("ci_low"), figures.get("ci_high"))


def _analysis_word(primary: str) -> str:
    return gettext("participant-clustered") if primary == "clustered" else gettext("unclustered")


def _whisker(estimate: Estimate, axis: svg.Axis, y: float, colour: str, name: str) -> list[str]:
    """A point (class `name`) at r, its interval as a line (class "interval") with end caps."""
    parts = []
    if estimate.ci_low is not None and estimate.ci_high is not None:
        low, high = axis.at(estimate.ci_low), axis.at(estimate.ci_high)
        parts.append(svg.segment(low, y, high, y, colour, ' class="interval" stroke-width="1.5"'))
        parts.extend(
            svg.segment(x, y - 5, x, y + 5, colour, ' stroke-width="1.5"') for x in (low, high)
        )
    if estimate.r is not None:
        parts.append(
            f'<circle class="{name}" cx="{svg.coordinate(axis.at(estimate.r))}" '
            f'cy="{svg.coordinate(y)}" r="4.5" fill="{colour}"/>'
        )
    return parts


def _thresholds(h1_threshold: float, falsification_threshold: float) -> list[str]:
    """The two pre-registered thresholds as vertical lines through the strip, the
    lower one labelled to its left and the higher to its right, so that the
    labels do not run into each other."""
    words = {
        "falsification-threshold": gettext("falsification threshold"),
        "h1-threshold": gettext("H1 threshold"),
    }
    marks = sorted(
        [
            (falsification_threshold, "falsification-threshold", _FALSIFICATION),
            (h1_threshold, "h1-threshold", _H1),
        ]
    )
    top, bottom = H1_STRIP_BAND.end, H1_STRIP_BAND.start
    parts = []
    for position, (value, name, colour) in enumerate(marks):
        x = H1_STRIP.at(value)
        dash = f' class="{name}" stroke-width="2" stroke-dasharray="4 3"'
        parts.append(svg.segment(x, top - 2, x, bottom, colour, dash))
        anchor, shift = ("end", -4.0) if position == 0 else ("start", 4.0)
        label = f"{words[name]} {signed(value)}"
        parts.append(svg.text(x + shift, top - 6, label, anchor, f' fill="{colour}"'))
    return parts


def _strip(
    estimate: Estimate,
    *,
    h1_threshold: float,
    falsification_threshold: float,
    confidence: float,
    primary: str,
) -> list[str]:
    """Pearson r with its interval on an r axis, against the two thresholds."""
    band = H1_STRIP_BAND
    title = gettext("Pearson r and its {level} interval ({analysis}): r = {r}").format(
        level=percent(confidence, 0), analysis=_analysis_word(primary), r=signed(estimate.r)
    )
    return [
        *svg.vertical_grid(H1_STRIP, band.end, band.start, svg.ticks(-1, 1, 9), signed),
        svg.frame(H1_STRIP, band),
        *_thresholds(h1_threshold, falsification_threshold),
        *_whisker(estimate, H1_STRIP, band.middle, svg.INK, "estimate"),
        *svg.x_title(title, H1_STRIP.middle, band.start + 36),
    ]


def h1_svg(
    precision: NDArray[Any],
    shs: NDArray[Any],
    estimate: Estimate,
    *,
    h1_threshold: float,
    falsification_threshold: float,
    confidence: float,
    primary: str,
) -> str:
    """Overall SHS against factual precision, one point per evaluation, with the OLS
    line; under it the strip of r (`estimate`, the primary analysis) against the
    thresholds."""
    precision, shs = np.asarray(precision, dtype=float), np.asarray(shs, dtype=float)
    title = gettext(
        "Overall SHS (perceived reliability) against factual precision, n = {n} evaluations, "
        "with the OLS line; below, Pearson r with its interval against the thresholds"
    ).format(n=len(shs))
    parts = [
        *svg.vertical_grid(H1_PRECISION, H1_SHS.end, H1_SHS.start, svg.ticks(0, 1, 5), fixed),
        *svg.horizontal_grid(H1_SHS, H1_PRECISION, svg.ticks(-1, 1, 5), signed),
        svg.frame(H1_PRECISION, H1_SHS),
        *svg.x_title(
            gettext("Factual precision (annotators' mean, 0 to 1)"),
            H1_PRECISION.middle,
            H1_SHS.start + 34,
        ),
        *svg.y_title(gettext("Overall SHS (perceived reliability)"), H1_SHS),
        *svg.points(precision, shs, H1_PRECISION, H1_SHS),
        *svg.fitted(precision, shs, H1_PRECISION, H1_SHS),
        *_strip(
            estimate,
            h1_threshold=h1_threshold,
            falsification_threshold=falsification_threshold,
            confidence=confidence,
            primary=primary,
        ),
    ]
    return svg.document("criterion-h1", _H1_HEIGHT, title, parts)


def _dimension_row(key: str, estimate: Estimate, y: float, language: str) -> list[str]:
    highlighted = key == HIGHLIGHTED
    colour = _HIGHLIGHT if highlighted else svg.POINT
    weight = ' font-weight="bold"' if highlighted else ""
    label = f"{key} {DIMENSIONS_BY_KEY[key].label_in(language)}"
    parts = [svg.text(H2_R.start - 8, y, label, "end", f' dy="4"{weight}')]
    if estimate.r is None:
        parts.append(svg.text(H2_R.start + 6, y, MISSING, "start", ' dy="4"'))
    name = "dimension highlighted" if highlighted else "dimension"
    return parts + _whisker(estimate, H2_R, y, colour, name)


def h2_svg(correlations: Mapping[str, Estimate], *, n: int, confidence: float, primary: str) -> str:
    """Each dimension's r with citation support and its interval, one row each, SR
    highlighted; a dimension without r shows a dash."""
    language = (get_language() or "en").split("-")[0]
    title = gettext(
        "Pearson r of each SHS dimension (perceived reliability) with citation support, "
        "with its interval, n = {n} evaluations; Source Reliability highlighted"
    ).format(n=n)
    rows = svg.Axis(0.0, len(correlations), _H2_TOP, _H2_TOP + _H2_ROW * len(correlations))
    axis_title = gettext("Pearson r with citation support and its {level} interval ({analysis})")
    parts = [
        *svg.vertical_grid(H2_R, rows.start, rows.end, svg.ticks(-1, 1, 5), signed),
        svg.segment(H2_R.at(0.0), rows.start, H2_R.at(0.0), rows.end, svg.INK),
        svg.frame(H2_R, svg.Axis(0.0, 1.0, rows.end, rows.start)),
    ]
    for i, (key, estimate) in enumerate(correlations.items()):
        parts.extend(_dimension_row(key, estimate, rows.at(i + 0.5), language))
    words = axis_title.format(level=percent(confidence, 0), analysis=_analysis_word(primary))
    parts.extend(svg.x_title(words, svg.WIDTH / 2, rows.end + 34))
    return svg.document("criterion-h2", _H2_HEIGHT, title, parts)


def residual_axis(residual: NDArray[Any]) -> svg.Axis:
    """The H3 figure's y axis: symmetric about zero, wide enough for every residual."""
    largest = float(np.abs(residual).max()) if len(residual) else 0.0
    extent = next((e for e in _RESIDUAL_EXTENTS if largest <= e), float(np.ceil(largest)))
    return svg.Axis(-extent, extent, _H3_BOTTOM, _H3_TOP)


def _h3_words(predictor: str, n: int) -> tuple[str, str, str]:
    """The title, x-axis title and y-axis title of the H3 figure, for either form."""
    if predictor == DECEPTIVENESS:
        title = gettext(
            "Residual of the mean of the other four dimensions (FA, SR, LC, RG) on factual "
            "precision against the Deceptiveness score (DP), n = {n} evaluations, with the "
            "OLS line"
        )
        return (
            title.format(n=n),
            gettext("Deceptiveness (DP) score, −1 to +1"),
            gettext("Residual of the mean of FA, SR, LC and RG on factual precision (OLS)"),
        )
    title = gettext(
        "Residual of overall SHS (perceived reliability) on factual precision against the "
        "annotated presentation measure, n = {n} evaluations, with the OLS line"
    )
    return (
        title.format(n=n),
        gettext("Presentation measure (annotators' mean, 0 to 1)"),
        gettext("Residual of overall SHS on factual precision (OLS)"),
    )


def h3_svg(values: NDArray[Any], residual: NDArray[Any], *, predictor: str = DECEPTIVENESS) -> str:
    """H3's residual against its predictor, one point per evaluation, with the OLS
    line: with DP, the residual of the mean of FA, SR, LC and RG on factual
    precision; with the presentation measure, the residual of SHS."""
    values, residual = np.asarray(values, dtype=float), np.asarray(residual, dtype=float)
    y_axis = residual_axis(residual)
    x_axis, label = (
        (H3_DECEPTIVENESS, signed) if predictor == DECEPTIVENESS else (H3_PRESENTATION, fixed)
    )
    title, x_words, y_words = _h3_words(predictor, len(residual))
    parts = [
        *svg.vertical_grid(x_axis, y_axis.end, y_axis.start, svg.ticks(x_axis.low, 1, 5), label),
        *svg.horizontal_grid(y_axis, x_axis, svg.ticks(y_axis.low, y_axis.high, 5), signed),
        svg.frame(x_axis, y_axis),
        *svg.x_title(x_words, x_axis.middle, y_axis.start + 34),
        *svg.y_title(y_words, y_axis),
        *svg.points(values, residual, x_axis, y_axis),
        *svg.fitted(values, residual, x_axis, y_axis),
    ]
    return svg.document("criterion-h3", _H3_HEIGHT, title, parts)
