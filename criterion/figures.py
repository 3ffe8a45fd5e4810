"""The criterion section's figures (docs/design/criterion.md §13.3): what
scoring/web/criterion_plots.py draws, from the per-evaluation rows the analysis
read (criterion.dataset.criterion_rows) and the figures it computed, in the
report's language.

One dict a hypothesis: `hypothesis`, `points` (the points the figure would
show: evaluations, or for H2 dimensions with a correlation), `n_evaluations`,
`svg` (None with fewer than MIN_POINTS points: the template then says why) and
the plan's figures its caption states. JSON-safe, like the rest of the section.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import fmean
from typing import Any

import numpy as np
from django.utils import translation

from scoring.instruments.shs import DIMENSION_KEYS
from scoring.stats.validity.criterion import CriterionRow
from scoring.stats.validity.hypotheses import DECEPTIVENESS
from scoring.web.criterion_plots import Estimate, h1_svg, h2_svg, h3_svg
from scoring.web.svg_chart import residual_on

# Fewer points than this make no picture worth drawing (and no line to fit).
MIN_POINTS = 3
# H3's outcome with DP as predictor: the dimensions other than Deceptiveness,
# so that DP is not regressed on itself.
OTHER_DIMENSIONS = tuple(key for key in DIMENSION_KEYS if key != DECEPTIVENESS)


def criterion_figures(rows: Sequence[CriterionRow], analysis: dict, language: str) -> dict:
    """`analysis`: what criterion_analysis(rows, plan).as_dict() returned."""
    plan = analysis["plan"]
    shown = {"confidence": 1.0 - plan["alpha"], "primary": plan["primary"]}
    with translation.override(language):
        return {
            "h1": {**h1_figure(rows, analysis), **shown},
            "h2": {**h2_figure(analysis), **shown},
            "h3": h3_figure(rows, plan.get("h3_predictor", DECEPTIVENESS)),
        }


def _present(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _figure(hypothesis: str, points: int, n_evaluations: int) -> dict[str, Any]:
    return {"hypothesis": hypothesis, "points": points, "n_evaluations": n_evaluations, "svg": None}


def h1_figure(rows: Sequence[CriterionRow], analysis: dict) -> dict[str, Any]:
    """Every evaluation with SHS and factual precision (H1's own sample), and the
    primary analysis' r against the thresholds."""
    kept = [row for row in rows if _present(row.shs) and _present(row.factual_precision)]
    plan = analysis["plan"]
    figure = _figure("h1", len(kept), len(kept))
    figure["h1_threshold"] = plan["h1_threshold"]
    figure["falsification_threshold"] = analysis["falsification"]["threshold"]
    if len(kept) >= MIN_POINTS:
        figure["svg"] = h1_svg(
            np.array([row.factual_precision for row in kept], dtype=float),
            np.array([row.shs for row in kept], dtype=float),
            Estimate.of(analysis["h1"][plan["primary"]]),
            h1_threshold=figure["h1_threshold"],
            falsification_threshold=figure["falsification_threshold"],
            confidence=1.0 - plan["alpha"],
            primary=plan["primary"],
        )
    return figure


def h2_figure(analysis: dict) -> dict[str, Any]:
    """The five correlations of the primary analysis; a point for each that exists."""
    h2 = analysis["h2"]
    plan = analysis["plan"]
    correlations = {
        key: Estimate.of(figures) for key, figures in h2[plan["primary"]]["correlations"].items()
    }
    points = sum(estimate.r is not None for estimate in correlations.values())
    figure = _figure("h2", points, h2["n"])
    if points >= MIN_POINTS:
        figure["svg"] = h2_svg(
            correlations, n=h2["n"], confidence=1.0 - plan["alpha"], primary=plan["primary"]
        )
    return figure


def h3_figure(rows: Sequence[CriterionRow], predictor: str) -> dict[str, Any]:
    """H3's complete cases, as the analysis takes them. With DP: every evaluation
    with factual precision and all five dimension scores, the residual of the
    mean of the other four on factual precision against DP. With the presentation
    measure: SHS, factual precision and that measure, the residual of SHS."""
    if predictor == DECEPTIVENESS:
        kept = [row for row in rows if _present(row.factual_precision) and _all_dimensions(row)]
        outcome = [fmean(row.dimensions[key] for key in OTHER_DIMENSIONS) for row in kept]
        values: list[float | None] = [row.dimensions[DECEPTIVENESS] for row in kept]
    else:
        kept = [
            row
            for row in rows
            if _present(row.shs) and _present(row.factual_precision) and _present(row.presentation)
        ]
        outcome = [row.shs for row in kept]
        values = [row.presentation for row in kept]
    figure = _figure("h3", len(kept), len(kept))
    figure["predictor"] = predictor
    if len(kept) >= MIN_POINTS:
        precision = np.array([row.factual_precision for row in kept], dtype=float)
        residual = residual_on(np.array(outcome, dtype=float), precision)
        figure["svg"] = h3_svg(np.array(values, dtype=float), residual, predictor=predictor)
    return figure


def _all_dimensions(row: CriterionRow) -> bool:
    return all(_present(row.dimensions.get(key)) for key in DIMENSION_KEYS)
