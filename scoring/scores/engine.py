"""SHS scoring (docs/design/instrument.md §2.3, paper section 5): pure Python and numpy, no Django.

For dimension i with positive item a and negative item b (answers -2..+2):
    s_i = (a - b) / 4          directional score in [-1, +1], higher = more reliable
    c_i = (a + b) / 4          consistency; flagged when |c_i| > 0.25
    SHS = mean(s_1..s_5), SHS100 = 50 * (SHS + 1)

Everything is computed from integer sums so that band edges (0.5, 0, -0.5)
are decided exactly, never by a floating-point rounding accident:
SHS = sum(a - b) / 20, and |c_i| > 0.25 exactly when |a + b| > 1.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.instruments.shs import (
    BANDS,
    DIMENSION_KEYS,
    DIMENSIONS,
    INSTRUMENT_VERSION,
    ITEM_KEYS,
    MAX_ANSWER,
    MIN_ANSWER,
)

SCORE_COLUMNS: tuple[str, ...] = (
    *(f"s_{key}" for key in DIMENSION_KEYS),
    *(f"c_{key}" for key in DIMENSION_KEYS),
    "shs",
    "shs100",
    "band",
    "flagged_pairs",
)
FLAGGED_SEPARATOR = ";"

# Column of each dimension's positive (a) and negative (b) item in item order q1..q10.
POSITIVE_COLUMNS: tuple[int, ...] = tuple(ITEM_KEYS.index(d.positive_item) for d in DIMENSIONS)
NEGATIVE_COLUMNS: tuple[int, ...] = tuple(ITEM_KEYS.index(d.negative_item) for d in DIMENSIONS)
# Band edges on the integer total sum(a - b) in [-40, 40]: SHS >= edge <=> total >= 20 * edge.
_BAND_TOTAL_EDGES = [int(round(band.lower * 20)) for band in BANDS]
BAND_CODES: tuple[str, ...] = tuple(band.code for band in BANDS)
# ASCII digits only ("٣" is not an answer); "1.0" is accepted because spreadsheet
# programs write whole numbers that way, as they store them as floats.
_INTEGER = re.compile(r"^[+-]?(\d+)(?:\.0+)?$", re.ASCII)
# Longer digit strings are out of range anyway; not converting them keeps a
# hostile 5,000-digit cell from reaching int() (which refuses such strings).
_MAX_DIGITS = 3
_SHOWN_LENGTH = 40


def shortened(text: str) -> str:
    """`text` cut short, so that one huge value cannot flood a message that quotes it."""
    return text if len(text) <= _SHOWN_LENGTH else text[: _SHOWN_LENGTH - 1] + "…"


def _shown(value: object) -> str:
    return shortened(repr(value))


@dataclass(frozen=True)
class Problem:
    """One reason a response set cannot be scored."""

    field: str
    value: object
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"

    def as_dict(self) -> dict[str, object]:
        return {"field": self.field, "value": self.value, "message": self.message}


class InvalidResponses(ValueError):
    """Raised with every problem of a response set at once."""

    def __init__(self, problems: Sequence[Problem]):
        self.problems = list(problems)
        super().__init__("; ".join(str(problem) for problem in self.problems))


_SCALE_TEXT = f"{MIN_ANSWER}..+{MAX_ANSWER}"
_RANGE = f"answers are {_SCALE_TEXT}"


def parse_answer(value: object) -> tuple[int | None, str | None]:
    """Read one answer; return (answer, None) or (None, why it is not valid)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, "answer is missing"
    not_integer = f"{_shown(value)} is not an integer answer"
    if isinstance(value, (bool, np.bool_)):
        return None, not_integer
    if isinstance(value, (int, np.integer)):
        number = int(value)
    elif isinstance(value, (float, np.floating)):
        # Spreadsheet cells hold numbers as floats: 1.0 is the answer 1.
        if not np.isfinite(value) or float(value) != int(value):
            return None, not_integer
        number = int(value)
    elif isinstance(value, str):
        text = value.strip()
        match = _INTEGER.match(text)
        if not match:
            return None, not_integer
        if len(match.group(1).lstrip("0")) > _MAX_DIGITS:
            return None, f"{_shown(text)} is out of range ({_RANGE})"
        number = int(text.split(".")[0])
    else:
        return None, not_integer
    if not MIN_ANSWER <= number <= MAX_ANSWER:
        return None, f"{number} is out of range ({_RANGE})"
    return number, None


def validate(responses: Mapping[str, object]) -> tuple[tuple[int, ...] | None, list[Problem]]:
    """Check a mapping q1..q10 -> answer; return the answers in item order and all problems."""
    problems: list[Problem] = []
    answers: list[int] = []
    for key in ITEM_KEYS:
        if key not in responses:
            problems.append(Problem(key, None, "answer is missing"))
            continue
        answer, why = parse_answer(responses[key])
        if why:
            problems.append(Problem(key, responses[key], why))
        else:
            # parse_answer gives an answer exactly when it gives no reason.
            assert answer is not None
            answers.append(answer)
    # Keys may be of any type (JSON only gives strings, Python callers may not).
    unknown = sorted(set(responses) - set(ITEM_KEYS), key=repr)
    for key in unknown:
        problems.append(
            Problem(str(key), responses[key], "is not an item of " + INSTRUMENT_VERSION)
        )
    if problems:
        return None, problems
    return tuple(answers), []


@dataclass(frozen=True)
class ShsScore:
    answers: tuple[int, ...]
    dimension_scores: dict[str, float]
    consistency: dict[str, float]
    shs: float
    shs100: float
    band: str
    flagged_pairs: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        """Flat figures in the column order of SCORE_COLUMNS (flags as a list)."""
        figures: dict[str, object] = {}
        figures.update({f"s_{key}": value for key, value in self.dimension_scores.items()})
        figures.update({f"c_{key}": value for key, value in self.consistency.items()})
        figures.update(
            shs=self.shs, shs100=self.shs100, band=self.band, flagged_pairs=list(self.flagged_pairs)
        )
        return figures

    def stored_values(self) -> dict[str, object]:
        """The figures as a study stores and exports them, by SCORE_COLUMNS: as
        as_dict(), but the flagged pairs as one text ('SR;DP', '' when none),
        as they are kept in one database column and one cell."""
        return {**self.as_dict(), "flagged_pairs": FLAGGED_SEPARATOR.join(self.flagged_pairs)}


def band_for_total(total: int) -> str:
    for code, edge in zip(BAND_CODES, _BAND_TOTAL_EDGES, strict=True):
        if total >= edge:
            return code
    return BAND_CODES[-1]


# The band of every possible total sum(a - b), so that an array is banded by one lookup.
_MAX_TOTAL = 4 * len(DIMENSIONS)
_BAND_INDEX_BY_TOTAL = np.array(
    [BAND_CODES.index(band_for_total(total)) for total in range(-_MAX_TOTAL, _MAX_TOTAL + 1)],
    dtype=np.int8,
)


def band_for_shs(shs: float) -> str:
    """Band of an SHS value given as a number (exact for values on the 1/20 grid)."""
    return band_for_total(int(round(shs * 20)))


def score_answers(answers: Sequence[int]) -> ShsScore:
    """Score ten already-valid answers in item order q1..q10."""
    dimension_scores, consistency, flagged = {}, {}, []
    total = 0
    for dimension, positive, negative in zip(
        DIMENSIONS, POSITIVE_COLUMNS, NEGATIVE_COLUMNS, strict=True
    ):
        a, b = answers[positive], answers[negative]
        total += a - b
        dimension_scores[dimension.key] = (a - b) / 4
        consistency[dimension.key] = (a + b) / 4
        if abs(a + b) > 1:
            flagged.append(dimension.key)
    return ShsScore(
        answers=tuple(answers),
        dimension_scores=dimension_scores,
        consistency=consistency,
        shs=total / 20,
        shs100=2.5 * (total + 20),
        band=band_for_total(total),
        flagged_pairs=tuple(flagged),
    )


def score_one(responses: Mapping[str, object]) -> ShsScore:
    """Validate and score one response set; raises InvalidResponses listing every problem."""
    answers, problems = validate(responses)
    # validate gives the answers exactly when it finds no problem.
    if answers is None:
        raise InvalidResponses(problems)
    return score_answers(answers)


@dataclass(frozen=True)
class ScoredArray:
    """Scores of n evaluations, column-wise."""

    dimension_scores: NDArray[np.float64]  # (n, 5), FA..RG
    consistency: NDArray[np.float64]  # (n, 5)
    shs: NDArray[np.float64]  # (n,)
    shs100: NDArray[np.float64]  # (n,)
    band_index: NDArray[np.int8]  # (n,) index into BAND_CODES
    flag_mask: NDArray[np.uint8]  # (n,) bit i set when dimension i is flagged

    def __len__(self) -> int:
        return len(self.shs)

    @property
    def bands(self) -> NDArray[np.object_]:
        bands: NDArray[np.object_] = np.asarray(BAND_CODES, dtype=object)[self.band_index]
        return bands

    @property
    def flagged_pairs(self) -> NDArray[np.object_]:
        """Flagged dimensions per row as 'SR;DP' strings ('' when none)."""
        flagged: NDArray[np.object_] = _FLAG_STRINGS[self.flag_mask]
        return flagged


_FLAG_STRINGS = np.array(
    [
        FLAGGED_SEPARATOR.join(key for bit, key in enumerate(DIMENSION_KEYS) if mask >> bit & 1)
        for mask in range(2 ** len(DIMENSION_KEYS))
    ],
    dtype=object,
)


def checked_answers(answers: NDArray[Any]) -> NDArray[Any]:
    """`answers` as an (n, 10) array of valid answers in item order, or ValueError.

    The array functions trust their input (validating is parse_answer's job);
    this only refuses what would otherwise give wrong numbers silently.
    """
    answers = np.asarray(answers)
    if answers.ndim != 2 or answers.shape[1] != len(ITEM_KEYS):
        raise ValueError(f"expected an (n, {len(ITEM_KEYS)}) array, got shape {answers.shape}")
    if answers.dtype == bool or not np.issubdtype(answers.dtype, np.number):
        raise ValueError(f"answers must be integers, got dtype {answers.dtype}")
    if not np.issubdtype(answers.dtype, np.integer) and not np.array_equal(
        answers, np.rint(answers)
    ):
        # NaN fails this test too; casting it to int would give an arbitrary answer.
        raise ValueError("answers must be whole numbers; validate them first")
    if answers.size and (answers.min() < MIN_ANSWER or answers.max() > MAX_ANSWER):
        raise ValueError(f"answers outside {_SCALE_TEXT}; validate them first")
    return answers


def score_array(answers: NDArray[Any]) -> ScoredArray:
    """Score an (n, 10) integer array of valid answers in item order, vectorised."""
    answers = checked_answers(answers)
    a = answers[:, POSITIVE_COLUMNS].astype(np.int16)
    b = answers[:, NEGATIVE_COLUMNS].astype(np.int16)
    difference, agreement = a - b, a + b
    total = difference.sum(axis=1)
    band_index = _BAND_INDEX_BY_TOTAL[total + _MAX_TOTAL]
    # Bit i of the mask is dimension i: pack the five flags of a row into one byte.
    flag_mask = np.packbits(np.abs(agreement) > 1, axis=1, bitorder="little")[:, 0]
    return ScoredArray(
        dimension_scores=difference / 4.0,
        consistency=agreement / 4.0,
        shs=total / 20.0,
        shs100=2.5 * (total + 20.0),
        band_index=band_index,
        flag_mask=flag_mask,
    )
