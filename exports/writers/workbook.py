"""XLSX through openpyxl's write-only mode: rows go straight to disk, so memory
stays flat however many evaluations a study has. Every sheet renders its rows
itself (see sheetrows)."""

from pathlib import Path

from openpyxl import Workbook

from exports.about import about_fields, codebook_rows
from exports.columns import ABOUT, CODEBOOK
from exports.dataset_types import ExportDataset
from exports.progress import Progress
from exports.transcript_columns import SHEETS_WITH_TRANSCRIPTS
from exports.writers.base import Writer, row_values
from exports.writers.sheetrows import CELL_LIMIT, CUT_MARK, WorkbookSheet, discard_sheets

TABLES = tuple(sheet.key for sheet in SHEETS_WITH_TRANSCRIPTS)


def write_xlsx(dataset: ExportDataset, path: Path, progress: Progress) -> None:
    workbook = Workbook(write_only=True)
    try:
        _fill(workbook, dataset, progress, path.parent)
        workbook.save(path)
    except BaseException:
        discard_sheets(workbook)
        raise


def _fill(workbook: Workbook, dataset: ExportDataset, progress: Progress, folder: Path) -> None:
    tables = dataset.present(TABLES)
    # Sheets are created before any row is written, so they keep workbook order.
    data_sheets = [
        (WorkbookSheet(workbook, t.sheet.title, t.keys, folder=folder), t) for t in tables
    ]
    codebook = WorkbookSheet(
        workbook,
        CODEBOOK.title,
        [c.key for c in CODEBOOK.columns],
        {"A": 22, "B": 24, "C": 70, "D": 10, "E": 70},
        folder=folder,
    )
    about = WorkbookSheet(
        workbook, ABOUT.title, [c.key for c in ABOUT.columns], {"A": 28, "B": 100}, folder=folder
    )
    for sheet, table in data_sheets:
        for row in row_values(table):
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


WRITER = Writer(write_xlsx, TABLES)
