"""What a companion scale is (docs/design/validation.md §14.1): published wording per
language, coded options, keying, scoring, credit and licence. The scales
themselves are data in `sus`, `scs` and `trust`; nothing here imports Django."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.instruments.common import Labelled, Option, Text, Worded, translated


@dataclass(frozen=True)
class ScaleItem(Worded):
    key: str  # "sus1": the stored answer's key and the export column's stem
    number: int
    text: Text
    reversed: bool = False  # scored in the opposite direction to the scale's score


@dataclass(frozen=True)
class CompanionScale(Labelled):
    key: str  # "sus", "scs", "trust"
    version: str
    label: Text  # the scale's name
    items: tuple[ScaleItem, ...]
    options: tuple[Option, ...]  # codes in ascending order
    instructions: Text
    # Languages whose published wording is shipped; a study may offer a
    # language only if every scale it uses has it (the readiness check).
    languages: tuple[str, ...]
    credit: Text
    licence_name: str
    licence_url: str
    citation: str
    # Where each shipped translation was published, by language.
    translation_sources: dict[str, str] = field(default_factory=dict)
    score_range: tuple[float, float] = (0.0, 100.0)
    # The published rule in words (English), for the codebook beside the keying.
    scoring_rule: str = "the published rule (see its citation)"

    @property
    def item_keys(self) -> tuple[str, ...]:
        return tuple(item.key for item in self.items)

    @property
    def codes(self) -> tuple[int, ...]:
        return tuple(option.code for option in self.options)

    def choices(self, language: str) -> list[tuple[int, str]]:
        return [(option.code, option.label_in(language)) for option in self.options]

    def attribution(self, language: str) -> dict[str, str]:
        return {
            "credit": translated(self.credit, language),
            "licence_name": self.licence_name,
            "licence_url": self.licence_url,
            "citation": self.citation,
        }

    def keyed(self, items: NDArray[Any]) -> NDArray[np.float64]:
        """(n, k) codes -> the same with reversed items turned around (low + high - code),
        so that every column points the way the score does (for alpha)."""
        low, high = self.codes[0], self.codes[-1]
        reversed_columns = np.array([item.reversed for item in self.items])
        keyed = np.asarray(items, dtype=float).copy()
        keyed[:, reversed_columns] = low + high - keyed[:, reversed_columns]
        return keyed

    def score_array(self, items: NDArray[Any]) -> NDArray[np.float64]:
        """(n, k) codes -> (n,) scores; NaN for a row with any answer missing."""
        raise NotImplementedError  # each scale's own rule, in its module

    def score(self, answers: Mapping[str, int]) -> float:
        """The score of one complete set of answers, keyed by item key.

        Raises ValueError naming the first missing or out-of-range item.
        """
        row = []
        for key in self.item_keys:
            value = answers.get(key)
            if isinstance(value, bool) or not isinstance(value, int) or value not in self.codes:
                raise ValueError(
                    f"{self.key}: {key} must be one of {list(self.codes)}, got {value!r}"
                )
            row.append(value)
        return float(self.score_array(np.array([row], dtype=float))[0])
