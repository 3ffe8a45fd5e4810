"""What shs_score and shs_analyze share: reading the input, reporting bad rows,
writing the outputs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from django.core.management.base import CommandError, OutputWrapper

from scoring.answers.files import (
    XLSX_SHEET,
    AnswerFileError,
    AnswerTable,
    ParsedAnswers,
    RowProblem,
    parse_answers,
    read_answer_file,
    write_atomically,
)


def load_answers(
    path: str,
    *,
    skip_invalid: bool,
    stderr: OutputWrapper,
    more_problems: Callable[[AnswerTable], list[RowProblem]] | None = None,
    name: str = "",
    sheet: str = XLSX_SHEET,
) -> tuple[AnswerTable, ParsedAnswers]:
    """Read and validate the input file, or stop the command with every problem named.

    Without `skip_invalid` a single bad row stops the command before anything
    is written; with it, the bad rows are reported and left out.
    `more_problems` finds bad cells of other columns (the validation flags'),
    which count like bad answers; `name` starts every line about a second file,
    read from the workbook's `sheet`.
    """
    try:
        table = read_answer_file(path, sheet=sheet)
    except AnswerFileError as error:
        raise CommandError(str(error)) from None
    parsed = parse_answers(table)
    if more_problems is not None:
        parsed = with_problems(table, parsed, more_problems(table))
    if parsed.problems:
        prefix = f"{name}: " if name else ""
        stderr.write("\n".join(prefix + str(problem) for problem in parsed.problems))
        bad = len(parsed.invalid_rows)
        if not skip_invalid:
            raise CommandError(
                f"{prefix}{bad} of {len(table)} data rows are invalid; no output was written "
                "(fix them, or use --skip-invalid to leave them out)"
            )
        if not len(parsed.answers):
            # Nothing left to score or analyse: an empty result would pass for one.
            raise CommandError(
                f"{prefix}all {len(table)} data rows are invalid; no output was written"
            )
        stderr.write(f"{prefix}skipped {bad} invalid of {len(table)} data rows")
    return table, parsed


def with_problems(
    table: AnswerTable, parsed: ParsedAnswers, problems: list[RowProblem]
) -> ParsedAnswers:
    """`parsed` with the rows of `problems` invalid too, every problem in row and column order."""
    if not problems:
        return parsed
    index_of_row = {number: index for index, number in enumerate(table.row_numbers)}
    bad = np.zeros(len(table), dtype=bool)
    bad[[index_of_row[problem.row] for problem in problems]] = True
    place = {column: index for index, column in enumerate(table.columns)}
    merged = sorted(
        parsed.problems + problems,
        key=lambda problem: (problem.row, place.get(problem.column, len(place))),
    )
    return ParsedAnswers(
        answers=parsed.answers[~bad[parsed.valid]], valid=parsed.valid & ~bad, problems=merged
    )


def input_record(path: str, table: AnswerTable, parsed: ParsedAnswers) -> dict[str, Any]:
    """What the report states about its input: rows read, rows left out and why."""
    return {
        "file": Path(path).name,
        "rows": len(table),
        "analysed": int(len(parsed.answers)),
        "skipped": len(parsed.invalid_rows),
        "problems": [
            {"row": p.row, "column": p.column, "value": p.value, "reason": p.message}
            for p in parsed.problems
        ],
    }


def write_outputs(outputs: list[tuple[str, bytes]]) -> None:
    """Write each (path, data) whole or not at all, or stop the command saying why."""
    for path, data in outputs:
        try:
            write_atomically(path, data)
        except OSError as error:
            raise CommandError(f"cannot write {path}: {error.strerror or error}") from None
