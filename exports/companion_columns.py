"""The companion scales in the Evaluations table (docs/design/exports.md §7.3,
docs/design/validation.md §14.1): for each scale the study chose, its item columns and its
score, empty where the participant did not submit it, and what About says of each chosen
scale (wording, keying, scoring, credit, licence). A scale the study did not choose has
no columns: a SUS-only study carries no empty columns of the other scales.

Written from the scales' own data (scoring.instruments.companions), so a new
scale is a new set of columns without a line here. Labels are English, as
every label of an export.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from exports.column_types import INTEGER, NUMBER, Column
from scoring.instruments.companions import COMPANION_SCALES, CompanionScale, chosen_scales

if TYPE_CHECKING:  # the columns are defined before the apps' models are loaded
    from surveys.models import Study


def score_column(scale: CompanionScale) -> str:
    return f"{scale.key}_score"


def _keying(scale: CompanionScale) -> str:
    reversed_items = [str(item.number) for item in scale.items if item.reversed]
    if not reversed_items:
        return "every item keyed in the direction of the score"
    low, high = scale.codes[0], scale.codes[-1]
    return f"items {', '.join(reversed_items)} reversed ({low + high} − code) for the score"


def scoring_text(scale: CompanionScale) -> str:
    low, high = scale.score_range
    return f"{scale.scoring_rule}; {_keying(scale)}; {low:g}..{high:g}"


def _columns(scale: CompanionScale) -> tuple[Column, ...]:
    name = scale.label["en"]
    items = tuple(
        Column(
            item.key,
            f"{name}, item {item.number}"
            f"{' (reversed)' if item.reversed else ''}: {item.text['en']}",
            INTEGER,
            tuple(scale.choices("en")),
            ordinal=True,
        )
        for item in scale.items
    )
    score = Column(
        score_column(scale),
        f"{name} score: {scoring_text(scale)}; empty unless the participant submitted the "
        "scale after this evaluation's SHS",
        NUMBER,
    )
    return (*items, score)


# Every registered scale's columns: the Evaluations sheet's full definition,
# which an export narrows to the study's choice (`study_columns`).
COMPANION_COLUMNS = tuple(
    column for scale in COMPANION_SCALES.values() for column in _columns(scale)
)


def study_columns(columns: tuple[Column, ...], study: Study) -> tuple[Column, ...]:
    """`columns` without those of the companion scales the study did not choose."""
    chosen = {scale.key for scale in chosen_scales(study.companion_scales)}
    unchosen = {
        column.key
        for scale in COMPANION_SCALES.values()
        if scale.key not in chosen
        for column in _columns(scale)
    }
    return tuple(column for column in columns if column.key not in unchosen)


def companion_values(scales: Sequence[CompanionScale], values: Sequence) -> dict[str, object]:
    """The companion columns of one row from its annotations' values: answers and
    score of each of `scales` (the study's choice), in that order."""
    record: dict[str, object] = {}
    for scale, answers, score in zip(scales, values[::2], values[1::2], strict=True):
        answers = answers if isinstance(answers, dict) else {}
        for key in scale.item_keys:
            code = answers.get(key)
            # Whole numbers only: stored answers were checked against the scale's codes.
            record[key] = code if isinstance(code, int) and not isinstance(code, bool) else None
        record[score_column(scale)] = score
    return record


def companion_about(study: Study) -> list[tuple[str, str]]:
    """About's fields on the companion scales: the study's choice, then each chosen scale."""
    chosen = chosen_scales(study.companion_scales)
    fields = [
        (
            "Companion scales",
            (
                ", ".join(scale.label["en"] for scale in chosen)
                + " given after the SHS of each block, in this order; the SHS always first. "
                "Only the chosen scales have columns"
            )
            if chosen
            else "none given in this study (no companion scale columns)",
        )
    ]
    for scale in chosen:
        name = scale.label["en"]
        columns = f"{scale.item_keys[0]}..{scale.item_keys[-1]}, {score_column(scale)}"
        sources = "; ".join(f"{code}: {src}" for code, src in scale.translation_sources.items())
        fields += [
            (
                name,
                f"columns {columns}; version {scale.version}; answers "
                + "; ".join(f"{code} = {label}" for code, label in scale.choices("en"))
                + f"; languages {', '.join(scale.languages)}"
                + (f" (translations: {sources})" if sources else ""),
            ),
            (f"{name}: scoring", scoring_text(scale)),
            (f"{name}: credit", scale.attribution("en")["credit"]),
            (f"{name}: licence", f"{scale.licence_name}, {scale.licence_url}"),
            (f"{name}: cite as", scale.citation),
        ]
    return fields
