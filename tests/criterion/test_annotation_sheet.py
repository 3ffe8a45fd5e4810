"""The annotation sheet (docs/design/criterion.md §13.2): downloaded with one row per
transcript of the package and the annotator's pseudonym, filled in by the
annotator, and read back by the import as its wide form, through the same checks
and the same all-or-nothing import as the long form."""

import csv
import io

import openpyxl
import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from criterion.models import Annotation, AnnotationImport
from tests.criterion.annotation_data import (
    csv_bytes,
    packaged_codes,
    pilot_codes,
    study_with_transcripts,
    xlsx_bytes,
)
from tests.criterion.test_annotation_import import stored, upload

SHEET_HEADER = ("transcript_id", "annotator", "factual_precision", "citation_support")


@pytest.fixture
def codes(personas, study_a):
    study_with_transcripts(study_a)
    return sorted(packaged_codes(study_a))


def download(client, study, fmt: str, annotator: str = "ann-7"):
    url = reverse("criterion:annotation_sheet", args=[study.slug])
    return client.get(url, {"format": fmt, "annotator": annotator})


def sheet_of(response, fmt: str) -> list[list]:
    """The downloaded sheet's rows, header first, as the annotator's program reads them."""
    if fmt == "csv":
        return [list(row) for row in csv.reader(io.StringIO(response.content.decode("utf-8-sig")))]
    workbook = openpyxl.load_workbook(io.BytesIO(response.content))
    return [list(row) for row in workbook.worksheets[0].iter_rows(values_only=True)]


def filled(response, fmt: str, values: dict[tuple[int, str], object]) -> bytes:
    """The downloaded file with `values` typed in at (data row index, column), the
    rest left as downloaded, saved by the program it was opened in."""
    rows = sheet_of(response, fmt)
    for (index, column), value in values.items():
        rows[index + 1][rows[0].index(column)] = value
    if fmt == "csv":
        out = io.StringIO(newline="")
        csv.writer(out).writerows(rows)
        return out.getvalue().encode("utf-8-sig")
    workbook = openpyxl.load_workbook(io.BytesIO(response.content))
    sheet = workbook.worksheets[0]
    for (index, column), value in values.items():
        sheet.cell(index + 2, rows[0].index(column) + 1, value)
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_the_sheet_has_a_row_per_packaged_transcript_and_empty_measures(
    client_for, study_a, codes, fmt
):
    response = download(client_for("coordinator_a"), study_a, fmt)

    assert response.status_code == 200
    assert response["Content-Disposition"].startswith(
        f'attachment; filename="{study_a.slug}-annotation-sheet-ann-7-'
    )
    header, *rows = sheet_of(response, fmt)
    assert tuple(header) == SHEET_HEADER
    assert [row[0] for row in rows] == codes and len(codes) > 4
    assert not {row[0] for row in rows} & pilot_codes(study_a)
    assert {row[1] for row in rows} == {"ann-7"}
    assert {cell for row in rows for cell in row[2:]} <= {"", None}


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_a_filled_sheet_is_imported_and_empty_cells_are_values_not_given(
    client_for, study_a, codes, fmt
):
    client = client_for("coordinator_a")
    sheet = download(client, study_a, fmt)
    typed = {
        (0, "factual_precision"): "0.75" if fmt == "csv" else 0.75,
        (0, "citation_support"): "1",
        (1, "factual_precision"): "0" if fmt == "csv" else 0,  # a zero is a value
        (3, "citation_support"): ".5",
    }

    response = upload(client, study_a, filled(sheet, fmt, typed), f"sheet.{fmt}")

    assert response.status_code == 302
    assert stored(study_a) == {
        (codes[0], "ann-7", "factual_precision", 0.75),
        (codes[0], "ann-7", "citation_support", 1.0),
        (codes[1], "ann-7", "factual_precision", 0.0),
        (codes[3], "ann-7", "citation_support", 0.5),
    }
    audit = AnnotationImport.objects.get(study=study_a)
    assert (audit.annotator, audit.rows, audit.file_name) == ("ann-7", 4, f"sheet.{fmt}")


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_the_sheet_asks_for_presentation_where_h3_is_registered_on_it(
    client_for, personas, study_a, codes, fmt
):
    from criterion.preregistration.services import save_version

    client = client_for("coordinator_a")
    assert "presentation" not in sheet_of(download(client, study_a, fmt), fmt)[0]
    save_version(study_a, {"h3_predictor": "presentation"}, personas["coordinator_a"])
    sheet = download(client, study_a, fmt)
    assert tuple(sheet_of(sheet, fmt)[0]) == (*SHEET_HEADER, "presentation")
    typed = {(0, "presentation"): "0.9" if fmt == "csv" else 0.9}

    response = upload(client, study_a, filled(sheet, fmt, typed), f"sheet.{fmt}")

    assert response.status_code == 302
    assert stored(study_a) == {(codes[0], "ann-7", "presentation", 0.9)}


def test_the_sheet_and_the_long_form_store_the_same_values(client_for, study_a, codes):
    client = client_for("coordinator_a")
    sheet = download(client, study_a, "csv", annotator="ann1")
    upload(client, study_a, filled(sheet, "csv", {(2, "citation_support"): "0.25"}))
    from_sheet = stored(study_a)

    upload(client, study_a, csv_bytes([(codes[2], "ann1", "citation_support", "0.25")]))

    assert stored(study_a) == from_sheet == {(codes[2], "ann1", "citation_support", 0.25)}
    assert AnnotationImport.objects.filter(study=study_a).count() == 2


def test_a_sheet_with_a_bad_cell_is_refused_whole_naming_row_and_column(client_for, study_a, codes):
    client = client_for("coordinator_a")
    upload(client, study_a, csv_bytes([(codes[3], "ann-7", "citation_support", "0.7")]))
    before = (stored(study_a), AnnotationImport.objects.count())
    sheet = download(client, study_a, "xlsx")
    typed = {
        (0, "factual_precision"): 0.5,
        (2, "citation_support"): 1.5,  # row 4 of the sheet
        (4, "factual_precision"): "high",  # row 6
        (5, "factual_precision"): 0.9,
    }

    response = upload(client, study_a, filled(sheet, "xlsx", typed), "sheet.xlsx")

    assert response.status_code == 400
    html = response.content.decode()
    assert "nothing was stored" in html
    assert "row 4, column citation_support: value 1.5 of citation_support is outside 0..1" in html
    assert "row 6, column factual_precision: value “high” is not a number" in html
    assert "row 2," not in html and "row 7," not in html
    assert (stored(study_a), AnnotationImport.objects.count()) == before


@pytest.mark.parametrize(
    ("language", "says"),
    [
        ("de", "Zeile 3, Spalte citation_support: der Wert 2 von citation_support liegt nicht"),
        ("fr", "ligne 3, colonne citation_support : la valeur 2 de citation_support est hors"),
    ],
)
def test_the_refusal_speaks_the_coordinators_language(client_for, study_a, codes, language, says):
    data = csv_bytes([(codes[0], "ann1", "", ""), (codes[1], "ann1", "", "2")], SHEET_HEADER)
    url = reverse("criterion:annotations", args=[study_a.slug])

    response = client_for("coordinator_a").post(
        url, {"file": SimpleUploadedFile("s.csv", data)}, HTTP_ACCEPT_LANGUAGE=language
    )

    assert response.status_code == 400
    assert says in response.content.decode()


def wide_bad_files(codes, other_study_code):
    """(sheet rows, header, what the refusal must say) per reason a sheet is refused."""
    header = list(SHEET_HEADER)

    def sheet(*rows):
        return [(codes[0], "ann1", "0.5", ""), *rows]

    return {
        "unknown transcript": (
            sheet(("TXXXXXXXXXXX", "ann1", "0.5", "0.5")),
            header,
            ["row 3, column transcript_id: transcript_id TXXXXXXXXXXX is not"],
        ),
        "other study's transcript": (
            sheet(("", "", "", ""), (other_study_code, "ann1", "", "0.5")),
            header,
            ["row 4, column transcript_id:"],
        ),
        "value without an annotator": (
            sheet((codes[1], "", "0.5", "0.5")),
            header,
            ["row 3, column annotator: annotator is empty"],
        ),
        "value without a transcript": (
            sheet(("", "ann1", "0.2", "")),
            header,
            ["row 3, column transcript_id: transcript_id is empty"],
        ),
        "negative rate": (
            sheet((codes[1], "ann1", "", "-0.1")),
            header,
            ["row 3, column citation_support:"],
        ),
        "decimal comma": (
            sheet((codes[1], "ann1", "0,5", "")),
            header,
            ["row 3, column factual_precision:", "decimal point"],
        ),
        "same transcript twice": (
            sheet((codes[0].lower(), "ann1", "0.7", "")),
            header,
            ["row 3, column factual_precision: ann1 already gave factual_precision"],
        ),
        "no annotator column": (
            [(codes[0], "0.5", "0.5")],
            ["transcript_id", "factual_precision", "citation_support"],
            ["Row 1 (the header)", "Missing: annotator"],
        ),
        "unknown column": (
            [(codes[0], "ann1", "0.5", "good")],
            ["transcript_id", "annotator", "factual_precision", "comment"],
            ["Row 1 (the header)", "Not accepted: comment"],
        ),
        "a value in a column without a name": (
            [(codes[0], "ann1", "0.5", "", "0.4")],
            [*SHEET_HEADER, ""],
            ["Row 2 has a value in column 5"],
        ),
        "nothing filled in": ([(codes[0], "ann1", "", "")], header, ["no values"]),
    }


@pytest.mark.parametrize("reason", list(wide_bad_files(["T"] * 4, "T")))
def test_a_bad_sheet_is_refused_whole(client_for, study_a, study_b, codes, reason):
    client = client_for("coordinator_a")
    study_with_transcripts(study_b, sessions=1, tag="b")
    other = sorted(packaged_codes(study_b))[0]
    upload(client, study_a, csv_bytes([(codes[3], "ann1", "citation_support", "0.7")]))
    rows, header, says = wide_bad_files(codes, other)[reason]
    before = (stored(study_a), AnnotationImport.objects.count(), Annotation.objects.count())

    response = upload(client, study_a, csv_bytes(rows, header))

    assert response.status_code == 400
    html = response.content.decode()
    assert "nothing was stored" in html
    assert [words for words in says if words not in html] == []
    assert html.count(says[0]) == 1  # a row's problem once, however many values it holds
    after = (stored(study_a), AnnotationImport.objects.count(), Annotation.objects.count())
    assert after == before


def test_a_sheet_holding_a_measure_and_value_column_is_read_as_the_long_form(
    client_for, study_a, codes
):
    data = xlsx_bytes(
        [(codes[0], "ann1", "factual_precision", 0.5, 0.5)],
        [*SHEET_HEADER[:2], "measure", "value", "citation_support"],
    )
    response = upload(client_for("coordinator_a"), study_a, data, "mixed.xlsx")
    assert response.status_code == 400
    assert "Not accepted: citation_support" in response.content.decode()


@pytest.mark.parametrize("annotator", ["", "=HYPERLINK(1)", "-1", "a;b", "x" * 41])
def test_a_pseudonym_that_would_not_come_back_as_typed_is_refused(
    client_for, study_a, codes, annotator
):
    response = download(client_for("coordinator_a"), study_a, "csv", annotator=annotator)

    assert response.status_code == 302
    assert response["Location"] == reverse("criterion:annotations", args=[study_a.slug])
    assert [str(m) for m in get_messages(response.wsgi_request)][0].startswith("Annotation sheet: ")


def test_an_xlsx_sheet_checks_the_rates_as_they_are_typed(client_for, study_a, codes):
    response = download(client_for("coordinator_a"), study_a, "xlsx")
    sheet = openpyxl.load_workbook(io.BytesIO(response.content)).worksheets[0]
    (check,) = sheet.data_validations.dataValidation
    assert (check.type, check.formula1, check.formula2) == ("decimal", "0", "1")
    assert str(check.sqref) == f"C2:D{len(codes) + 1}"


def test_the_page_offers_the_sheet(client_for, study_a, codes):
    page = client_for("coordinator_a").get(reverse("criterion:annotations", args=[study_a.slug]))
    html = page.content.decode()
    assert reverse("criterion:annotation_sheet", args=[study_a.slug]) in html
    assert 'name="annotator"' in html
    german = client_for("coordinator_a").get(
        reverse("criterion:annotations", args=[study_a.slug]), HTTP_ACCEPT_LANGUAGE="de"
    )
    assert "Tabelle als XLSX herunterladen" in german.content.decode()


@pytest.mark.parametrize("persona", ["experimenter_a", "outsider", "coordinator_b"])
def test_the_sheet_is_the_coordinators_only(client_for, study_a, codes, persona):
    assert download(client_for(persona), study_a, "csv").status_code == 404


def test_anonymous_is_sent_to_log_in_for_the_sheet(client_for, study_a, codes):
    response = download(client_for("anonymous"), study_a, "csv")
    assert response.status_code == 302 and "login" in response["Location"]
