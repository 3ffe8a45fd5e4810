"""XLSX through openpyxl's write-only mode: rows go straight to disk, so memory
stays flat however many evaluations a study has."""

from pathlib import Path

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Alignment, Font

from exports.about import about_fields, codebook_rows
from exports.anonymize import looks_like_formula
from exports.columns import ABOUT, CODEBOOK, DATA_SHEETS
from exports.dataset import ExportDataset
from exports.progress import Progress
from exports.writers import Writer

TABLES = tuple(sheet.key for sheet in DATA_SHEETS)
_BOLD = Font(bold=True)
_WRAP = Alignment(wrap_text=True, vertical="top")


class _SheetWriter:
    def __init__(self, workbook: Workbook, title: str, header: list[str], widths=None):
        self.sheet = workbook.create_sheet(title)
        self.sheet.freeze_panes = "A2"
        for letter, width in (widths or {}).items():
            self.sheet.column_dimensions[letter].width = width
        self.wrap = bool(widths)
        self.sheet.append([self._styled(text, _BOLD) for text in header])

    def _styled(self, value, font=None):
        cell = WriteOnlyCell(self.sheet, value)
        if font is not None:
            cell.font = font
        if self.wrap:
            cell.alignment = _WRAP
        return cell

    def append(self, row) -> None:
        # `__class__ is str` rather than isinstance: this runs for every cell of
        # the data sheets, and every text value comes from the database as str.
        self.sheet.append([self._text_cell(v) if v.__class__ is str else v for v in row])

    def _text_cell(self, text: str):
        if not text:
            return None  # an empty cell costs nothing; an empty string cell does
        if ILLEGAL_CHARACTERS_RE.search(text):
            # Control characters (pasted into free text) make the file unreadable to Excel.
            text = ILLEGAL_CHARACTERS_RE.sub("", text)
        formula = looks_like_formula(text)
        if not (formula or self.wrap):
            return text
        cell = self._styled(text)
        if formula:
            # A string cell with Excel's quote prefix: shown and kept as text, never
            # evaluated, even when someone edits the cell later (SPEC 5).
            cell.data_type = "s"
            cell.quotePrefix = True
        return cell


def write_xlsx(dataset: ExportDataset, path: Path, progress: Progress) -> None:
    workbook = Workbook(write_only=True)
    tables = [dataset.table(key) for key in TABLES]
    # Sheets are created before any row is written, so they keep workbook order.
    data_writers = [(_SheetWriter(workbook, t.sheet.title, t.keys), t) for t in tables]
    codebook = _SheetWriter(
        workbook,
        CODEBOOK.title,
        [c.key for c in CODEBOOK.columns],
        {"A": 22, "B": 24, "C": 70, "D": 10, "E": 70},
    )
    about = _SheetWriter(workbook, ABOUT.title, [c.key for c in ABOUT.columns], {"A": 28, "B": 100})
    for writer, table in data_writers:
        for row in table.rows():
            writer.append(row)
            progress.advance()
    for row in codebook_rows([(t.sheet, t.columns) for t in tables]):
        codebook.append(row)
    for row in about_fields(dataset, "XLSX workbook"):
        about.append(row)
    workbook.save(path)


WRITER = Writer(write_xlsx, TABLES)
