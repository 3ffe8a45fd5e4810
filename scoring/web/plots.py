"""Plots of an SHS analysis, drawn server-side with matplotlib as PNG bytes.

Every `*_png` function takes the result of `scoring.stats.reliability.analysis.analyze` (or raw
answers) and returns PNG bytes; `png_data_uri` turns them into a `data:` URI so
that a report is one self-contained file (the site's Content-Security-Policy allows
`img-src data:`).

Figures are built on `matplotlib.figure.Figure` directly, never through
pyplot: no global state, no GUI backend, safe in web and worker processes.
Numbers on a figure are written as in the tables (scoring.web.numbers, in the
active language).
"""

from __future__ import annotations

import base64
import io
import textwrap
from typing import Any

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure
from numpy.typing import NDArray

from scoring.instruments.common import Option
from scoring.instruments.shs import DIMENSION_KEYS, DIMENSIONS, ITEMS, SCALE
from scoring.stats.reliability.analysis import DIMENSION_PAIRS, item_answer_counts
from scoring.web.numbers import signed

# Colours that stay distinguishable for the common colour-vision deficiencies.
_BAR = "#4c86c6"
_BAR_LOW = "#1f4e79"  # dimensions below the overall mean, as paper Figure 6
_MEAN_LINE = "#b42318"
# Diverging palette for strongly disagree .. strongly agree.
_ANSWER_COLOURS = ("#b2182b", "#ef8a62", "#d9d9d9", "#67a9cf", "#2166ac")
_DPI = 110


def png_data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    # No timestamp or software tag: the same analysis gives the same bytes.
    figure.savefig(buffer, format="png", dpi=_DPI, bbox_inches="tight", metadata={"Software": None})
    return buffer.getvalue()


def _wrapped(text: str, width: int = 16) -> str:
    return "\n".join(textwrap.wrap(text, width, break_long_words=False)) or text


def _answer_label(option: Option) -> str:
    return f"{option.code:+d}" if option.code else "0"


def dimension_profile_png(result: dict[str, Any], language: str = "en") -> bytes:
    """Paper Figure 6: mean dimension scores with ±1 SD whiskers, dashed overall mean."""
    profile = result["dimension_profile"]
    overall = result["overall"]["mean"]
    labels = [_wrapped(d.label_in(language)) for d in DIMENSIONS]
    means = [profile[d.key]["mean"] for d in DIMENSIONS]
    sds = [profile[d.key]["sd"] for d in DIMENSIONS]
    figure = Figure(figsize=(7.2, 4.2), layout="constrained")
    axes = figure.add_subplot()
    positions = np.arange(len(DIMENSIONS))
    heights = [0.0 if mean is None else mean for mean in means]
    colours = [
        _BAR_LOW if (mean is not None and overall is not None and mean < overall) else _BAR
        for mean in means
    ]
    axes.bar(positions, heights, color=colours, width=0.6, zorder=2)
    whiskers = [0.0 if sd is None else sd for sd in sds]
    axes.errorbar(
        positions, heights, yerr=whiskers, fmt="none", ecolor="#1b1f24", capsize=5, zorder=3
    )
    for position, mean in enumerate(means):
        if mean is None:
            axes.text(position, 0.05, "n/a", ha="center", va="bottom", color="#57606a")
    if overall is not None:
        axes.axhline(
            overall,
            color=_MEAN_LINE,
            linestyle="--",
            linewidth=1.4,
            zorder=4,
            label=f"SHS {signed(overall)}",
        )
        axes.legend(loc="upper right", fontsize=8.5, frameon=False)
    axes.axhline(0, color="#57606a", linewidth=0.8, zorder=1)
    axes.set_xticks(positions, labels, fontsize=8.5)
    axes.set_ylim(-1, 1)
    axes.set_ylabel("s\u1d62 (mean ± 1 SD)")
    axes.grid(axis="y", color="#e5e7eb", zorder=0)
    axes.spines[["top", "right"]].set_visible(False)
    return _png(figure)


def item_distribution_png(answers: NDArray[Any], language: str = "en") -> bytes:
    """Stacked shares of the five answers for every item (raw answers, not reversed)."""
    counts = item_answer_counts(answers).astype(float)
    totals = counts.sum(axis=1, keepdims=True)
    shares = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0) * 100
    figure = Figure(figsize=(7.2, 4.6), layout="constrained")
    axes = figure.add_subplot()
    rows = np.arange(len(ITEMS))[::-1]  # q1 on top
    left = np.zeros(len(ITEMS))
    for column, option in enumerate(SCALE):
        axes.barh(
            rows,
            shares[:, column],
            left=left,
            color=_ANSWER_COLOURS[column],
            label=f"{_answer_label(option)} {option.label_in(language)}",
            height=0.7,
        )
        for row, share, start in zip(rows, shares[:, column], left, strict=True):
            if share >= 7:
                axes.text(
                    start + share / 2,
                    row,
                    f"{share:.0f}",
                    ha="center",
                    va="center",
                    fontsize=7.5,
                    color="#ffffff" if column in (0, 4) else "#1b1f24",
                )
        left += shares[:, column]
    names = [
        f"Q{item.number} ({item.dimension} {'+' if item.polarity > 0 else '−'})" for item in ITEMS
    ]
    axes.set_yticks(rows, names, fontsize=8.5)
    axes.set_xlim(0, 100)
    axes.set_xlabel("%")
    axes.legend(
        loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3, fontsize=7.5, frameon=False
    )
    axes.spines[["top", "right"]].set_visible(False)
    return _png(figure)


def correlation_matrix(result: dict[str, Any]) -> NDArray[np.float64]:
    """The 5 x 5 matrix of dimension correlations (NaN where a correlation is null)."""
    matrix = np.eye(len(DIMENSION_KEYS))
    for first, second in DIMENSION_PAIRS:
        r = result["dimension_correlations"][f"{first}-{second}"]["r"]
        i, j = DIMENSION_KEYS.index(first), DIMENSION_KEYS.index(second)
        matrix[i, j] = matrix[j, i] = np.nan if r is None else r
    return matrix


def correlation_heatmap_png(result: dict[str, Any]) -> bytes:
    """Heat map of the inter-dimension Pearson correlations (paper Table 6)."""
    matrix = correlation_matrix(result)
    figure = Figure(figsize=(5.0, 4.2), layout="constrained")
    axes = figure.add_subplot()
    colours = colormaps["RdBu_r"].with_extremes(bad="#d9d9d9")  # grey: no correlation
    image = axes.imshow(np.ma.masked_invalid(matrix), cmap=colours, vmin=-1, vmax=1)
    for (i, j), value in np.ndenumerate(matrix):
        text = "n/a" if np.isnan(value) else signed(value)
        dark = not np.isnan(value) and abs(value) > 0.6
        axes.text(
            j, i, text, ha="center", va="center", fontsize=9, color="#ffffff" if dark else "#1b1f24"
        )
    # Keys only: full names would not fit; the report's table names each dimension.
    ticks = range(len(DIMENSION_KEYS))
    axes.set_xticks(ticks, DIMENSION_KEYS)
    axes.set_yticks(ticks, DIMENSION_KEYS)
    figure.colorbar(image, ax=axes, fraction=0.046, pad=0.04, label="Pearson r")
    return _png(figure)
