"""Reading an annotation file (docs/design/criterion.md §13.2): long format, one value a row,
columns exactly `transcript_id, annotator, measure, value` in any order.

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
import math
import re
from dataclasses import dataclass
from itertools import islice

from django.utils.translation import gettext as _

from criterion.models import DETECTOR_PREFIX, Annotation, Measure
from scoring.answers.xlsx_guard import UnsafeWorkbook, check_workbook

COLUMNS = ("transcript_id", "annotator", "measure", "value")
MAX_FILE_BYTES = 10 * 1024 * 1024
# 200 transcripts x 20 annotators x 10 measures is 40,000 values; a file ten
# times as long is a mistake, not an annotation round.
MAX_ROWS = 400_000
SEPARATORS = (",", ";", "\t")
# Measures whose values are rates; a detector's score is any finite number.
RATES = (Measure.FACTUAL_PRECISION.value, Measure.CITATION_SUPPORT.value)
_DETECTOR_NAME = re.compile(r"[a-z0-9_]+")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_NOT_FINITE = {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}
_ANNOTATOR_LENGTH = Annotation._meta.get_field("annotator").max_length
_MEASURE_LENGTH = Annotation._meta.get_field("measure").max_length
_ZIP_MAGIC = b"PK\x03\x04"


class AnnotationFileError(Exception):
    """The file cannot be read as a table at all; the message says why."""


@dataclass(frozen=True)
class RowProblem:
    row: int  # as a spreadsheet numbers it: the header is row 1
    message: str

    def __str__(self) -> str:
        return _("row %(row)d: %(message)s") % {"row": self.row, "message": self.message}


@dataclass(frozen=True)
class AnnotationValue:
    row: int
    transcript_id: str
    annotator: str
    measure: str
    value: float


def read_rows(data: bytes, name: str) -> list[tuple[int, list]]:
    """The file's rows below the header as (row number, cells in COLUMNS order).

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
    order = _column_order(header, header_row)
    if len(rows) > MAX_ROWS:
        raise AnnotationFileError(
            _("%(name)s has more than %(limit)s rows.") % {"name": name, "limit": MAX_ROWS}
        )
    for number, record in rows:
        _unnamed_cell(record, order, number)
    return [(number, _cells(record, order)) for number, record in rows]


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


def _column_order(header: list, row: int) -> list[int]:
    """Where each of COLUMNS is; a column without a name is allowed only while
    empty (spreadsheets keep blank columns around a table), see _unnamed_cell."""
    names = [_text(cell).lower() for cell in header]
    for name in names:
        if name and names.count(name) > 1:
            raise AnnotationFileError(
                _("Row %(row)d (the header) names the column “%(column)s” twice.")
                % {"row": row, "column": name}
            )
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


def _unnamed_cell(record: list, order: list[int], row: int) -> None:
    for index, cell in enumerate(record):
        if index not in order and _text(cell):
            raise AnnotationFileError(
                _(
                    "Row %(row)d has a value in column %(column)d, which has no name in the "
                    "header; only the columns %(columns)s are accepted."
                )
                % {"row": row, "column": index + 1, "columns": ", ".join(COLUMNS)}
            )


def _cells(record: list, order: list[int]) -> list:
    return [record[index] if index < len(record) else None for index in order]


def parse_values(rows: list[tuple[int, list]]) -> tuple[list[AnnotationValue], list[RowProblem]]:
    """Every row checked on its own, then duplicates across rows: all problems at once."""
    values, problems, seen = [], [], {}
    for number, cells in rows:
        value, problem = _parse_row(number, cells)
        if problem:
            problems.append(RowProblem(number, problem))
            continue
        key = (value.annotator, value.transcript_id, value.measure)
        if key in seen:
            problems.append(RowProblem(number, _duplicate(value, seen[key])))
            continue
        seen[key] = number
        values.append(value)
    return values, problems


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


def _parse_row(number: int, cells: list) -> tuple[AnnotationValue | None, str]:
    if any(isinstance(cell, str) and "\x00" in cell for cell in cells):
        return None, _("the row holds a NUL byte (a damaged or binary file)")
    transcript, annotator, measure = (_text(cell) for cell in cells[:3])
    if not transcript:
        return None, _("transcript_id is empty")
    if not annotator:
        return None, _("annotator is empty")
    if len(annotator) > _ANNOTATOR_LENGTH:
        return None, _("the annotator’s pseudonym is longer than %(n)d characters") % {
            "n": _ANNOTATOR_LENGTH
        }
    why = _measure_problem(measure)
    if why:
        return None, why
    value, why = _number(cells[3], measure)
    if why:
        return None, why
    return AnnotationValue(number, transcript.upper(), annotator, measure, value), ""


def _text(cell) -> str:
    """A cell as the text a person sees in it (an XLSX 7.0 reads as 7)."""
    if cell is None:
        return ""
    if isinstance(cell, float) and cell.is_integer():
        return str(int(cell))
    return str(cell).strip()


def _measure_problem(measure: str) -> str:
    if measure in RATES:
        return ""
    name = measure.removeprefix(DETECTOR_PREFIX)
    if measure.startswith(DETECTOR_PREFIX) and _DETECTOR_NAME.fullmatch(name):
        if len(measure) <= _MEASURE_LENGTH:
            return ""
    return _(
        "measure “%(measure)s” is not one of factual_precision, citation_support or "
        "detector:<name> (name of a-z, 0-9 and _, at most %(n)d characters)"
    ) % {"measure": measure, "n": _MEASURE_LENGTH - len(DETECTOR_PREFIX)}


def _number(cell, measure: str) -> tuple[float, str]:
    if isinstance(cell, bool) or not isinstance(cell, (int, float, str)):
        return 0.0, _("value “%(value)s” is not a number") % {"value": _text(cell)}
    text = cell.strip() if isinstance(cell, str) else ""
    if isinstance(cell, str) and text.lower() in _NOT_FINITE:
        return 0.0, _("value “%(value)s” is not a finite number") % {"value": text}
    if isinstance(cell, str) and not _NUMBER.fullmatch(text):
        return 0.0, _("value “%(value)s” is not a number (write it with a decimal point)") % {
            "value": text
        }
    value = float(cell if not isinstance(cell, str) else text)
    if not math.isfinite(value):
        return 0.0, _("value “%(value)s” is not a finite number") % {"value": _text(cell)}
    if measure in RATES and not 0.0 <= value <= 1.0:
        return 0.0, _("value %(value)s of %(measure)s is outside 0..1") % {
            "value": _text(cell),
            "measure": measure,
        }
    return value, ""
