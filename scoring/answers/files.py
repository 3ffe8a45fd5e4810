"""Files of SHS answers in and out: CSV or XLSX with columns q1..q10.

A researcher's file comes from anywhere (Excel in a German locale writes ';',
LibreOffice may add a BOM, a lab export may be XLSX), so reading is lenient
about the container and strict about the answers:

- CSV in UTF-8, with or without BOM, separated by ',' ';' or tab (taken from
  the header line); XLSX (first sheet, or the sheet named "Evaluations" as
  the platform's own export writes it);
- a header row naming q1..q10 in any letter case; every other column passes
  through unchanged;
- whatever cannot be read as a whole (wrong encoding, no header, a missing
  item column) raises AnswerFileError with a message meant for people;
- every bad answer is reported as a RowProblem with its 1-based data row
  number (the first row below the header is row 1), column and value.

Every cell is read as text, XLSX cells too, so that a value passes through
exactly as the researcher sees it and is validated by the same rule.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, time
from itertools import chain, islice
from operator import itemgetter
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from scoring.answers.xlsx_guard import UnsafeWorkbook, check_workbook
from scoring.instruments.shs import ITEM_KEYS, SCALE_VALUES
from scoring.scores.engine import parse_answer, shortened

# Files bigger than this are refused before they are read into memory. Ten
# million evaluations of ten answers are far below it; a mistaken upload of a
# database dump is not.
MAX_FILE_BYTES = 512 * 1024 * 1024
MAX_DATA_ROWS = 10_000_000
SEPARATORS = (",", ";", "\t")
XLSX_SHEET = "Evaluations"

_ZIP_MAGIC = b"PK\x03\x04"
_OLE_MAGIC = b"\xd0\xcf\x11\xe0"  # legacy .xls (and other MS Office binary files)
# The answers as they are normally written; anything else takes the slow path
# through parse_answer, which also explains what is wrong.
_PLAIN_ANSWERS = {str(value): value for value in SCALE_VALUES} | {
    f"+{value}": value for value in SCALE_VALUES if value > 0
}


class AnswerFileError(Exception):
    """The file cannot be read as a table of answers; the message says why and what to do."""


@dataclass(frozen=True)
class RowProblem:
    """One bad cell (or malformed row) of a data row."""

    row: int  # 1-based data row number: the first row below the header is 1
    column: str
    value: str
    message: str

    def __str__(self) -> str:
        shown = shortened(repr(self.value))
        return f"row {self.row}, column {self.column}, value {shown}: {self.message}"


@dataclass
class AnswerTable:
    """A file's header and data rows, all cells as text, every row as long as the header."""

    columns: list[str]
    rows: list[list[str]]
    row_numbers: list[int]  # data row number of each entry of `rows`
    item_columns: tuple[int, ...]  # position of q1..q10 in `columns`
    separator: str = ","
    bom: bool = False
    blank_rows: int = 0
    problems: list[RowProblem] = field(default_factory=list)  # malformed rows

    def __len__(self) -> int:
        return len(self.rows)


@dataclass
class ParsedAnswers:
    """The answers of a table: valid rows as an array, every problem listed."""

    answers: NDArray[np.int8]  # (number of valid rows, 10), item order q1..q10
    valid: NDArray[np.bool_]  # (len(table),) which rows of the table are valid
    problems: list[RowProblem]

    @property
    def invalid_rows(self) -> list[int]:
        return sorted({problem.row for problem in self.problems})


def read_answer_file(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = MAX_FILE_BYTES,
    max_rows: int = MAX_DATA_ROWS,
    sheet: str = XLSX_SHEET,
) -> AnswerTable:
    """Read a CSV or XLSX file of answers; raises AnswerFileError when it cannot."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise AnswerFileError(
                f"{path.name} is {size:,} bytes; files up to {max_bytes:,} bytes are accepted"
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise AnswerFileError(f"{path} does not exist") from None
    except IsADirectoryError:
        raise AnswerFileError(f"{path} is a folder, not a file") from None
    except PermissionError:
        raise AnswerFileError(f"{path} cannot be read (permission denied)") from None
    return read_answer_bytes(data, name=path.name, max_rows=max_rows, sheet=sheet)


def read_answer_bytes(
    data: bytes, *, name: str = "the file", max_rows: int = MAX_DATA_ROWS, sheet: str = XLSX_SHEET
) -> AnswerTable:
    """Read answers from the bytes of a CSV or XLSX file (the format is told by content);
    from a workbook, the sheet named `sheet` if it has one, otherwise the first."""
    if not data or data.isspace():
        raise AnswerFileError(f"{name} is empty")
    if data.startswith(_ZIP_MAGIC):
        records = _records(_xlsx_records(data, name, max_rows + 2, sheet), name, max_rows)
        return _table(records, name, separator=",", bom=False)
    if data.startswith(_OLE_MAGIC):
        raise AnswerFileError(
            f"{name} is an old Excel (.xls) workbook; save it as .xlsx or as CSV UTF-8"
        )
    text, bom = _decode(data, name)
    separator = _separator(text)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=separator)
    try:
        records = _records(reader, name, max_rows)
    except csv.Error as error:
        raise AnswerFileError(
            f"{name} is not a readable CSV file (line {reader.line_num}: {error})"
        ) from None
    return _table(records, name, separator=separator, bom=bom)


def _decode(data: bytes, name: str) -> tuple[str, bool]:
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise AnswerFileError(
            f"{name} is UTF-16 text; save it as UTF-8 (in Excel: 'CSV UTF-8 (comma delimited)')"
        )
    bom = data.startswith(codecs.BOM_UTF8)
    if bom:
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8"), bom
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        byte = data[error.start : error.start + 1].hex()
        raise AnswerFileError(
            f"{name} is not UTF-8 text (byte 0x{byte} on line {line} is not valid UTF-8; "
            "Windows-1252 or Latin-1 files look like this). Save it as UTF-8 "
            "(in Excel: 'CSV UTF-8 (comma delimited)') and try again"
        ) from None


def _separator(text: str) -> str:
    """The separator that splits the header into the most item columns (then most columns)."""
    first_line = text.lstrip("\r\n").partition("\n")[0].rstrip("\r")

    def fit(separator: str) -> tuple[int, int]:
        header = next(csv.reader([first_line], delimiter=separator), [])
        items = sum(1 for name in header if name.strip().lower() in ITEM_KEYS)
        return items, len(header)

    return max(SEPARATORS, key=fit)


def _xlsx_records(data: bytes, name: str, limit: int, sheet: str) -> list[list[str]]:
    """The first `limit` rows of the workbook's answer sheet, as text."""
    import openpyxl  # imported here: only XLSX input needs it

    # A bomb is refused on its declared sizes, before openpyxl inflates it; a
    # workbook may inflate as far as the largest file this module accepts.
    try:
        check_workbook(data, name, max_uncompressed=MAX_FILE_BYTES)
    except UnsafeWorkbook as error:
        raise AnswerFileError(str(error)) from None
    # A damaged workbook can fail in the zip layer, the XML parser or openpyxl
    # itself, while opening or while reading rows; for the researcher all of
    # these mean the same thing.
    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        try:
            found = workbook[sheet] if sheet in workbook.sheetnames else workbook.worksheets[0]
            return [
                [_cell_text(value) for value in values]
                for values in islice(found.iter_rows(values_only=True), limit)
            ]
        finally:
            workbook.close()
    except Exception as error:
        raise AnswerFileError(f"{name} cannot be read as an XLSX workbook ({error})") from None


def _cell_text(value: object) -> str:
    """A spreadsheet cell as the text a person sees in it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (date, time)):
        return value.isoformat()
    return str(value)


def _table(records: list[list[str]], name: str, *, separator: str, bom: bool) -> AnswerTable:
    start = 0
    while start < len(records) and _blank(records[start]):
        start += 1  # blank lines above the header
    if start == len(records):
        raise AnswerFileError(f"{name} has no header row")
    header = list(records[start])
    while header and not header[-1].strip():
        header.pop()  # spreadsheet programs pad rows with empty cells
    columns = [cell.strip() for cell in header]
    item_columns = _item_columns(columns, name, separator)
    width = len(columns)
    data = records[start + 1 :]
    # Whole-list passes (join, enumerate, len) rather than one Python-level
    # step per row: this is most of the reading time of a 100,000-row file.
    kept = [index for index, text in enumerate(map("".join, data)) if text and not text.isspace()]
    table = AnswerTable(
        columns,
        [data[index] for index in kept],
        [index + 1 for index in kept],
        item_columns,
        separator=separator,
        bom=bom,
        blank_rows=len(data) - len(kept),
    )
    if not table.rows:
        raise AnswerFileError(f"{name} has a header but no data rows")
    for position, record in enumerate(table.rows):
        if len(record) != width:
            table.rows[position] = _fitted(record, width, table.row_numbers[position], table)
    return table


def _fitted(record: list[str], width: int, number: int, table: AnswerTable) -> list[str]:
    """The record cut or padded to the header's width; non-empty extra cells are a problem."""
    if len(record) < width:
        return record + [""] * (width - len(record))
    extra = [cell for cell in record[width:] if cell.strip()]
    if extra:
        table.problems.append(
            RowProblem(
                number,
                f"(column {width + 1})",
                extra[0],
                f"the row has {len(record)} fields but the header has {width}",
            )
        )
    return record[:width]


def _records(records: Iterable[list[str]], name: str, max_rows: int) -> list[list[str]]:
    """At most max_rows data rows (plus header) from an iterator of records."""
    limited = list(islice(records, max_rows + 2))
    if len(limited) > max_rows + 1:
        raise AnswerFileError(f"{name} has more than {max_rows:,} rows")
    return limited


def _blank(record: list[str]) -> bool:
    return not "".join(record).strip()


def _item_columns(columns: list[str], name: str, separator: str) -> tuple[int, ...]:
    positions: dict[str, list[int]] = {}
    for index, column in enumerate(columns):
        key = column.lower()
        if key in ITEM_KEYS:
            positions.setdefault(key, []).append(index)
    duplicated = [key for key, found in positions.items() if len(found) > 1]
    if duplicated:
        numbers = [str(index + 1) for index in positions[duplicated[0]]]
        raise AnswerFileError(
            f"{name}: column {duplicated[0]} appears more than once "
            f"(columns {', '.join(numbers[:-1])} and {numbers[-1]})"
        )
    missing = [key for key in ITEM_KEYS if key not in positions]
    if missing:
        shown = ", ".join(columns[:12]) + (", …" if len(columns) > 12 else "")
        raise AnswerFileError(
            f"{name} is missing the column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)} (the header read with separator {separator!r} "
            f"has: {shown or 'no names'})"
        )
    return tuple(positions[key][0] for key in ITEM_KEYS)


def parse_answers(table: AnswerTable) -> ParsedAnswers:
    """Validate every answer of the table; collect every problem, row by row."""
    n, k = len(table.rows), len(ITEM_KEYS)
    valid = np.ones(n, dtype=bool)
    problems = list(table.problems)
    if table.problems:
        index_of_row = {number: index for index, number in enumerate(table.row_numbers)}
        for problem in table.problems:
            valid[index_of_row[problem.row]] = False
    # All answers in one flat list, row after row: one C-level pass per step
    # instead of a Python loop over a million cells.
    cells = list(chain.from_iterable(map(itemgetter(*table.item_columns), table.rows)))
    codes = list(map(_PLAIN_ANSWERS.get, cells))
    if None in codes:
        for flat in [index for index, code in enumerate(codes) if code is None]:
            answer, why = parse_answer(cells[flat])
            codes[flat] = 0 if why else answer
            if why:
                row, item = divmod(flat, k)
                valid[row] = False
                problems.append(
                    RowProblem(
                        table.row_numbers[row],
                        table.columns[table.item_columns[item]],
                        cells[flat],
                        why,
                    )
                )
    answers = np.array(codes, dtype=np.int8).reshape(n, k)
    order = {position: rank for rank, position in enumerate(table.item_columns)}
    problems.sort(key=lambda problem: (problem.row, _column_rank(problem, table, order)))
    return ParsedAnswers(answers=answers[valid], valid=valid, problems=problems)


def _column_rank(problem: RowProblem, table: AnswerTable, order: dict[int, int]) -> int:
    try:
        return order[table.columns.index(problem.column)]
    except ValueError:
        return len(order)  # a malformed row's problem comes after its answers


def write_atomically(path: str | os.PathLike[str], data: bytes) -> None:
    """Write the whole file or nothing: a temporary file in the same folder, then a rename.

    A crash or a full disk leaves at most a stray temporary file, never a
    half-written output that looks complete.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        # mkstemp creates the file readable only by its owner; give it the mode
        # any other new file would get.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
