"""XLSX through openpyxl's write-only mode: rows go straight to disk, so memory
stays flat however many evaluations a study has. The data sheets render their
rows themselves (see sheetrows); the Codebook and About sheets, a few hundred
cells of wrapped text, go through openpyxl's cells."""

from contextlib import suppress
from pathlib import Path

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Alignment, Font

from exports.about import about_fields, codebook_rows
from exports.anonymize import looks_like_formula
from exports.columns import ABOUT, CODEBOOK, DATA_SHEETS
from exports.dataset import ExportDataset
from exports.progress import Progress
from exports.writers import Writer
from exports.writers.sheetrows import CELL_LIMIT, CUT_MARK, DataSheet, cell_text

TABLES = tuple(sheet.key for sheet in DATA_SHEETS)
_BOLD = Font(bold=True)
_WRAP = Alignment(wrap_text=True, vertical="top")


class _TextSheet:
    """A sheet of wrapped text in fixed-width columns, under a bold header."""

    def __init__(self, workbook: Workbook, title: str, header: list[str], widths: dict):
        self.sheet = workbook.create_sheet(title)
        self.sheet.freeze_panes = "A2"
        for letter, width in widths.items():
            self.sheet.column_dimensions[letter].width = width
        self.sheet.append([self._cell(text, _BOLD) for text in header])

    def append(self, row) -> None:
        cells = []
        for value in row:
            if isinstance(value, str):
                value = self._cell(value) if value else None  # no empty text cells
            cells.append(value)
        self.sheet.append(cells)

    def _cell(self, value: str, font=None):
        cell = WriteOnlyCell(self.sheet, cell_text(value))
        cell.alignment = _WRAP
        if font is not None:
            cell.font = font
        if looks_like_formula(cell.value):
            # A study title is typed by a coordinator: shown as text, never run (SPEC 5).
            cell.data_type = "s"
            cell.quotePrefix = True
        return cell


def write_xlsx(dataset: ExportDataset, path: Path, progress: Progress) -> None:
    workbook = Workbook(write_only=True)
    try:
        _fill(workbook, dataset, progress)
        workbook.save(path)
    except BaseException:
        _remove_sheet_files(workbook)
        raise


def _fill(workbook: Workbook, dataset: ExportDataset, progress: Progress) -> None:
    tables = [dataset.table(key) for key in TABLES]
    # Sheets are created before any row is written, so they keep workbook order.
    data_sheets = [(DataSheet(workbook, t.sheet.title, t.keys), t) for t in tables]
    codebook = _TextSheet(
        workbook,
        CODEBOOK.title,
        [c.key for c in CODEBOOK.columns],
        {"A": 22, "B": 24, "C": 70, "D": 10, "E": 70},
    )
    about = _TextSheet(workbook, ABOUT.title, [c.key for c in ABOUT.columns], {"A": 28, "B": 100})
    for sheet, table in data_sheets:
        for row in table.rows():
            sheet.append(row)
            progress.advance()
    for row in codebook_rows([(t.sheet, t.columns) for t in tables]):
        codebook.append(row)
    for row in [*about_fields(dataset, "XLSX workbook"), LONG_TEXT]:
        about.append(row)


LONG_TEXT = (
    "Long text",
    f"A spreadsheet cell holds at most {CELL_LIMIT:,} characters: longer text is cut there "
    f"and ends with “{CUT_MARK.strip()}”. The CSV and JSON exports hold it whole.",
)


def _remove_sheet_files(workbook: Workbook) -> None:
    """openpyxl keeps each sheet in a temporary file until the workbook is saved,
    and removes leftovers only when the interpreter exits, which a Celery worker's
    child process may never do normally: an export that fails removes them here."""
    for sheet in workbook.worksheets:
        writer = sheet._writer
        if writer is None:
            continue
        with suppress(Exception):  # never hide the error that ended the export
            if sheet._rows is not None:
                sheet._rows.close()
            writer.close()
        with suppress(Exception):
            writer.cleanup()


WRITER = Writer(write_xlsx, TABLES)
