"""An answer file as the validation analyses read it (docs/design/command-line.md §9.3,
docs/design/validation-analysis.md §14.8).

`shs_analyze --cfa/--invariance/--convergent/--retest/--nested` read, beside
q1..q10, the columns the platform's export writes: `participant_id` (or
`participant`), `system`, `language`, a demographic column named by
`--group`, the companion scales' item columns (`sus1`..`sus10`, ... as the
registry in `scoring.instruments.companions` names them) and, in a second
file, the retest wave (`participant_id`, `block` or `system`, q1..q10, an
optional `days`).

Which parts a file supports is decided by its header; a part asked for whose
columns are missing stops the command (ValidationFileError). Bad cells are
RowProblems in the answers' style, every one of them, so that the command
refuses the file or, with --skip-invalid, leaves the rows out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import SupportsIndex

import numpy as np
from numpy.typing import NDArray

from scoring.answers.files import AnswerTable, ParsedAnswers, RowProblem
from scoring.instruments.companions import COMPANION_SCALES, CompanionScale
from scoring.stats.validation_data import RetestPairs, ValidationData

PARTS = ("cfa", "invariance", "convergent", "retest", "nested")
PARTICIPANT_COLUMNS = ("participant_id", "participant")
# The export's Retests table names the days retest_days.
DAYS_COLUMNS = ("days", "retest_days")
# An export workbook given as the retest file is read from its Retests sheet.
RETEST_SHEET = "Retests"
_WHOLE_NUMBER = re.compile(r"^([+-]?\d{1,5})(?:\.0*)?$")


class ValidationFileError(Exception):
    """The file lacks what a requested part needs, or cannot be joined; says what to do."""


@dataclass(frozen=True)
class FileColumns:
    """Where the validation columns are in one file's header (None: not there)."""

    participant: int | None
    system: int | None
    language: int | None
    block: int | None
    days: int | None
    group: int | None
    scales: dict[str, tuple[int, ...]] = field(default_factory=dict)


def file_columns(table: AnswerTable, *, group_column: str | None = None) -> FileColumns:
    """The validation columns of `table`, matched like q1..q10 (any letter case).

    A companion scale counts only with all its item columns; with some of them
    the file is refused, naming the ones missing.
    """
    position = _positions(table)
    scales = {}
    for key, scale in COMPANION_SCALES.items():
        found = [name for name in scale.item_keys if name in position]
        if found and len(found) < len(scale.item_keys):
            missing = [name for name in scale.item_keys if name not in position]
            raise ValidationFileError(
                f"the file has {', '.join(found)} of the {key} items but not "
                f"{', '.join(missing)}: a scale is read only with all its items"
            )
        if found:
            scales[key] = tuple(position[name] for name in scale.item_keys)
    if group_column is not None and group_column.lower() not in position:
        raise ValidationFileError(f"--group names the column {group_column}, which the file lacks")
    participant = next((position[n] for n in PARTICIPANT_COLUMNS if n in position), None)
    return FileColumns(
        participant=participant,
        system=position.get("system"),
        language=position.get("language"),
        block=position.get("block"),
        days=next((position[n] for n in DAYS_COLUMNS if n in position), None),
        group=None if group_column is None else position[group_column.lower()],
        scales=scales,
    )


def _positions(table: AnswerTable) -> dict[str, int]:
    """Lower-cased column name -> position; a name read for the validation that
    appears twice is refused (other columns pass through, as for the answers)."""
    position: dict[str, int] = {}
    for index, name in enumerate(table.columns):
        key = name.lower()
        if key in position and key in _read_names():
            raise ValidationFileError(f"column {key} appears more than once")
        position.setdefault(key, index)
    return position


def _read_names() -> set[str]:
    items = {name for scale in COMPANION_SCALES.values() for name in scale.item_keys}
    return items | {*PARTICIPANT_COLUMNS, *DAYS_COLUMNS, "system", "language", "block"}


def supported_parts(table: AnswerTable, columns: FileColumns, *, retest: bool) -> tuple[str, ...]:
    """The parts `--validation` runs on this file: those whose columns it has."""
    parts = ["cfa"]
    if columns.group is not None or _languages(table, columns) >= 2:
        parts.append("invariance")
    if columns.scales:
        parts.append("convergent")
    if retest and columns.participant is not None:
        parts.append("retest")
    if columns.participant is not None:
        parts.append("nested")
    return tuple(parts)


def check_parts(table: AnswerTable, columns: FileColumns, parts: Iterable[str]) -> None:
    """Raise ValidationFileError for the first part asked for whose columns are missing."""
    companions = ", ".join(
        f"{scale.item_keys[0]}..{scale.item_keys[-1]}" for scale in COMPANION_SCALES.values()
    )
    if "convergent" in parts and not columns.scales:
        raise ValidationFileError(
            f"--convergent needs a companion scale's item columns ({companions}); the file has none"
        )
    if ("nested" in parts or "retest" in parts) and columns.participant is None:
        part = "--nested" if "nested" in parts else "--retest"
        raise ValidationFileError(f"{part} needs a participant_id column; the file has none")
    if "retest" in parts and columns.block is None and columns.system is None:
        raise ValidationFileError("--retest needs a block or system column in the answer file")
    if "invariance" in parts and columns.group is None and _languages(table, columns) < 2:
        raise ValidationFileError(
            "--invariance compares groups: it needs a language column with at least two "
            "languages, or --group COLUMN"
        )


def _languages(table: AnswerTable, columns: FileColumns) -> int:
    """The number of languages in the file, over every row: whether a part runs
    must not depend on which rows --skip-invalid leaves out."""
    if columns.language is None:
        return 0
    return len({record[columns.language].strip() for record in table.rows} - {""})


def _cell(table: AnswerTable, row: SupportsIndex, column: int) -> str:
    return table.rows[row][column].strip()


def cell_problems(
    table: AnswerTable, columns: FileColumns, parts: Iterable[str]
) -> list[RowProblem]:
    """Every bad validation cell of the table: companion codes, and empty labels a part reads."""
    problems = []
    for key, positions in columns.scales.items():
        problems += _scale_problems(table, COMPANION_SCALES[key], positions)
    parts = set(parts)
    needed = [columns.participant] if {"nested", "retest"} & parts else []
    # An empty group label is no group: the invariance leaves it out and counts it.
    if "invariance" in parts and _languages(table, columns) >= 2:
        needed.append(columns.language)
    return problems + label_problems(table, needed)


def label_problems(table: AnswerTable, positions: Iterable[int | None]) -> list[RowProblem]:
    """Empty cells (or cells with a NUL) of label columns an analysis groups by."""
    problems = []
    for column in (position for position in positions if position is not None):
        for row, record in enumerate(table.rows):
            if not record[column].strip() or "\x00" in record[column]:
                reason = f"{table.columns[column]} is needed to group the evaluations"
                problems.append(_problem(table, row, column, reason))
    return problems


def _problem(table: AnswerTable, row: int, column: int, reason: str) -> RowProblem:
    return RowProblem(
        table.row_numbers[row], table.columns[column], table.rows[row][column], reason
    )


def _scale_problems(
    table: AnswerTable, scale: CompanionScale, positions: tuple[int, ...]
) -> list[RowProblem]:
    problems = []
    codes = ", ".join(map(str, scale.codes))
    for row, record in enumerate(table.rows):
        cells = [record[position].strip() for position in positions]
        if not any(cells):
            continue  # the scale was not given with this evaluation
        for position, text in zip(positions, cells, strict=True):
            if not text:
                reason = f"answer is missing (the row answers other {scale.key} items)"
            elif _code(text) not in scale.codes:
                reason = f"{scale.key} answers are {codes}"
            else:
                continue
            problems.append(_problem(table, row, position, reason))
    return problems


def _code(text: str) -> int | None:
    match = _WHOLE_NUMBER.match(text)
    return int(match.group(1)) if match else None


def validation_data_from_table(
    table: AnswerTable,
    parsed: ParsedAnswers,
    *,
    group_column: str | None,
    retest: RetestPairs | None = None,
) -> ValidationData:
    """The valid rows of a checked table (parsed.valid) as ValidationData.

    Without a participant column each row is its own participant, the
    independence the plain analysis assumes; missing system or language
    columns give empty labels.
    """
    columns = file_columns(table, group_column=group_column)
    rows = np.flatnonzero(parsed.valid)
    participant = _labels(table, rows, columns.participant)
    if columns.participant is None:
        participant = np.array([f"row {table.row_numbers[row]}" for row in rows])
    items = {key: _items(table, rows, positions) for key, positions in columns.scales.items()}
    return ValidationData(
        answers=parsed.answers,
        participant=participant,
        system=_labels(table, rows, columns.system),
        language=_labels(table, rows, columns.language),
        group_name=group_column or "",
        group=None if columns.group is None else _labels(table, rows, columns.group),
        companion_items=items,
        # A row without the scale holds NaN codes, so its score is NaN too.
        companion_scores={
            key: COMPANION_SCALES[key].score_array(value) for key, value in items.items()
        },
        retest=retest,
    )


def _labels(table: AnswerTable, rows: NDArray[np.intp], column: int | None) -> NDArray[np.object_]:
    if column is None:
        return np.full(len(rows), "", dtype=object)
    return np.array([_cell(table, row, column) for row in rows], dtype=object)


def _items(
    table: AnswerTable, rows: NDArray[np.intp], positions: tuple[int, ...]
) -> NDArray[np.float64]:
    """(n, k) codes as float, NaN where the row leaves the scale out (checked before)."""
    values = np.full((len(rows), len(positions)), np.nan)
    for out, row in enumerate(rows):
        cells = [_cell(table, row, position) for position in positions]
        if any(cells):
            values[out] = [_code(text) for text in cells]
    return values


@dataclass(frozen=True)
class RetestJoin:
    """The retest file joined to the answer file; what could not be joined, counted."""

    pairs: RetestPairs
    key: str  # "block" or "system"
    unmatched: list[int]  # data row numbers of the retest file without a first evaluation


def retest_pairs(
    table: AnswerTable,
    parsed: ParsedAnswers,
    retest_table: AnswerTable,
    retest_parsed: ParsedAnswers,
) -> RetestJoin:
    """Pair each valid retest row with the valid answer row of the same participant and
    block (or system, when the retest file has no block column)."""
    first_columns = file_columns(table)
    columns = file_columns(retest_table)
    if columns.participant is None:
        raise ValidationFileError("the retest file needs a participant_id column")
    if first_columns.participant is None:
        raise ValidationFileError(
            "the retest file is joined on participant_id: the answer file has no such column"
        )
    key = "block" if columns.block is not None else "system"
    if getattr(columns, key) is None:
        raise ValidationFileError("the retest file needs a block or system column")
    if getattr(first_columns, key) is None:
        raise ValidationFileError(
            f"the retest file is joined on participant_id and {key}: "
            f"the answer file has no {key} column"
        )
    first = _keyed_rows(
        table, parsed, first_columns.participant, getattr(first_columns, key), "answer file"
    )
    second = _keyed_rows(
        retest_table, retest_parsed, columns.participant, getattr(columns, key), "retest file"
    )
    matched = [(pair, first[pair], index) for pair, index in second.items() if pair in first]
    unmatched = sorted(
        retest_table.row_numbers[index] for pair, index in second.items() if pair not in first
    )
    # parsed.answers holds the valid rows only: table row -> its row there.
    to_first, to_second = np.cumsum(parsed.valid) - 1, np.cumsum(retest_parsed.valid) - 1
    retest_rows = [index for _, _, index in matched]
    pairs = RetestPairs(
        first=parsed.answers[[to_first[index] for _, index, _ in matched]],
        second=retest_parsed.answers[[to_second[index] for index in retest_rows]],
        participant=np.array([pair[0] for pair, _, _ in matched], dtype=object),
        days=_days(retest_table, columns.days)[retest_rows],
    )
    return RetestJoin(pairs=pairs, key=key, unmatched=unmatched)


def _keyed_rows(
    table: AnswerTable, parsed: ParsedAnswers, participant: int, key: int, name: str
) -> dict[tuple[str, str], int]:
    """(participant, block or system) -> index of the valid row; a key twice is refused."""
    rows: dict[tuple[str, str], int] = {}
    for index in np.flatnonzero(parsed.valid):
        pair = (_cell(table, index, participant), _cell(table, index, key))
        if pair in rows:
            raise ValidationFileError(
                f"{name}: rows {table.row_numbers[rows[pair]]} and {table.row_numbers[index]} "
                f"are both participant {pair[0]}, {table.columns[key]} {pair[1]}: "
                "each may appear once"
            )
        rows[pair] = int(index)
    return rows


def _days(table: AnswerTable, column: int | None) -> NDArray[np.float64]:
    """Days between the two submissions by table row (checked by retest_problems);
    NaN without a days column."""
    if column is None:
        return np.full(len(table), np.nan)
    return np.array([_number(record[column]) for record in table.rows])


def _number(text: str) -> float:
    try:
        return float(text.strip())
    except ValueError:
        return float("nan")


def retest_problems(table: AnswerTable) -> list[RowProblem]:
    """Every bad cell of a retest file beside its answers: an empty participant,
    block or system, a days cell that is not a number of days (0 or more; an
    empty one is not known)."""
    columns = file_columns(table)
    key = columns.block if columns.block is not None else columns.system
    problems = label_problems(table, [columns.participant, key])
    column = columns.days
    if column is not None:
        for row in range(len(table)):
            text = table.rows[row][column].strip()
            value = _number(text)
            if text and not (value >= 0 and np.isfinite(value)):
                problems.append(_problem(table, row, column, "days must be a number, 0 or more"))
    return sorted(problems, key=lambda problem: problem.row)
