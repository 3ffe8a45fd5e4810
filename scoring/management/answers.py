"""What shs_score and shs_analyze share: reading the input, reporting bad rows,
writing the outputs."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, OutputWrapper

from scoring.io import (
    AnswerFileError,
    AnswerTable,
    ParsedAnswers,
    parse_answers,
    read_answer_file,
    write_atomically,
)


def load_answers(
    path: str, *, skip_invalid: bool, stderr: OutputWrapper
) -> tuple[AnswerTable, ParsedAnswers]:
    """Read and validate the input file, or stop the command with every problem named.

    Without `skip_invalid` a single bad row stops the command before anything
    is written; with it, the bad rows are reported and left out.
    """
    try:
        table = read_answer_file(path)
    except AnswerFileError as error:
        raise CommandError(str(error)) from None
    parsed = parse_answers(table)
    if parsed.problems:
        stderr.write("\n".join(str(problem) for problem in parsed.problems))
        bad = len(parsed.invalid_rows)
        if not skip_invalid:
            raise CommandError(
                f"{bad} of {len(table)} data rows are invalid; no output was written "
                "(fix them, or use --skip-invalid to leave them out)"
            )
        if not len(parsed.answers):
            # Nothing left to score or analyse: an empty result would pass for one.
            raise CommandError(f"all {len(table)} data rows are invalid; no output was written")
        stderr.write(f"skipped {bad} invalid of {len(table)} data rows")
    return table, parsed


def input_record(path: str, table: AnswerTable, parsed: ParsedAnswers) -> dict:
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
