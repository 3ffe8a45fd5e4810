"""A small toolkit for the report's self-contained SVG charts (scoring/web/criterion_plots.py):
axes that map data to SVG user units, grid lines with tick labels, points and
an OLS line.

Coordinates are SVG syntax, written with a point as decimal separator and never
localised; tick labels are whatever the caller's formatter (scoring.web.numbers)
writes, in the active language. No element has an id: several charts share one
HTML page.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

import numpy as np
from numpy.typing import NDArray

WIDTH = 520
INK, GRID, POINT = "#1b1f24", "#e5e7eb", "#4c86c6"
# About this many SVG units a character at font size 11 (a little more than a
# sans-serif's average, to be safe): where a title wraps.
_CHARACTER = 5.5


@dataclass(frozen=True)
class Axis:
    """The data range low..high, drawn from `start` to `end` in SVG user units
    (on a vertical axis `end` lies above `start`: y grows downwards)."""

    low: float
    high: float
    start: float
    end: float

    def at(self, value: float) -> float:
        return self.start + (value - self.low) / (self.high - self.low) * (self.end - self.start)

    @property
    def middle(self) -> float:
        return (self.start + self.end) / 2


def ticks(low: float, high: float, count: int) -> list[float]:
    return [float(tick) for tick in np.linspace(low, high, count)]


def coordinate(value: float) -> str:
    return f"{value:.2f}"


def text(x: float, y: float, words: str, anchor: str = "middle", extra: str = "") -> str:
    return (
        f'<text x="{coordinate(x)}" y="{coordinate(y)}" text-anchor="{anchor}"{extra}>'
        f"{escape(words)}</text>"
    )


def segment(x1: float, y1: float, x2: float, y2: float, stroke: str, extra: str = "") -> str:
    return (
        f'<line x1="{coordinate(x1)}" y1="{coordinate(y1)}" x2="{coordinate(x2)}" '
        f'y2="{coordinate(y2)}" stroke="{stroke}"{extra}/>'
    )


def document(name: str, height: int, title: str, parts: Sequence[str]) -> str:
    """The SVG, its title read out by screen readers (`<title>` and aria-label)."""
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" class="shs-chart {name}" '
            f'viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" '
            f'aria-label="{escape(title)}" font-family="sans-serif" font-size="11" fill="{INK}">',
            f"<title>{escape(title)}</title>",
            *parts,
            "</svg>",
        ]
    )


def vertical_grid(
    axis: Axis, top: float, bottom: float, at: Sequence[float], label: Callable[[float], str]
) -> list[str]:
    """Grid lines across top..bottom at `at`, each labelled `label(tick)` below."""
    parts = []
    for tick in at:
        x = axis.at(tick)
        parts.append(segment(x, top, x, bottom, GRID))
        parts.append(text(x, bottom + 16, label(tick)))
    return parts


def horizontal_grid(
    axis: Axis, x_axis: Axis, at: Sequence[float], label: Callable[[float], str]
) -> list[str]:
    """Grid lines across the x axis at `at`, each labelled `label(tick)` on the left."""
    parts = []
    for tick in at:
        y = axis.at(tick)
        parts.append(segment(x_axis.start, y, x_axis.end, y, GRID))
        parts.append(text(x_axis.start - 6, y, label(tick), "end", ' dy="4"'))
    return parts


def frame(x_axis: Axis, y_axis: Axis) -> str:
    return (
        f'<rect x="{coordinate(x_axis.start)}" y="{coordinate(y_axis.end)}" '
        f'width="{coordinate(x_axis.end - x_axis.start)}" '
        f'height="{coordinate(y_axis.start - y_axis.end)}" fill="none" stroke="{INK}"/>'
    )


def x_title(words: str, centre: float, y: float, width: float = WIDTH - 16) -> list[str]:
    """A horizontal title centred on `centre`, wrapped to `width` units, its first
    line at `y`."""
    lines = textwrap.wrap(words, int(width / _CHARACTER))
    return [text(centre, y + 13.0 * i, words_line) for i, words_line in enumerate(lines)]


def y_title(words: str, y_axis: Axis) -> list[str]:
    """The title of a vertical axis, rotated, wrapped to the axis' length."""
    width = int((y_axis.start - y_axis.end) / _CHARACTER)
    parts = []
    for i, words_line in enumerate(textwrap.wrap(words, width)):
        x = 14.0 + 13.0 * i
        turn = f' transform="rotate(-90 {coordinate(x)} {coordinate(y_axis.middle)})"'
        parts.append(text(x, y_axis.middle, words_line, extra=turn))
    return parts


def points(xs: NDArray[Any], ys: NDArray[Any], x_axis: Axis, y_axis: Axis) -> list[str]:
    """One circle (class "evaluation") per pair."""
    return [
        f'<circle class="evaluation" cx="{coordinate(x_axis.at(x))}" '
        f'cy="{coordinate(y_axis.at(y))}" r="3" fill="{POINT}" fill-opacity="0.45"/>'
        for x, y in zip(xs.tolist(), ys.tolist(), strict=True)
    ]


def ols_line(x: NDArray[Any], y: NDArray[Any]) -> tuple[float, float] | None:
    """(intercept, slope) of the OLS line of y on x; None when x does not vary."""
    centred = x - x.mean()
    spread = float(centred @ centred)
    if spread == 0.0:
        return None
    slope = float(centred @ (y - y.mean())) / spread
    return float(y.mean()) - slope * float(x.mean()), slope


def residual_on(outcome: NDArray[Any], predictor: NDArray[Any]) -> NDArray[np.float64]:
    """The residual of the OLS regression of `outcome` on `predictor` with an intercept;
    a predictor that does not vary leaves each value's deviation from the mean."""
    design = np.column_stack([np.ones(len(predictor)), predictor])
    coefficients = np.linalg.lstsq(design, outcome, rcond=None)[0]
    return np.asarray(outcome - design @ coefficients, dtype=np.float64)


def fitted(x: NDArray[Any], y: NDArray[Any], x_axis: Axis, y_axis: Axis) -> list[str]:
    """The OLS line (class "fitted") over the observed x, cut where it would
    leave the y axis' range (a line may overshoot the data it was fitted to)."""
    line = ols_line(x, y)
    if line is None:
        return []
    intercept, slope = line
    low, high = float(x.min()), float(x.max())
    if slope != 0.0:
        leaves = sorted(((y_axis.low - intercept) / slope, (y_axis.high - intercept) / slope))
        low, high = max(low, leaves[0]), min(high, leaves[1])
    elif not y_axis.low <= intercept <= y_axis.high:
        return []
    if low >= high:
        return []
    x1, y1 = x_axis.at(low), y_axis.at(intercept + slope * low)
    x2, y2 = x_axis.at(high), y_axis.at(intercept + slope * high)
    return [segment(x1, y1, x2, y2, INK, ' class="fitted" stroke-width="1.5"')]
