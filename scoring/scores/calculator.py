"""One scored response set as the calculator shows and hands it out.

The page, the JSON API and the JSON/CSV downloads all use `result_payload`,
so they can never disagree. Pure Python: no Django, no request.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from scoring.instruments.common import LANGUAGES, translated
from scoring.instruments.shs import (
    BANDS_BY_CODE,
    CITATION,
    CONSISTENCY_LIMIT,
    CREDIT,
    DIMENSIONS,
    INSTRUMENT_VERSION,
    INTERPRETATION_NOTE,
    ITEM_KEYS,
    LICENCE_NAME,
    LICENCE_URL,
)
from scoring.scores.engine import FLAGGED_SEPARATOR, SCORE_COLUMNS, ShsScore

# The dimension chart: a bar per dimension from 0 towards -1 or +1.
CHART_WIDTH = 640
CHART_LABEL_WIDTH = 250
CHART_VALUE_MARGIN = 52  # room for a value label beyond the -1 or +1 line
CHART_ROW_HEIGHT = 36
CHART_TOP = 28
_CHART_CENTRE = CHART_LABEL_WIDTH + (CHART_WIDTH - CHART_LABEL_WIDTH) / 2
_CHART_HALF = (CHART_WIDTH - CHART_LABEL_WIDTH) / 2 - CHART_VALUE_MARGIN


def instrument_language(*candidates: str | None) -> str:
    """The first candidate that is a language of the instrument, else English."""
    for candidate in candidates:
        code = (candidate or "").lower().split("-")[0]
        if code in LANGUAGES:
            return code
    return "en"


def result_payload(score: ShsScore, language: str) -> dict[str, Any]:
    """Every figure of one evaluation, JSON-ready, labels in `language`.

    The flat keys (s_FA .. flagged_pairs) are those of the scored CSV files, so
    a result can be read by the same scripts.
    """
    figures = score.as_dict()
    band = BANDS_BY_CODE[score.band]
    return {
        "instrument_version": INSTRUMENT_VERSION,
        "language": language,
        "responses": dict(zip(ITEM_KEYS, score.answers, strict=True)),
        **figures,
        "band_label": band.label_in(language),
        "dimensions": [
            {
                "key": dimension.key,
                "label": dimension.label_in(language),
                "items": [dimension.positive_item, dimension.negative_item],
                "score": score.dimension_scores[dimension.key],
                "consistency": score.consistency[dimension.key],
                "flagged": dimension.key in score.flagged_pairs,
            }
            for dimension in DIMENSIONS
        ],
        "consistency_limit": CONSISTENCY_LIMIT,
        "interpretation": translated(INTERPRETATION_NOTE, language),
        "credit": translated(CREDIT, language),
        "licence": LICENCE_NAME,
        "licence_url": LICENCE_URL,
        "citation": CITATION,
    }


CSV_COLUMNS: tuple[str, ...] = ("instrument_version", "language", *ITEM_KEYS, *SCORE_COLUMNS)


def result_csv(payload: dict[str, Any]) -> str:
    """The result as a one-row CSV with the columns of a scored file."""
    row = {
        "instrument_version": payload["instrument_version"],
        "language": payload["language"],
        **payload["responses"],
        **{column: payload[column] for column in SCORE_COLUMNS},
    }
    row["flagged_pairs"] = FLAGGED_SEPARATOR.join(payload["flagged_pairs"])
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerow([row[column] for column in CSV_COLUMNS])
    return buffer.getvalue()


def chart_rows(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """Geometry of the dimension chart (SVG user units), one row per dimension."""
    centre, half = _CHART_CENTRE, _CHART_HALF
    rows = []
    for index, dimension in enumerate(payload["dimensions"]):
        score = dimension["score"]
        top = CHART_TOP + index * CHART_ROW_HEIGHT
        rows.append(
            {
                **dimension,
                "y": top,
                "text_y": top + CHART_ROW_HEIGHT / 2 + 5,
                "bar_x": centre + min(score, 0) * half,
                "bar_width": max(abs(score) * half, 2),  # a visible tick at 0
                "bar_y": top + 6,
                "bar_height": CHART_ROW_HEIGHT - 12,
                "value_x": centre + score * half + (8 if score >= 0 else -8),
                "value_anchor": "start" if score >= 0 else "end",
                "direction": "positive" if score > 0 else "negative" if score < 0 else "zero",
            }
        )
    return rows


def chart_frame() -> dict[str, float]:
    """Axis positions of the dimension chart."""
    centre, half = _CHART_CENTRE, _CHART_HALF
    bottom = CHART_TOP + len(DIMENSIONS) * CHART_ROW_HEIGHT
    return {
        "width": CHART_WIDTH,
        "height": bottom + 8,
        "label_x": CHART_LABEL_WIDTH - 10,
        "centre": centre,
        "minus_one": centre - half,
        "plus_one": centre + half,
        "axis_top": CHART_TOP - 4,
        "axis_bottom": bottom,
        "tick_y": CHART_TOP - 10,
    }
