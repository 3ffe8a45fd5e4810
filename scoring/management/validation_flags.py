"""shs_analyze's validation flags (docs/design/command-line.md §9.3): the file's extra columns
read, checked and handed to `scoring.stats.validation.validation_analysis`.

Imported by the command only when one of the flags is given, so that the
plain analysis never loads the model-fitting libraries.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, OutputWrapper

from scoring.answers.files import AnswerTable, ParsedAnswers, RowProblem
from scoring.answers.validation import (
    PARTS,
    RETEST_SHEET,
    FileColumns,
    RetestJoin,
    ValidationFileError,
    cell_problems,
    check_parts,
    file_columns,
    retest_pairs,
    retest_problems,
    supported_parts,
    validation_data_from_table,
)
from scoring.management.answers import load_answers
from scoring.stats.validation_data import ValidationData


@dataclass(frozen=True)
class ValidationRequest:
    """What the command line asks of the validation programme."""

    parts: frozenset[str]  # asked for one by one (--cfa, ..., --retest)
    everything: bool  # --validation: every part the file supports
    retest: str | None  # the retest file
    group: str | None  # --group COLUMN
    resamples: int
    seed: int


@dataclass
class _Checked:
    """What checking the answer file found out, kept for building the data."""

    columns: FileColumns | None = None
    parts: tuple[str, ...] = ()


def analyse_validation(
    request: ValidationRequest, *, path: str, skip_invalid: bool, stderr: OutputWrapper
) -> tuple[AnswerTable, ParsedAnswers, dict[str, Any], dict[str, Any], ValidationData]:
    """Read and check the answer file (and the retest file), run the parts.

    Returns the table and its parsed answers (rows with a bad validation cell
    count as invalid), `validation_analysis`'s result, what the report's
    `input` states about the validation input and the data analysed (the HTML
    report draws the retest's plot from it). Every refusal is a CommandError
    raised before anything is written.
    """
    checked = _Checked()

    def problems(table: AnswerTable) -> list[RowProblem]:
        checked.columns, checked.parts = _parts(request, table)
        return cell_problems(table, checked.columns, checked.parts)

    try:
        table, parsed = load_answers(
            path, skip_invalid=skip_invalid, stderr=stderr, more_problems=problems
        )
        join, retest_record = None, None
        if request.retest is not None:
            join, retest_record = _retest(request.retest, table, parsed, skip_invalid, stderr)
        data = validation_data_from_table(
            table, parsed, group_column=request.group, retest=None if join is None else join.pairs
        )
    except ValidationFileError as error:
        raise CommandError(str(error)) from None
    from scoring.stats.validation import validation_analysis  # the slow imports, only here

    result = validation_analysis(
        data, parts=checked.parts, resamples=request.resamples, seed=request.seed, advance=None
    )
    return table, parsed, result, _record(request, checked, data, retest_record), data


def _parts(request: ValidationRequest, table: AnswerTable) -> tuple[FileColumns, tuple[str, ...]]:
    columns = file_columns(table, group_column=request.group)
    asked = set(request.parts)
    if request.everything:
        asked |= set(supported_parts(table, columns, retest=request.retest is not None))
    check_parts(table, columns, request.parts)
    return columns, tuple(part for part in PARTS if part in asked)


def _retest(
    path: str,
    table: AnswerTable,
    parsed: ParsedAnswers,
    skip_invalid: bool,
    stderr: OutputWrapper,
) -> tuple[RetestJoin, dict[str, Any]]:
    """The retest file joined to the answer file, and what the report states about it."""
    name = Path(path).name
    retest_table, retest_parsed = load_answers(
        path,
        skip_invalid=skip_invalid,
        stderr=stderr,
        more_problems=retest_problems,
        name=name,
        sheet=RETEST_SHEET,
    )
    join = retest_pairs(table, parsed, retest_table, retest_parsed)
    unmatched = join.unmatched
    if unmatched:
        rows = ", ".join(map(str, unmatched[:20])) + (", …" if len(unmatched) > 20 else "")
        stderr.write(
            f"{name}: {len(unmatched)} of {len(retest_table)} retest rows match no "
            f"evaluation by participant_id and {join.key} and are left out (rows {rows})"
        )
    if not join.pairs.n:
        raise CommandError(f"{name}: no retest row matches an evaluation; no output was written")
    return join, {
        "file": name,
        "rows": len(retest_table),
        "skipped": len(retest_parsed.invalid_rows),
        "pairs": join.pairs.n,
        "joined_on": ["participant_id", join.key],
        "unmatched": len(unmatched),
        "unmatched_rows": unmatched,
    }


def _record(
    request: ValidationRequest,
    checked: _Checked,
    data: ValidationData,
    retest: dict[str, Any] | None,
) -> dict[str, Any]:
    """The validation input as the report states it: parts run, options, what was read."""
    # Set while the answer file was read: load_answers always asks for its problems.
    assert checked.columns is not None
    record: dict[str, Any] = {
        "parts": list(checked.parts),
        "evaluations": data.n,
        "companion_scales": sorted(checked.columns.scales),
        "group": request.group,
        "resamples": request.resamples,
        "seed": request.seed,
    }
    if retest is not None:
        record["retest"] = retest
    return record


def request(options: dict[str, Any]) -> ValidationRequest:
    """The validation request of the command's options (one flag at least is given)."""
    return ValidationRequest(
        parts=frozenset(part for part in PARTS if options.get(part)),
        everything=bool(options.get("validation")),
        retest=options.get("retest"),
        group=options.get("group"),
        # scoring.stats.validation's defaults, written here so that a refused file
        # never pays for importing it.
        resamples=options["resamples"] if options.get("resamples") is not None else 2000,
        seed=options["seed"] if options.get("seed") is not None else 0,
    )
