"""The workbook's data sheets render their rows themselves (exports/writers/
sheetrows.py). The file they make must be the file openpyxl makes from the
same values: compared here byte for byte, for every kind of value an export
holds, and read back."""

import math
import zipfile
from datetime import UTC, date, datetime, time

import pytest
from openpyxl import Workbook, load_workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Font

from exports.anonymize import looks_like_formula
from exports.writers.sheetrows import DataSheet

# Every kind of value a data sheet receives, and the awkward cases of each.
ROW = [
    1,
    -3,
    2.5,
    -0.25,
    0.1 + 0.2,  # openpyxl rounds to 16 significant digits: 0.3
    -0.0,
    1e20,
    12345678901234567890,
    float("nan"),
    float("inf"),
    True,
    False,
    None,
    date(2026, 11, 30),
    "ChatGPT",
    "",
    "a & <b> > 'c' \"d\"",
    "Grüße, 😀, ß",
    " leading and trailing space ",
    "line one\r\nline two\ttab",
    '=HYPERLINK("http://evil.example","x")',
    "-0.25",  # a number written as text is not a formula
    "+43 660 1234567",
    "bell\x07 and\x1f controls, \ufffe non-character",
    "\x01",  # nothing left once cleaned: no cell at all
]
HEADER = [f"column_{number}" for number in range(1, len(ROW) + 1)]


def _with_openpyxl(path, rows):
    """The same sheet written through openpyxl's own write-only cells."""
    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet("Data")
    sheet.freeze_panes = "A2"
    header = []
    for text in HEADER:
        cell = WriteOnlyCell(sheet, text)
        cell.font = Font(bold=True)
        header.append(cell)
    sheet.append(header)
    for row in rows:
        sheet.append([_openpyxl_value(sheet, value) for value in row])
    workbook.save(path)


def _openpyxl_value(sheet, value):
    if not isinstance(value, str):
        return value
    value = "".join(c for c in value if c.isprintable() or c in "\r\n\t").replace("\ufffe", "")
    if not value:
        return None
    if looks_like_formula(value):
        cell = WriteOnlyCell(sheet, value)
        cell.data_type = "s"
        cell.quotePrefix = True
        return cell
    return value


def _with_data_sheet(path, rows):
    workbook = Workbook(write_only=True)
    sheet = DataSheet(workbook, "Data", HEADER)
    for row in rows:
        sheet.append(row)
    workbook.save(path)


def _parts(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        # docProps/core.xml carries the time of saving.
        return {n: archive.read(n) for n in archive.namelist() if n != "docProps/core.xml"}


def test_rows_are_the_markup_openpyxl_writes(tmp_path):
    # openpyxl numbers styles by first use: the date comes before the quoted
    # text in ROW, the order DataSheet registers them in.
    rows = [ROW, list(reversed(ROW)), [None] * len(ROW)]
    _with_openpyxl(tmp_path / "openpyxl.xlsx", rows)
    _with_data_sheet(tmp_path / "data_sheet.xlsx", rows)

    expected, produced = _parts(tmp_path / "openpyxl.xlsx"), _parts(tmp_path / "data_sheet.xlsx")
    assert produced.keys() == expected.keys()
    for name in expected:
        assert produced[name] == expected[name], name


def test_the_sheet_reads_back_with_the_values_and_styles(tmp_path):
    path = tmp_path / "data_sheet.xlsx"
    _with_data_sheet(path, [ROW])

    sheet = load_workbook(path)["Data"]
    header, values = list(sheet.iter_rows())
    assert [cell.value for cell in header] == HEADER
    assert all(cell.font.b for cell in header)
    assert sheet.freeze_panes == "A2"
    for index, (written, cell) in enumerate(zip(ROW, values, strict=True)):
        if isinstance(written, float) and not math.isfinite(written):
            assert cell.value is None
        elif isinstance(written, date):
            assert cell.value == datetime.combine(written, time())  # noqa: DTZ001 (Excel has no zones)
            assert cell.number_format == "yyyy-mm-dd"
        elif isinstance(written, float | int) and not isinstance(written, bool):
            # A spreadsheet holds doubles: 16 significant digits, as openpyxl writes.
            assert cell.value == pytest.approx(written, rel=1e-15)
        elif isinstance(written, str) and looks_like_formula(written):
            assert (cell.value, cell.data_type, cell.quotePrefix) == (written, "s", True)
        elif written == "\x01":
            assert cell.value is None
        elif isinstance(written, str) and "\x07" in written:
            assert cell.value == "bell and controls,  non-character"
        else:
            assert cell.value == (written if written != "" else None), HEADER[index]


def test_a_row_of_the_wrong_width_is_refused(tmp_path):
    sheet = DataSheet(Workbook(write_only=True), "Data", ["a", "b"])
    with pytest.raises(ValueError):
        sheet.append([1, 2, 3])
    with pytest.raises(ValueError):
        DataSheet(Workbook(write_only=True), "Data", ["a", "b"]).append([1])


def test_a_timestamp_cannot_reach_a_data_sheet(tmp_path):
    # Exports carry dates, never times of day (SPEC 5): a datetime is a bug.
    sheet = DataSheet(Workbook(write_only=True), "Data", ["submitted"])
    with pytest.raises(TypeError, match="datetime"):
        sheet.append([datetime(2026, 11, 30, 9, 15, tzinfo=UTC)])
