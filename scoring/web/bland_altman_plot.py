"""The Bland-Altman plot of a score given twice (docs/design/validation-analysis.md §14.4), for the
study report's retest section.

`bland_altman_svg(first, second)`: a small self-contained SVG (mean of the two
scores on x, difference on y, the bias and the two limits of
scoring/stats/retest/bland_altman.py as lines), as the calculator draws its
chart: plain SVG text, coordinates with a point as decimal separator, the
numbers written through scoring.web.numbers and the words through gettext, in
the active language.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

import numpy as np
from django.utils.translation import gettext, gettext_noop
from numpy.typing import NDArray

from scoring.stats.retest.bland_altman import bland_altman
from scoring.web.numbers import signed

# Geometry in SVG user units.
_WIDTH, _HEIGHT = 500, 300
_LEFT, _RIGHT, _TOP, _BOTTOM = 58, 116, 14, 46
_X_DOMAIN = (-1.0, 1.0)  # every SHS score lies on -1..+1
# The y extent is the smallest of these that holds every difference and limit.
_Y_EXTENTS = (0.25, 0.5, 1.0, 2.0)
_INK, _GRID, _POINT, _BIAS, _LIMIT = "#1b1f24", "#e5e7eb", "#4c86c6", "#1b1f24", "#b42318"


def _number(value: float) -> str:
    # Coordinates are SVG syntax, not text for a reader: never localised.
    return f"{value:.2f}"


def _y_extent(values: list[float]) -> float:
    largest = max((abs(value) for value in values), default=0.0)
    return next((extent for extent in _Y_EXTENTS if largest <= extent), _Y_EXTENTS[-1])


# A coordinate on a plot's axis -> its position in the SVG.
Scale = Callable[[float], float]


def _frame(extent: float) -> tuple[Scale, Scale]:
    plot_width = _WIDTH - _LEFT - _RIGHT
    plot_height = _HEIGHT - _TOP - _BOTTOM

    def x_at(value: float) -> float:
        return _LEFT + (value - _X_DOMAIN[0]) / (_X_DOMAIN[1] - _X_DOMAIN[0]) * plot_width

    def y_at(value: float) -> float:
        return _TOP + (extent - value) / (2 * extent) * plot_height

    return x_at, y_at


def _axes(extent: float, x_at: Scale, y_at: Scale, x_label: str, y_label: str) -> list[str]:
    parts = []
    bottom, right = _HEIGHT - _BOTTOM, _WIDTH - _RIGHT
    for tick in np.linspace(_X_DOMAIN[0], _X_DOMAIN[1], 5):
        x = _number(x_at(tick))
        parts.append(f'<line x1="{x}" y1="{_TOP}" x2="{x}" y2="{bottom}" stroke="{_GRID}"/>')
        parts.append(
            f'<text x="{x}" y="{bottom + 16}" text-anchor="middle">{escape(signed(tick))}</text>'
        )
    for tick in np.linspace(-extent, extent, 5):
        y = _number(y_at(tick))
        parts.append(f'<line x1="{_LEFT}" y1="{y}" x2="{right}" y2="{y}" stroke="{_GRID}"/>')
        parts.append(
            f'<text x="{_LEFT - 6}" y="{y}" dy="4" text-anchor="end">{escape(signed(tick))}</text>'
        )
    parts.append(
        f'<rect x="{_LEFT}" y="{_TOP}" width="{right - _LEFT}" height="{bottom - _TOP}" '
        f'fill="none" stroke="{_INK}"/>'
    )
    centre_x = _number((_LEFT + right) / 2)
    centre_y = _number((_TOP + bottom) / 2)
    parts.append(
        f'<text x="{centre_x}" y="{_HEIGHT - 8}" text-anchor="middle">{escape(x_label)}</text>'
    )
    parts.append(
        f'<text x="14" y="{centre_y}" text-anchor="middle" '
        f'transform="rotate(-90 14 {centre_y})">{escape(y_label)}</text>'
    )
    return parts


def _reference_lines(figures: dict[str, Any], y_at: Scale) -> list[str]:
    parts = []
    right = _WIDTH - _RIGHT
    lines = (
        ("bias", figures["bias"], _BIAS, "", gettext_noop("bias")),
        ("lower", figures["lower"], _LIMIT, ' stroke-dasharray="5 3"', gettext_noop("lower limit")),
        ("upper", figures["upper"], _LIMIT, ' stroke-dasharray="5 3"', gettext_noop("upper limit")),
    )
    for name, value, colour, dash, word in lines:
        y = _number(y_at(value))
        parts.append(
            f'<line class="{name}" x1="{_LEFT}" y1="{y}" x2="{right}" y2="{y}" '
            f'stroke="{colour}" stroke-width="1.5"{dash}/>'
        )
        parts.append(
            f'<text x="{right + 6}" y="{y}" dy="4" fill="{colour}">'
            f"{escape(gettext(word))} {escape(signed(value))}</text>"
        )
    return parts


def bland_altman_svg(
    first: NDArray[Any],
    second: NDArray[Any],
    *,
    score_label: str = "SHS",
    confidence: float = 0.95,
    x_label: str | None = None,
    y_label: str | None = None,
) -> str:
    """The Bland-Altman plot of a score on -1..+1 given twice, as an SVG document.

    Labels and line names are in the active language (the axis labels built
    from `score_label` unless given). Below MIN_PAIRS pairs the plot has the points and no lines.
    """
    first = np.asarray(first, dtype=np.float64)
    second = np.asarray(second, dtype=np.float64)
    figures = bland_altman(first, second, confidence=confidence)
    means, differences = (first + second) / 2.0, second - first
    limits = [figures["lower"], figures["upper"]] if figures["estimable"] else []
    extent = _y_extent([*differences.tolist(), *limits])
    x_at, y_at = _frame(extent)
    x_label = x_label or gettext("Mean of the two {score} scores").format(score=score_label)
    y_label = y_label or gettext("Second − first {score}").format(score=score_label)
    title = gettext("Bland-Altman plot of {score}, n = {n}").format(
        score=score_label, n=figures["n"]
    )
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="shs-bland-altman" '
        f'viewBox="0 0 {_WIDTH} {_HEIGHT}" width="{_WIDTH}" height="{_HEIGHT}" role="img" '
        f'aria-label="{escape(title)}" font-family="sans-serif" font-size="11" fill="{_INK}">',
        f"<title>{escape(title)}</title>",
        *_axes(extent, x_at, y_at, x_label, y_label),
    ]
    for mean, difference in zip(means, differences, strict=True):
        parts.append(
            f'<circle cx="{_number(x_at(mean))}" cy="{_number(y_at(difference))}" r="3" '
            f'fill="{_POINT}" fill-opacity="0.45"/>'
        )
    if figures["estimable"]:
        parts.extend(_reference_lines(figures, y_at))
    parts.append("</svg>")
    return "\n".join(parts)
