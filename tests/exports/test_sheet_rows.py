"""The workbook's data sheets render their rows themselves (exports/writers/
sheetrows.py). The file they make must be the file openpyxl makes from the
same values: compared here byte for byte, for every kind of value an export
holds, and read back. Two differences are deliberate: text that Excel would
take as an error value (#N/A) stays text, and text beyond Excel's cell limit
is cut with a mark (openpyxl cuts it silently).

Where an openpyxl release lacks the internals that rendering needs, the sheets
are written through openpyxl's public cells instead: the tests marked with the
`rows_written` fixture run both ways."""

import math
import re
import tempfile
import zipfile
from datetime import UTC, date, datetime, time
from pathlib import Path

import pytest
from openpyxl import Workbook, load_workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Font

from exports.dataset import build_dataset
from exports.progress import Progress
from exports.writers import sheetrows
from exports.writers.sheetrows import CELL_LIMIT, CUT_MARK, WorkbookSheet, cell_text
from exports.writers.workbook import WRITER, write_xlsx
from shs_platform.spreadsheet_cells import looks_like_formula

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
    "\xa0no-break space\u2028line separator\x85next line\u0301",
    "   ",  # only spaces: a text cell that keeps them
    "\tx",  # starts with a tab: runs as a formula in some spreadsheets
    "#N/A",  # openpyxl would make this an error value; it is text someone typed
    "lone \ud800 surrogate, \uffff",
]
HEADER = [f"column_{number}" for number in range(1, len(ROW) + 1)]


@pytest.fixture(params=["rendered", "openpyxl_cells"])
def rows_written(request, monkeypatch):
    """Each way a sheet's rows can be written (sheetrows.RENDERED_ROWS)."""
    monkeypatch.setattr(sheetrows, "RENDERED_ROWS", request.param == "rendered")
    return request.param


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


# What XML 1.0 allows (https://www.w3.org/TR/xml/#charsets), written as the
# allowed ranges rather than as the code's list of forbidden ones.
_OUTSIDE_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _openpyxl_value(sheet, value):
    if not isinstance(value, str):
        return value
    value = _OUTSIDE_XML.sub("", value)
    if not value:
        return None
    if looks_like_formula(value) or value.startswith("#"):
        cell = WriteOnlyCell(sheet, value)
        cell.data_type = "s"  # text, whatever openpyxl would guess from it
        cell.quotePrefix = looks_like_formula(value)
        return cell
    return value


def _with_data_sheet(path, rows):
    workbook = Workbook(write_only=True)
    sheet = WorkbookSheet(workbook, "Data", HEADER, folder=path.parent)
    for row in rows:
        sheet.append(row)
    workbook.save(path)


def _parts(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        # docProps/core.xml carries the time of saving.
        return {n: archive.read(n) for n in archive.namelist() if n != "docProps/core.xml"}


def test_rows_are_the_markup_openpyxl_writes(tmp_path, rows_written):
    # openpyxl numbers styles by first use: the date comes before the quoted
    # text in ROW, the order WorkbookSheet registers them in.
    rows = [ROW, list(reversed(ROW)), [None] * len(ROW)]
    _with_openpyxl(tmp_path / "openpyxl.xlsx", rows)
    _with_data_sheet(tmp_path / "data_sheet.xlsx", rows)

    expected, produced = _parts(tmp_path / "openpyxl.xlsx"), _parts(tmp_path / "data_sheet.xlsx")
    assert produced.keys() == expected.keys()
    for name in expected:
        assert produced[name] == expected[name], name


def test_the_sheet_reads_back_with_the_values_and_styles(tmp_path, rows_written):
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
        elif isinstance(written, str) and "\ud800" in written:
            assert cell.value == "lone  surrogate, "
        elif written == "#N/A":
            assert (cell.value, cell.data_type) == ("#N/A", "s")
        else:
            assert cell.value == (written if written != "" else None), HEADER[index]


def test_a_row_of_the_wrong_width_is_refused(tmp_path, rows_written):
    workbook = Workbook(write_only=True)
    sheet = WorkbookSheet(workbook, "Data", ["a", "b"], folder=tmp_path)
    sheet.append([1, 2])
    with pytest.raises(ValueError, match="row 3 of sheet 'Data' has 3 values for 2 columns"):
        sheet.append([1, 2, 3])
    with pytest.raises(ValueError, match="has 1 values for 2 columns"):
        WorkbookSheet(workbook, "Other", ["a", "b"], folder=tmp_path).append([1])

    # What was written before stays a well-formed sheet.
    workbook.save(tmp_path / "refused.xlsx")
    rows = list(load_workbook(tmp_path / "refused.xlsx")["Data"].values)
    assert rows == [("a", "b"), (1, 2)]


def _excel_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2  # Excel counts UTF-16 code units


@pytest.mark.parametrize("character", ["x", "é", "😀"])
def test_text_beyond_excels_cell_limit_is_cut_with_a_mark(tmp_path, character, rows_written):
    at_limit = character * (CELL_LIMIT // _excel_length(character))
    beyond = at_limit + character * 10

    assert cell_text(at_limit) == at_limit
    cut = cell_text(beyond)
    assert cut.endswith(CUT_MARK) and _excel_length(cut) <= CELL_LIMIT
    assert beyond.startswith(cut.removesuffix(CUT_MARK))
    assert _excel_length(cut) > CELL_LIMIT - len(CUT_MARK) - 2  # cut no shorter than needed

    workbook = Workbook(write_only=True)
    WorkbookSheet(workbook, "Data", ["prompt_texts"], folder=tmp_path).append([beyond])
    workbook.save(tmp_path / "long.xlsx")
    assert load_workbook(tmp_path / "long.xlsx")["Data"]["A2"].value == cut


def test_a_timestamp_cannot_reach_a_data_sheet(tmp_path, rows_written):
    # Exports carry dates, never times of day (docs/design/anonymisation.md §6.3): a datetime is a
    # bug.
    workbook = Workbook(write_only=True)
    sheet = WorkbookSheet(workbook, "Data", ["submitted"], folder=tmp_path)
    with pytest.raises(TypeError, match="datetime"):
        sheet.append([datetime(2026, 11, 30, 9, 15, tzinfo=UTC)])
    # As a failed export does: a sheet left open is finished by the garbage
    # collector, which warns in whichever later test it happens to run.
    sheetrows.discard_sheets(workbook)


def _sheet_files() -> set:
    return set(Path(tempfile.gettempdir()).glob("openpyxl.*"))


def _write_until(dataset, path: Path, percent: int, check=None) -> Progress:
    """Write the workbook, failing once the export is `percent` done (after `check`)."""

    def tick(done):
        if done >= percent:
            if check:
                check()
            raise RuntimeError("superseded")

    progress = Progress(tick)
    progress.expect(WRITER.total_rows(dataset))
    with pytest.raises(RuntimeError, match="superseded"):
        write_xlsx(dataset, path, progress)
    return progress


def test_sheet_files_are_written_in_the_run_folder_not_the_temporary_folder(populated, tmp_path):
    # A killed worker never cleans up: its files must be where the next run looks.
    dataset = build_dataset(study=populated.study, include_pilot=False, include_free_text=True)
    before = _sheet_files()
    seen = []

    def look():
        seen.extend(sorted(p.name for p in tmp_path.iterdir()))
        assert _sheet_files() - before == set()

    _write_until(dataset, tmp_path / "export.xlsx", 40, look)

    # One file per sheet: the data sheets of an export with free text, Codebook and About.
    assert seen == [f"sheet{n}.xml" for n in range(1, len(dataset.present(WRITER.tables)) + 3)]


def test_a_failed_workbook_leaves_no_sheet_files_behind(populated, tmp_path):
    # openpyxl would remove them only when the process exits, and a worker's
    # child process lives on: an export that dies mid-way cleans up itself.
    dataset = build_dataset(study=populated.study, include_pilot=False, include_free_text=True)

    progress = _write_until(dataset, tmp_path / "export.xlsx", 40)

    assert progress.ticked >= 8  # it died in the middle, with sheet files open
    assert list(tmp_path.iterdir()) == []


def _cells_read_back(path: Path) -> dict:
    """Every sheet as openpyxl reads it: its frame and each cell's value, type and style."""
    workbook = load_workbook(path)
    return {
        sheet.title: (
            sheet.freeze_panes,
            {letter: d.width for letter, d in sheet.column_dimensions.items()},
            [
                [
                    (c.value, c.data_type, c.font.b, c.quotePrefix, c.number_format)
                    + (c.alignment.wrap_text, c.alignment.vertical)
                    for c in row
                ]
                for row in sheet.iter_rows()
            ],
        )
        for sheet in workbook.worksheets
    }


def test_openpyxls_public_cells_write_the_same_workbook(populated, tmp_path, monkeypatch):
    # Given an export's data, with free text and formula-like prompts
    dataset = build_dataset(study=populated.study, include_pilot=True, include_free_text=True)
    paths = {}
    # When the workbook is written with rendered rows, and through openpyxl's cells
    for rendered in (True, False):
        monkeypatch.setattr(sheetrows, "RENDERED_ROWS", rendered)
        folder = tmp_path / str(rendered)
        folder.mkdir()
        paths[rendered] = folder / "export.xlsx"
        write_xlsx(dataset, paths[rendered], Progress(lambda percent: None))
    # Then both read back with the same sheets, values, types and styles.
    rendered, cells = _cells_read_back(paths[True]), _cells_read_back(paths[False])
    assert list(rendered) == list(cells) and len(rendered["Evaluations"][2]) > 10
    for title in rendered:
        assert rendered[title] == cells[title], title


def test_the_rendered_rows_are_used_where_openpyxl_has_what_they_need():
    # openpyxl as pinned by the project: the rendered rows work, and are used.
    assert sheetrows.rendered_rows_work() is True
    assert sheetrows.RENDERED_ROWS is True


def test_an_openpyxl_without_an_internal_falls_back_to_its_cells(monkeypatch):
    from openpyxl.workbook.workbook import Workbook as OpenpyxlWorkbook

    monkeypatch.delattr(OpenpyxlWorkbook, "_add_sheet")

    assert sheetrows.rendered_rows_work() is False


def test_an_openpyxl_that_writes_cells_otherwise_falls_back_to_its_cells(monkeypatch):
    # Say a release wrote numbers with every digit: the rendered markup no
    # longer matches what openpyxl itself writes.
    import openpyxl.cell._writer

    monkeypatch.setattr(openpyxl.cell._writer, "safe_string", lambda value: repr(value))

    assert sheetrows.rendered_rows_work() is False
