"""Reading an annotation file (docs/design/criterion.md §13.2) in either of two forms,
told apart by the header:

- long: one value a row, columns exactly `transcript_id, annotator, measure,
  value` in any order;
- wide (the annotation sheet, criterion/annotations/sheet.py): one transcript a
  row, columns `transcript_id`, `annotator` and one column per measure. Each
  filled measure cell becomes the record a long row would hold, so both forms
  go through the same checks; an empty cell is a value not given, not a zero.

Like scoring/answers/files.py, reading is lenient about the container (CSV in UTF-8
with or without BOM, separated by ',' ';' or tab; or the first sheet of an
XLSX workbook) and strict about the content: every bad row is collected as
a RowProblem, and the caller stores nothing unless there is none. Unlike
scoring/answers/files.py, rows are numbered as a spreadsheet shows them (the header is
row 1, the first value row 2), since the coordinator corrects the file in one.
An extra column is refused rather than ignored: a column the platform drops
silently (a second `value`, a note that changes what a value means) is a
value the coordinator believes was imported.
"""

from __future__ import annotations

import codecs
import csv
import io
from dataclasses import dataclass
from itertools import islice

from django.utils.translation import gettext as _

from criterion.annotations.cells import (
    ANNOTATOR_LENGTH,
    RATES,
    cell_number,
    cell_text,
    measure_problem,
)
from criterion.models import DETECTOR_PREFIX
from scoring.answers.xlsx_guard import UnsafeWorkbook, check_workbook

COLUMNS = ("transcript_id", "annotator", "measure", "value")
# The wide form's columns besides one column per measure.
WIDE_KEYS = ("transcript_id", "annotator")
MAX_FILE_BYTES = 10 * 1024 * 1024
# 200 transcripts x 20 annotators x 10 measures is 40,000 values; a file ten
# times as long is a mistake, not an annotation round. The limit holds for the
# rows of either form and for the values of a wide one.
MAX_ROWS = 400_000
SEPARATORS = (",", ";", "\t")
_ZIP_MAGIC = b"PK\x03\x04"


class AnnotationFileError(Exception):
    """The file cannot be read as a table at all; the message says why."""


@dataclass(frozen=True)
class RowProblem:
    row: int  # as a spreadsheet numbers it: the header is row 1
    message: str
    # The cell's column in a wide row, which holds several values; a long row
    # holds one, so the row says it all.
    column: str = ""

    def __str__(self) -> str:
        if self.column:
            return _("row %(row)d, column %(column)s: %(message)s") % {
                "row": self.row,
                "column": self.column,
                "message": self.message,
            }
        return _("row %(row)d: %(message)s") % {"row": self.row, "message": self.message}


@dataclass(frozen=True)
class ValueCells:
    """One value as read: a long row's cells, or a wide row's transcript_id and
    annotator with one filled measure cell (`column`, its header), in COLUMNS order."""

    row: int
    cells: tuple
    column: str = ""


@dataclass(frozen=True)
class AnnotationValue:
    row: int
    transcript_id: str
    annotator: str
    measure: str
    value: float
    column: str = ""  # the wide form's measure column; "" for a long row


def read_rows(data: bytes, name: str) -> list[ValueCells]:
    """The file's values below the header, each with its cells in COLUMNS order,
    whichever form the header shows.

    Raises AnnotationFileError for what makes the whole file unreadable
    (encoding, no header, missing or extra columns); cells are text, but an
    XLSX number stays a number.
    """
    if len(data) > MAX_FILE_BYTES:
        raise AnnotationFileError(
            _("%(name)s is larger than %(limit)d MB.")
            % {"name": name, "limit": MAX_FILE_BYTES // (1024 * 1024)}
        )
    if not data.strip():
        raise AnnotationFileError(_("%(name)s is empty.") % {"name": name})
    records = _xlsx_records(data, name) if data.startswith(_ZIP_MAGIC) else _csv_records(data, name)
    numbered = [(number, record) for number, record in enumerate(records, 1) if not _blank(record)]
    if not numbered:
        raise AnnotationFileError(_("%(name)s has no header row.") % {"name": name})
    (header_row, header), *rows = numbered
    names = _header_names(header, header_row)
    if len(rows) > MAX_ROWS:
        raise AnnotationFileError(
            _("%(name)s has more than %(limit)s rows.") % {"name": name, "limit": MAX_ROWS}
        )
    if _is_wide(names):
        return _wide_values(rows, _wide_columns(names, header_row), name)
    order = _column_order(names, header_row)
    for number, record in rows:
        _unnamed_cell(record, order, number, COLUMNS)
    return [ValueCells(number, _cells(record, order)) for number, record in rows]


def _csv_records(data: bytes, name: str) -> list[list]:
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise AnnotationFileError(
            _(
                "%(name)s is not UTF-8 text (line %(line)d holds a byte that UTF-8 does not "
                "allow; Windows-1252 and UTF-16 files look like this). Save it as "
                "“CSV UTF-8” and upload it again."
            )
            % {"name": name, "line": line}
        ) from None
    first_line = text.lstrip("\r\n").partition("\n")[0]
    separator = max(SEPARATORS, key=first_line.count)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=separator)
    try:
        return list(islice(reader, MAX_ROWS + 2))
    except csv.Error as error:
        raise AnnotationFileError(
            _("%(name)s is not a readable CSV file (line %(line)d: %(error)s).")
            % {"name": name, "line": reader.line_num, "error": error}
        ) from None


def _xlsx_records(data: bytes, name: str) -> list[list]:
    import openpyxl  # only XLSX files need it

    # A zip bomb is refused on its declared sizes, before openpyxl inflates it.
    try:
        check_workbook(data, name)
    except UnsafeWorkbook as error:
        raise AnnotationFileError(str(error)) from None
    # A damaged workbook fails in the zip layer, the XML parser or openpyxl:
    # for the coordinator these all mean the same thing.
    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        try:
            rows = workbook.worksheets[0].iter_rows(values_only=True)
            return [list(values) for values in islice(rows, MAX_ROWS + 2)]
        finally:
            workbook.close()
    except Exception:
        raise AnnotationFileError(
            _("%(name)s cannot be read as an XLSX workbook.") % {"name": name}
        ) from None


def _blank(record: list) -> bool:
    return all(cell is None or str(cell).strip() == "" for cell in record)


def _header_names(header: list, row: int) -> list[str]:
    """The header's column names in lower case ("" for a column without one)."""
    names = [cell_text(cell).lower() for cell in header]
    for name in names:
        if name and names.count(name) > 1:
            raise AnnotationFileError(
                _("Row %(row)d (the header) names the column “%(column)s” twice.")
                % {"row": row, "column": name}
            )
    return names


def _is_wide(names: list[str]) -> bool:
    """A header naming a measure and neither `measure` nor `value` is a sheet's;
    any other header is read (and, if wrong, refused) as the long form's."""
    if {"measure", "value"} & set(names):
        return False
    return any(name in RATES or name.startswith(DETECTOR_PREFIX) for name in names)


def _column_order(names: list[str], row: int) -> list[int]:
    """Where each of COLUMNS is; a column without a name is allowed only while
    empty (spreadsheets keep blank columns around a table), see _unnamed_cell."""
    extra = [name for name in names if name and name not in COLUMNS]
    missing = [column for column in COLUMNS if column not in names]
    if missing or extra:
        raise AnnotationFileError(
            _(
                "Row %(row)d (the header) must name exactly the columns %(columns)s. "
                "Missing: %(missing)s. Not accepted: %(extra)s."
            )
            % {
                "row": row,
                "columns": ", ".join(COLUMNS),
                "missing": ", ".join(missing) or "–",
                "extra": ", ".join(extra) or "–",
            }
        )
    return [names.index(column) for column in COLUMNS]


def _wide_columns(names: list[str], row: int) -> dict[str, int]:
    """Where each named column of a sheet is: transcript_id, annotator, measures."""
    missing = [column for column in WIDE_KEYS if column not in names]
    extra = [name for name in names if name and name not in WIDE_KEYS and measure_problem(name)]
    if missing or extra:
        raise AnnotationFileError(
            _(
                "Row %(row)d (the header) of a sheet with one transcript a row must name the "
                "columns transcript_id and annotator and one column per measure "
                "(factual_precision, citation_support or detector:<name>). "
                "Missing: %(missing)s. Not accepted: %(extra)s."
            )
            % {
                "row": row,
                "missing": ", ".join(missing) or "–",
                "extra": ", ".join(extra) or "–",
            }
        )
    return {name: index for index, name in enumerate(names) if name}


def _wide_values(rows: list[tuple[int, list]], columns: dict[str, int], name: str) -> list:
    """A long record per filled measure cell; an empty cell is a value not given."""
    measures = [(column, at) for column, at in columns.items() if column not in WIDE_KEYS]
    head_at = [columns[column] for column in WIDE_KEYS]
    values = []
    for number, record in rows:
        _unnamed_cell(record, list(columns.values()), number, list(columns))
        head = _cells(record, head_at)
        for measure, at in measures:
            cell = _cells(record, [at])[0]
            if cell_text(cell):
                values.append(ValueCells(number, (*head, measure, cell), measure))
        if len(values) > MAX_ROWS:
            raise AnnotationFileError(
                _("%(name)s has more than %(limit)s values.") % {"name": name, "limit": MAX_ROWS}
            )
    return values


def _unnamed_cell(record: list, order: list[int], row: int, accepted) -> None:
    for index, cell in enumerate(record):
        if index not in order and cell_text(cell):
            raise AnnotationFileError(
                _(
                    "Row %(row)d has a value in column %(column)d, which has no name in the "
                    "header; only the columns %(columns)s are accepted."
                )
                % {"row": row, "column": index + 1, "columns": ", ".join(accepted)}
            )


def _cells(record: list, order: list[int]) -> tuple:
    return tuple(record[index] if index < len(record) else None for index in order)


def parse_values(rows: list[ValueCells]) -> tuple[list[AnnotationValue], list[RowProblem]]:
    """Every value checked on its own, then duplicates across rows: all problems at once."""
    values: list[AnnotationValue] = []
    problems: list[RowProblem] = []
    seen: dict[tuple, int] = {}
    for item in rows:
        value, problem, field = _parse_row(item)
        if value is None:
            problems.append(RowProblem(item.row, problem, _problem_column(item, field)))
            continue
        key = (value.annotator, value.transcript_id, value.measure)
        if key in seen:
            problems.append(RowProblem(item.row, _duplicate(value, seen[key]), value.column))
            continue
        seen[key] = item.row
        values.append(value)
    return values, in_row_order(problems)


def in_row_order(problems: list[RowProblem]) -> list[RowProblem]:
    """Each problem once, by row: a wide row's empty transcript_id is the same
    problem for each of its values."""
    return sorted(dict.fromkeys(problems), key=lambda problem: problem.row)


def _problem_column(item: ValueCells, field: str) -> str:
    """Where a wide row's problem is: its transcript_id or annotator cell, or the
    measure cell the value came from."""
    if not item.column:
        return ""
    return field if field in WIDE_KEYS else item.column


def _duplicate(value: AnnotationValue, first: int) -> str:
    return _(
        "%(annotator)s already gave %(measure)s of %(transcript)s in row %(first)d; "
        "a file holds one value per annotator, transcript and measure"
    ) % {
        "annotator": value.annotator,
        "measure": value.measure,
        "transcript": value.transcript_id,
        "first": first,
    }


def _parse_row(item: ValueCells) -> tuple[AnnotationValue | None, str, str]:
    """The value, or why not and in which of COLUMNS."""
    cells = item.cells
    for field, cell in zip(COLUMNS, cells, strict=True):
        if isinstance(cell, str) and "\x00" in cell:
            return None, _("the row holds a NUL byte (a damaged or binary file)"), field
    transcript, annotator, measure = (cell_text(cell) for cell in cells[:3])
    if not transcript:
        return None, _("transcript_id is empty"), "transcript_id"
    if not annotator:
        return None, _("annotator is empty"), "annotator"
    if len(annotator) > ANNOTATOR_LENGTH:
        why = _("the annotator’s pseudonym is longer than %(n)d characters")
        return None, why % {"n": ANNOTATOR_LENGTH}, "annotator"
    why = measure_problem(measure)
    if why:
        return None, why, "measure"
    value, why = cell_number(cells[3], measure)
    if why:
        return None, why, "value"
    return (
        AnnotationValue(item.row, transcript.upper(), annotator, measure, value, item.column),
        "",
        "",
    )
