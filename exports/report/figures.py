"""The report's figures as data: URIs. Figure 6, the item distributions and
the correlation heat map come from scoring.web.plots; Figures 1-5 (administrator
feedback) are drawn here, with matplotlib's object API (no pyplot state)."""

import io
import logging
import textwrap
from typing import Any

import numpy as np
from django.utils.translation import gettext as _
from matplotlib.figure import Figure

from scoring.web import plots
from scoring.web.numbers import percent

logger = logging.getLogger(__name__)
_BAR = "#4c86c6"


def _uri(figure: Figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    return plots.png_data_uri(buffer.getvalue())


def feedback_figure(question: dict, administrators: int) -> str:
    """Paper Figures 1-5: share of administrators choosing each answer."""
    options = question["options"]
    labels = ["\n".join(textwrap.wrap(o["label"], 22)) for o in options]
    shares = [100 * (o["share"] or 0) for o in options]
    figure = Figure(figsize=(6.4, 0.55 * len(options) + 1.1), layout="constrained")
    axes = figure.add_subplot()
    rows = np.arange(len(options))[::-1]
    axes.barh(rows, shares, color=_BAR, height=0.6)
    for row, share in zip(rows, shares, strict=True):
        axes.text(share + 1, row, percent(share / 100), va="center", fontsize=8.5)
    axes.set_yticks(rows, labels, fontsize=8.5)
    axes.set_xlim(0, 110)
    axes.set_xlabel(_("%% of administrators (n = %(n)s)") % {"n": administrators})
    axes.set_title("\n".join(textwrap.wrap(question["text"], 70)), fontsize=9.5)
    axes.spines[["top", "right"]].set_visible(False)
    return _uri(figure)


def draw(name: str, make) -> str | None:
    """One figure, or None if it cannot be drawn: a report never fails for a plot."""
    try:
        return make()
    except Exception:
        logger.exception("report figure %s could not be drawn", name)
        return None


def report_figures(data: dict, answers: np.ndarray, language: str = "en") -> dict:
    """The report's figures, labelled in `language` (data: texts already localised)."""
    analysis = data["analysis"]
    has_correlation = any(
        pair["r"] is not None for pair in analysis["dimension_correlations"].values()
    )
    feedback = data["feedback"]
    figures: dict[str, Any] = {
        "profile": None,
        "items": None,
        "heatmap": None,
        "feedback": {},
    }
    if data["n"]:
        figures["profile"] = draw(
            "profile", lambda: plots.png_data_uri(plots.dimension_profile_png(analysis, language))
        )
        figures["items"] = draw(
            "items", lambda: plots.png_data_uri(plots.item_distribution_png(answers, language))
        )
    if has_correlation:
        figures["heatmap"] = draw(
            "heatmap", lambda: plots.png_data_uri(plots.correlation_heatmap_png(analysis))
        )
    if feedback["administrators"]:
        for question in feedback["questions"]:
            figures["feedback"][question["key"]] = draw(
                question["key"], lambda q=question: feedback_figure(q, feedback["administrators"])
            )
    return figures
