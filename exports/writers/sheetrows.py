"""The sheets of the workbook: openpyxl write-only worksheets whose rows are
rendered as text.

openpyxl makes a cell object and an XML element for every value it writes,
which costs 5-15 µs a cell depending on the machine; a study of 50,000
evaluations is 4.5 million cells, so that alone took most of a minute. The
data sheets hold only a few kinds of value (whole numbers, decimals, text,
dates), so their rows are rendered here as the same markup openpyxl writes for
those values: tests compare the two byte for byte, for every kind. openpyxl
still writes everything else: the workbook, its styles, each sheet's frame
(the frozen header row, column widths, margins).

This leans on three openpyxl internals (the write-only sheet's row generator,
its worksheet writer's stream and `Workbook._add_sheet`). So that an openpyxl
release without them cannot break an export, the module checks at import
(RENDERED_ROWS) that they are there and still make the file openpyxl's public
write-only cells make; if not, every sheet is written through those cells:
slower, with openpyxl keeping its sheet files in the system's temporary folder.
"""

import io
import logging
import math
import re
import zipfile
from contextlib import suppress
from datetime import date
from pathlib import Path
from tempfile import TemporaryDirectory

import openpyxl
from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter

from shs_platform.spreadsheet_cells import looks_like_formula

try:  # what the rendered rows build on, beyond openpyxl's public interface
    from openpyxl.utils.datetime import to_excel
    from openpyxl.worksheet._write_only import WriteOnlyWorksheet
    from openpyxl.worksheet._writer import WorksheetWriter
    from openpyxl.xml.constants import SHEET_MAIN_NS
    from openpyxl.xml.functions import tostring
except ImportError:  # gone from this openpyxl: its public cells write every sheet
    WriteOnlyWorksheet = WorksheetWriter = object

logger = logging.getLogger(__name__)

# Characters XML 1.0 cannot carry at all (control characters pasted into free
# text, stray surrogates, the two non-characters): Excel refuses a file that
# holds one, so they are dropped from the exported copy of the text.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


# Excel holds at most 32,767 characters (UTF-16 code units) in a cell and calls a
# file with a longer one damaged. Longer text (a block's prompts, joined) is cut
# there, visibly; the CSV and JSON exports hold it whole (About sheet).
CELL_LIMIT = 32_767
CUT_MARK = " [… cut]"


def cell_text(text: str) -> str:
    """Text as a cell can hold it: without the characters XML forbids, and cut,
    with a mark, at Excel's limit."""
    text = _NOT_XML.sub("", text)
    if len(text) <= CELL_LIMIT // 2:  # within the limit even if every character needs two units
        return text
    units = text.encode("utf-16-le")
    if len(units) <= 2 * CELL_LIMIT:
        return text
    room = 2 * (CELL_LIMIT - len(CUT_MARK))
    return units[:room].decode("utf-16-le", "ignore") + CUT_MARK


class WorkbookSheet:
    """A sheet of the workbook: a bold, frozen header row, then the rows. With
    column widths, its text wraps in those columns (the Codebook and About).

    `rendered` says how its rows are written (RENDERED_ROWS unless given)."""

    def __init__(
        self,
        workbook: Workbook,
        title: str,
        header: list[str],
        widths: dict | None = None,
        *,
        folder: Path,
        rendered: bool | None = None,
    ):
        wrap = bool(widths)
        if RENDERED_ROWS if rendered is None else rendered:
            self.worksheet = _RenderedSheet(workbook, title, header, wrap, folder)
            self._cells = None
        else:
            self.worksheet = workbook.create_sheet(title)
            self._cells = _RowCells(self.worksheet, header, wrap)
        self.rows = 0
        # The frame is written with the first row, so it is set up before it.
        self.worksheet.freeze_panes = "A2"
        for letter, width in (widths or {}).items():
            self.worksheet.column_dimensions[letter].width = width
        self.append(header)

    def append(self, values) -> None:
        if self._cells is None:
            self.worksheet.append(values)
        else:
            self.worksheet.append(self._cells(values, self.rows + 1))
        self.rows += 1


def discard_sheets(workbook: Workbook) -> None:
    """Remove the sheets' temporary files, for an export that failed: openpyxl
    does so when the workbook is saved, or when the interpreter exits, which a
    Celery worker's child process may never do normally."""
    for sheet in workbook.worksheets:
        with suppress(Exception):  # never hide the error that ended the export
            if sheet._writer is None:
                continue
            if sheet._rows is not None:
                sheet._rows.close()
            sheet._writer.close()
        with suppress(Exception):
            sheet._writer.cleanup()


class _RenderedSheet(WriteOnlyWorksheet):
    """A write-only sheet whose rows arrive as values and are written as
    rendered markup (_RowMarkup).

    Its rows wait in a file in `folder` until the workbook is saved: openpyxl
    would put them in the system's temporary folder, where a worker killed
    mid-export leaves them for good; the job's own folder is removed by the
    job's next run or by the stale-export sweep (exports.runner)."""

    def __init__(self, workbook: Workbook, title: str, header: list, wrap: bool, folder: Path):
        super().__init__(parent=workbook, title=title)
        workbook._add_sheet(self)  # what Workbook.create_sheet does with the sheets it makes
        self._file = folder / f"sheet{len(workbook._sheets)}.xml"
        self._render = _RowMarkup(self, header, wrap)

    def _get_writer(self):
        if self._writer is None:
            self._writer = _SheetFile(self, out=str(self._file))
            self._writer.write_top()

    def _write_rows(self):
        # Replaces openpyxl's generator of the same name, which turns each
        # value into a cell object: rows arrive through append() as before.
        out = self._writer.xf.send(True)
        out.write(b"<sheetData>")
        number = 1
        try:
            while True:
                out.write(self._render((yield), number))
                number += 1
        except GeneratorExit:
            pass
        finally:
            # Also after a refused row, so that the sheet's XML stays well-formed.
            out.write(b"</sheetData>")
            self._writer.xf.send(None)


class _SheetFile(WorksheetWriter):
    """openpyxl's worksheet writer on a plain file instead of lxml's xmlfile,
    so that finished row markup can go into it: the frame's elements are
    serialised by openpyxl's own `tostring`, exactly as xmlfile writes them."""

    def get_stream(self):
        with open(self.out, "wb") as out:
            out.write(b'<worksheet xmlns="%s">' % SHEET_MAIN_NS.encode())
            try:
                while True:
                    element = yield
                    if element is True:
                        yield out
                    elif element is not None:
                        out.write(tostring(element))
            except GeneratorExit:
                pass
            out.write(b"</worksheet>")

    def cleanup(self):
        # openpyxl's own also unregisters the file from its exit-time sweep of
        # the temporary folder, which never knew this one.
        Path(self.out).unlink(missing_ok=True)


_WRAP = Alignment(wrap_text=True, vertical="top")


def _style_id(sheet, value=None, **style) -> int:
    """The workbook's number for a cell style (registering it if new)."""
    cell = WriteOnlyCell(sheet, value)
    for name, setting in style.items():
        setattr(cell, name, setting)
    return cell.style_id


class _RowFormat:
    """What the rows of a sheet share, however they are written: the columns,
    and the cell styles, registered with the workbook in this order (styles are
    numbered by first use, so both ways of writing number them alike)."""

    def __init__(self, sheet, header: list[str], wrap: bool):
        self.title = sheet.title
        self.columns = [get_column_letter(number) for number in range(1, len(header) + 1)]
        text = {"alignment": _WRAP} if wrap else {}
        self.styles = {
            "header": {"font": Font(bold=True), **text},
            "text": text,
            # Text a spreadsheet would run as a formula is stored as a text cell
            # with Excel's quote prefix: shown and kept as text even when edited
            # (docs/design/anonymisation.md §6.4).
            "quoted": {"quotePrefix": True, **text},
        }
        self.header = f' s="{_style_id(sheet, **self.styles["header"])}"'
        self.text = f' s="{_style_id(sheet, **text)}"' if wrap else ""
        self.date = f' s="{_style_id(sheet, date(2000, 1, 1))}"'
        self.quoted = f' s="{_style_id(sheet, **self.styles["quoted"])}"'

    def check(self, values, number: int) -> None:
        if len(values) != len(self.columns):  # a bug, not data to drop or pad
            raise ValueError(
                f"row {number} of sheet {self.title!r} has {len(values)} values "
                f"for {len(self.columns)} columns"
            )


class _RowCells(_RowFormat):
    """A row as openpyxl's public write-only cells (when RENDERED_ROWS is off):
    the same values, types and styles as _RowMarkup writes."""

    def __init__(self, sheet, header: list[str], wrap: bool):
        super().__init__(sheet, header, wrap)
        self.sheet = sheet

    def __call__(self, values, number: int) -> list:
        self.check(values, number)
        text_style = self.styles["header" if number == 1 else "text"]
        return [
            self._cell(column, value, text_style)
            for column, value in zip(self.columns, values, strict=True)
        ]

    def _cell(self, column: str, value, text_style: dict):
        kind = value.__class__
        if kind is str:
            return self._text(value, text_style)
        if value is None or kind in (int, float, bool, date):
            return value  # openpyxl's own cell for it (a date with its number format)
        raise TypeError(f"no spreadsheet cell for {kind.__name__} in column {column}")

    def _text(self, text: str, style: dict):
        text = cell_text(text)
        if not text:
            return None
        cell = WriteOnlyCell(self.sheet, text)
        cell.data_type = "s"  # text, whatever openpyxl would guess from it (=..., #N/A)
        if looks_like_formula(text):
            style = self.styles["quoted"]
        for name, setting in style.items():
            setattr(cell, name, setting)
        return cell


class _RowMarkup(_RowFormat):
    """Renders a row of values as openpyxl's SpreadsheetML, ASCII-encoded with
    character references, as openpyxl writes it."""

    def __init__(self, sheet, header: list[str], wrap: bool):
        super().__init__(sheet, header, wrap)
        self.epoch = sheet.parent.epoch

    def __call__(self, values, number: int) -> bytes:
        self.check(values, number)
        row = str(number)
        text_style = self.header if number == 1 else self.text
        parts = [f'<row r="{row}">']
        add = parts.append
        for column, value in zip(self.columns, values, strict=True):
            kind = value.__class__
            if kind is int or kind is float:
                add(f'<c r="{column}{row}" t="n"><v>{_number(value)}</v></c>')
            elif kind is str:
                if value:
                    add(self._text(column + row, value, text_style))
            elif value is None:
                continue
            elif kind is date:
                serial = _number(to_excel(value, self.epoch))
                add(f'<c r="{column}{row}"{self.date} t="n"><v>{serial}</v></c>')
            elif kind is bool:
                add(f'<c r="{column}{row}" t="b"><v>{int(value)}</v></c>')
            else:
                raise TypeError(f"no spreadsheet cell for {kind.__name__} in column {column}")
        add("</row>")
        return "".join(parts).encode("ascii", "xmlcharrefreplace")

    def _text(self, cell: str, text: str, style: str) -> str:
        text = cell_text(text)
        if not text:
            return ""
        if looks_like_formula(text):
            style = self.quoted
        space = ' xml:space="preserve"' if text != text.strip() else ""
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        text = text.replace("\r", "&#13;")
        return f'<c r="{cell}"{style} t="inlineStr"><is><t{space}>{text}</t></is></c>'


def _number(value: int | float) -> str:
    # openpyxl's format for numbers; it writes an empty value for NaN and infinity.
    if value.__class__ is float and not math.isfinite(value):
        return ""
    return f"{value:.16g}"


# One row of every kind of value a sheet holds, with the awkward cases the
# rendering handles itself (escaping, spaces, formulas, error-like text).
_PROBE_ROW = [
    *(1, -3, 2.5, 0.1 + 0.2, -0.0, 12345678901234567890, float("nan"), True, None),
    *(date(2026, 11, 30), "ChatGPT", "", "a & <b> > 'c'", " spaced ", "Grüße 😀"),
    *("line\r\nbreak\ttab", "=1+1", "-0.25", "#N/A", "bell\x07", "\xa0\u2028"),
]


def _probe_file(folder: Path, *, rendered: bool) -> dict[str, bytes]:
    """The parts of a small workbook (a data sheet, a wrapping one) written one way."""
    workbook = Workbook(write_only=True)
    header = [f"column_{number}" for number in range(1, len(_PROBE_ROW) + 1)]
    for title, widths in (("Data", None), ("About", {"A": 28, "B": 100})):
        sheet = WorkbookSheet(workbook, title, header, widths, folder=folder, rendered=rendered)
        sheet.append(_PROBE_ROW)
        sheet.append(list(reversed(_PROBE_ROW)))
    out = io.BytesIO()
    workbook.save(out)
    with zipfile.ZipFile(out) as archive:
        # docProps/core.xml carries the time of saving.
        return {n: archive.read(n) for n in archive.namelist() if n != "docProps/core.xml"}


def rendered_rows_work() -> bool:
    """Whether this openpyxl has the internals the rendered rows need and they
    make, byte for byte, the file its public write-only cells make."""
    try:
        with TemporaryDirectory(prefix="shs-sheetrows-") as name:
            folder = Path(name)
            same = _probe_file(folder, rendered=True) == _probe_file(folder, rendered=False)
    except Exception:
        logger.warning(
            "openpyxl %s lacks what sheetrows relies on", openpyxl.__version__, exc_info=True
        )
        return False
    if not same:
        logger.warning("openpyxl %s writes cells unlike sheetrows's markup", openpyxl.__version__)
    return same


# Checked once, when the writers are first imported: False means every sheet is
# written through openpyxl's public cells (slower; see the module's docstring).
RENDERED_ROWS = rendered_rows_work()
