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
its worksheet writer's stream and `Workbook._add_sheet`), which is why
pyproject pins openpyxl to 3.1.x.
"""

import math
import re
from contextlib import suppress
from datetime import date
from pathlib import Path

from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter
from openpyxl.utils.datetime import to_excel
from openpyxl.worksheet._write_only import WriteOnlyWorksheet
from openpyxl.worksheet._writer import WorksheetWriter
from openpyxl.xml.constants import SHEET_MAIN_NS
from openpyxl.xml.functions import tostring

from exports.anonymize import looks_like_formula

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


class WorkbookSheet(WriteOnlyWorksheet):
    """A sheet of the workbook: a bold, frozen header row, then the rows. With
    column widths, its text wraps in those columns (the Codebook and About).

    Its rows wait in a file in `folder` until the workbook is saved: openpyxl
    would put them in the system's temporary folder, where a worker killed
    mid-export leaves them for good; the job's own folder is removed by the
    job's next run or by the stale-export sweep (exports.runner)."""

    def __init__(
        self, workbook, title: str, header: list[str], widths: dict | None = None, *, folder: Path
    ):
        super().__init__(parent=workbook, title=title)
        workbook._add_sheet(self)  # what Workbook.create_sheet does with the sheets it makes
        self._file = folder / f"sheet{len(workbook._sheets)}.xml"
        # The frame is written with the first row, so it is set up before it.
        self.freeze_panes = "A2"
        for letter, width in (widths or {}).items():
            self.column_dimensions[letter].width = width
        self._render = _RowMarkup(self, header, wrap=bool(widths))
        self.append(header)

    def discard(self) -> None:
        """Remove the sheet's temporary file: openpyxl does so when the workbook
        is saved, or when the interpreter exits, which a Celery worker's child
        process may never do normally. For an export that failed."""
        if self._writer is None:
            return
        with suppress(Exception):  # never hide the error that ended the export
            if self._rows is not None:
                self._rows.close()
            self._writer.close()
        with suppress(Exception):
            self._writer.cleanup()

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


class _RowMarkup:
    """Renders a row of values as openpyxl's SpreadsheetML, ASCII-encoded with
    character references, as openpyxl writes it."""

    def __init__(self, sheet: WorkbookSheet, header: list[str], wrap: bool):
        self.title = sheet.title
        self.columns = [get_column_letter(number) for number in range(1, len(header) + 1)]
        self.epoch = sheet.parent.epoch
        text = {"alignment": _WRAP} if wrap else {}
        self.header = f' s="{_style_id(sheet, font=Font(bold=True), **text)}"'
        self.text = f' s="{_style_id(sheet, **text)}"' if wrap else ""
        self.date = f' s="{_style_id(sheet, date(2000, 1, 1))}"'
        # Text a spreadsheet would run as a formula is stored as a text cell
        # with Excel's quote prefix: shown and kept as text even when edited (SPEC 5).
        self.quoted = f' s="{_style_id(sheet, quotePrefix=True, **text)}"'

    def __call__(self, values, number: int) -> bytes:
        if len(values) != len(self.columns):  # a bug, not data to drop or pad
            raise ValueError(
                f"row {number} of sheet {self.title!r} has {len(values)} values "
                f"for {len(self.columns)} columns"
            )
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
