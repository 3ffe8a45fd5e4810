"""The annotation sheet (docs/design/criterion.md §13.2): what an annotator fills in, one
row per transcript of the annotator package, read back by the import as its wide
form (files.py).

The columns are transcript_id, annotator, factual_precision and citation_support,
and presentation when the study's pre-registration tests H3 on it:
the package's transcript ids in its order, the annotator's pseudonym (asked for
when the sheet is downloaded) in every row, so that a row still says whose value
it holds after the sheet is sorted, cut or pasted into another, and the measures
empty. An empty measure cell comes back as a value not given, never as a zero.

The pseudonym is letters, digits, spaces, ".", "_" and "-", starting with a
letter or digit: a cell starting with = + - @ is a formula when a spreadsheet
opens the CSV, and quoting it as the exports do (§6.4) would change the name the
import reads back.
"""

from __future__ import annotations

import csv
import io
import re

from django.utils.translation import gettext as _
from openpyxl import Workbook
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.datavalidation import DataValidation

from criterion.annotations.package import package_transcripts
from criterion.models import H3Predictor, Measure, PreRegistration
from surveys.models import Study

SHEET_FORMATS = ("csv", "xlsx")
SHEET_HEADER = ("transcript_id", "annotator", "factual_precision", "citation_support")
SHEET_CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}
SHEET_TITLE = "Annotations"
ANNOTATOR = re.compile(r"[^\W_][\w .-]*")
# The exports' encoding: with the byte-order mark Excel reads accents right.
CSV_ENCODING = "utf-8-sig"


def sheet_header(study: Study) -> tuple[str, ...]:
    """The sheet's columns: the presentation measure only where the latest
    pre-registration tests H3 on it, so annotators are not asked for a measure
    no analysis reads."""
    latest = PreRegistration.objects.filter(study=study).order_by("-version").first()
    if latest is not None and latest.h3_predictor == H3Predictor.PRESENTATION:
        return (*SHEET_HEADER, Measure.PRESENTATION.value)
    return SHEET_HEADER


def sheet_rows(study: Study, header: tuple[str, ...], *, annotator: str) -> list[tuple]:
    """One row per transcript of the package, in its order; one query."""
    codes = package_transcripts(study).order_by("code").values_list("code", flat=True)
    return [(code, annotator) + (None,) * (len(header) - 2) for code in codes]


def sheet_csv(header: tuple[str, ...], rows: list[tuple]) -> bytes:
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode(CSV_ENCODING)


def sheet_xlsx(header: tuple[str, ...], rows: list[tuple]) -> bytes:
    """The sheet with a frozen header, and the rates checked as they are typed
    (the import checks them again: a spreadsheet's check can be pasted over)."""
    workbook = Workbook()
    sheet = workbook.worksheets[0]
    sheet.title = SHEET_TITLE
    sheet.append(header)
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    for row in rows:
        sheet.append(row)
    sheet.freeze_panes = "A2"
    for index, name in enumerate(header, start=1):
        sheet.column_dimensions[get_column_letter(index)].width = max(16, len(name) + 4)
    if rows:
        rate = DataValidation(
            type="decimal",
            operator="between",
            formula1="0",
            formula2="1",
            allow_blank=True,
            showErrorMessage=True,
            error=_("A rate from 0 to 1; leave the cell empty for a value not given."),
        )
        first, last = get_column_letter(3), get_column_letter(len(header))
        rate.add(f"{first}2:{last}{len(rows) + 1}")
        sheet.add_data_validation(rate)
    output = io.BytesIO()
    workbook.save(output)
    return output.getvalue()


def sheet_file(study: Study, fmt: str, *, annotator: str) -> bytes:
    header = sheet_header(study)
    rows = sheet_rows(study, header, annotator=annotator)
    return sheet_csv(header, rows) if fmt == "csv" else sheet_xlsx(header, rows)
