"""Importing annotators' values (docs/design/criterion.md §13.2): CSV or XLSX in long format,
the whole file or nothing, each bad row named as a spreadsheet numbers it,
a re-import replacing that annotator's values with an audit row."""

import hashlib
import io

import openpyxl
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from criterion.models import Annotation, AnnotationImport
from surveys.models import Transcript
from tests.criterion.annotation_data import (
    HEADER,
    csv_bytes,
    packaged_codes,
    study_with_transcripts,
    xlsx_bytes,
)


@pytest.fixture
def codes(personas, study_a):
    study_with_transcripts(study_a)
    return sorted(packaged_codes(study_a))


def upload(client, study, data: bytes, name: str = "annotations.csv"):
    url = reverse("criterion:annotations", args=[study.slug])
    return client.post(url, {"file": SimpleUploadedFile(name, data)})


def stored(study) -> set[tuple]:
    return set(
        Annotation.objects.filter(imported_in__study=study).values_list(
            "transcript__code", "annotator", "measure", "value"
        )
    )


def test_csv_with_several_annotators_is_stored_with_one_audit_row_each(
    client_for, personas, study_a, codes
):
    rows = [
        (codes[0], "ann1", "factual_precision", "0.75"),
        (codes[1], "ann1", "citation_support", "1"),
        (codes[0], "ann2", "factual_precision", ".5"),
        (codes[0], "ann2", "detector:semantic_entropy", "-2.5e-1"),
    ]
    data = csv_bytes(rows)

    response = upload(client_for("coordinator_a"), study_a, data)

    assert response.status_code == 302
    assert stored(study_a) == {
        (codes[0], "ann1", "factual_precision", 0.75),
        (codes[1], "ann1", "citation_support", 1.0),
        (codes[0], "ann2", "factual_precision", 0.5),
        (codes[0], "ann2", "detector:semantic_entropy", -0.25),
    }
    audit = {a.annotator: a for a in AnnotationImport.objects.filter(study=study_a)}
    assert {name: (a.rows, a.replaced) for name, a in audit.items()} == {
        "ann1": (2, 0),
        "ann2": (2, 0),
    }
    assert audit["ann1"].file_sha256 == hashlib.sha256(data).hexdigest()
    assert audit["ann1"].file_name == "annotations.csv"
    assert audit["ann1"].imported_by == personas["coordinator_a"]


def test_xlsx_in_any_column_order_with_numbers_as_numbers(client_for, study_a, codes):
    header = ["value", "measure", "Transcript_ID", "annotator"]
    rows = [(0.25, "factual_precision", codes[2], "ann3"), (1, "detector:x_1", codes[2], "ann3")]

    response = upload(client_for("coordinator_a"), study_a, xlsx_bytes(rows, header), "round1.xlsx")

    assert response.status_code == 302
    assert stored(study_a) == {
        (codes[2], "ann3", "factual_precision", 0.25),
        (codes[2], "ann3", "detector:x_1", 1.0),
    }


def test_semicolon_csv_with_bom_and_lower_case_ids(client_for, study_a, codes):
    data = b"\xef\xbb\xbf" + csv_bytes(
        [(codes[0].lower(), "ann1", "citation_support", "0")], separator=";"
    )
    assert upload(client_for("coordinator_a"), study_a, data).status_code == 302
    assert stored(study_a) == {(codes[0], "ann1", "citation_support", 0.0)}


def test_reimport_replaces_that_annotators_values_and_audits_it(client_for, study_a, codes):
    client = client_for("coordinator_a")
    first = [
        (codes[0], "ann1", "factual_precision", "0.1"),
        (codes[1], "ann1", "factual_precision", "0.2"),
        (codes[2], "ann1", "citation_support", "0.3"),
        (codes[0], "ann2", "factual_precision", "0.9"),
    ]
    upload(client, study_a, csv_bytes(first))

    response = upload(
        client, study_a, csv_bytes([(codes[3], "ann1", "factual_precision", "0.4")]), "fix.csv"
    )

    assert response.status_code == 302
    assert stored(study_a) == {
        (codes[3], "ann1", "factual_precision", 0.4),
        (codes[0], "ann2", "factual_precision", 0.9),
    }
    latest = AnnotationImport.objects.filter(study=study_a, file_name="fix.csv").get()
    assert (latest.annotator, latest.rows, latest.replaced) == ("ann1", 1, 3)
    assert AnnotationImport.objects.filter(study=study_a).count() == 3

    page = client.get(reverse("criterion:annotations", args=[study_a.slug]))
    html = page.content.decode()
    assert "fix.csv" in html and latest.file_sha256 in html and "coord-a@example.org" in html


def bad_files(codes, other_study_code):
    """(file bytes, the file name, what the error must say) per reason a file is refused."""
    good = (codes[0], "ann1", "factual_precision", "0.5")

    def with_row(row, *, at=2):
        rows = [good, (codes[1], "ann1", "factual_precision", "0.5")]
        rows.insert(at - 2, row)
        return csv_bytes(rows)

    return {
        "unknown transcript": (
            with_row(("TXXXXXXXXXXX", "ann1", "citation_support", "0.5"), at=3),
            "row 3",
        ),
        "other study's transcript": (
            with_row((other_study_code, "a", "citation_support", "0.5"), at=4),
            "row 4",
        ),
        "out of range": (with_row((codes[2], "ann1", "factual_precision", "1.01")), "row 2"),
        "negative rate": (with_row((codes[2], "ann1", "citation_support", "-0.1"), at=3), "row 3"),
        "not a number": (with_row((codes[2], "ann1", "factual_precision", "high")), "row 2"),
        "decimal comma": (with_row((codes[2], "ann1", "factual_precision", "0,5")), "row 2"),
        "empty value": (with_row((codes[2], "ann1", "factual_precision", "")), "row 2"),
        "nan": (with_row((codes[2], "ann1", "detector:se", "NaN"), at=4), "row 4"),
        "inf": (with_row((codes[2], "ann1", "detector:se", "-inf")), "row 2"),
        "overflow": (with_row((codes[2], "ann1", "detector:se", "1e999")), "row 2"),
        "duplicate": (with_row((codes[0], "ann1", "factual_precision", "0.6"), at=4), "row 4"),
        "empty annotator": (with_row((codes[2], "  ", "factual_precision", "0.5"), at=3), "row 3"),
        "unknown measure": (with_row((codes[2], "ann1", "precision", "0.5")), "row 2"),
        "bad detector name": (
            with_row((codes[2], "ann1", "detector:Semantic-Entropy", "0.5")),
            "row 2",
        ),
        "NUL byte": (with_row((codes[2], "ann\x001", "factual_precision", "0.5"), at=3), "row 3"),
        "missing column": (csv_bytes([good[:3]], HEADER[:3]), "row 1"),
        "extra column": (csv_bytes([(*good, "x")], [*HEADER, "note"]), "note"),
        "not UTF-8": (
            csv_bytes([(codes[0], "Jürgen", "factual_precision", "0.5")], encoding="latin-1"),
            "line 2",
        ),
        "no values": (csv_bytes([]), "no values"),
    }


@pytest.mark.parametrize("reason", list(bad_files(["T"] * 4, "T")))
def test_a_bad_file_is_refused_whole_naming_the_row(client_for, study_a, study_b, codes, reason):
    client = client_for("coordinator_a")
    study_with_transcripts(study_b, sessions=1, tag="b")
    other = Transcript.objects.filter(interaction__session__study=study_b).first().code
    upload(client, study_a, csv_bytes([(codes[3], "ann1", "citation_support", "0.7")]))
    data, says = bad_files(codes, other)[reason]
    before = (stored(study_a), AnnotationImport.objects.count(), Annotation.objects.count())

    response = upload(client, study_a, data)

    assert response.status_code == 400
    html = response.content.decode()
    assert "nothing was stored" in html
    assert says.lower() in html.lower()
    after = (stored(study_a), AnnotationImport.objects.count(), Annotation.objects.count())
    assert after == before


def test_every_bad_row_is_listed(client_for, study_a, codes):
    rows = [
        (codes[0], "ann1", "factual_precision", "2"),
        (codes[1], "ann1", "factual_precision", "0.5"),
        (codes[1], "", "factual_precision", "0.5"),
        ("T0000000000Z", "ann1", "factual_precision", "0.5"),
    ]
    response = upload(client_for("coordinator_a"), study_a, xlsx_bytes(rows), "a.xlsx")

    html = response.content.decode()
    assert [n for n in (2, 3, 4, 5) if f"row {n}:" in html] == [2, 4, 5]
    assert Annotation.objects.count() == 0


def test_rows_are_numbered_as_the_spreadsheet_shows_them(client_for, study_a, codes):
    # given a table that starts in cell B3, below two blank rows and beside a blank column
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    for number, row in enumerate(
        [
            HEADER,
            (codes[0], "ann1", "factual_precision", 0.5),
            None,
            (codes[1], "ann1", "factual_precision", 7),
        ],
        start=3,
    ):
        for column, value in enumerate(row or [], start=2):
            sheet.cell(number, column, value)
    data = io.BytesIO()
    workbook.save(data)

    response = upload(client_for("coordinator_a"), study_a, data.getvalue(), "b3.xlsx")

    html = response.content.decode()
    assert "row 6:" in html and "row 4:" not in html
    assert Annotation.objects.count() == 0


def test_a_value_in_a_column_without_a_name_is_refused(client_for, study_a, codes):
    data = csv_bytes(
        [(codes[0], "ann1", "factual_precision", "0.5", "", "note")], [*HEADER, "", ""]
    )
    response = upload(client_for("coordinator_a"), study_a, data)
    assert response.status_code == 400
    assert "Row 2 has a value in column 6" in response.content.decode()
    assert Annotation.objects.count() == 0


@pytest.mark.parametrize("persona", ["experimenter_a", "outsider", "coordinator_b"])
def test_import_and_page_are_the_coordinators_only(client_for, study_a, codes, persona):
    client = client_for(persona)
    data = csv_bytes([(codes[0], "ann1", "factual_precision", "0.5")])

    assert upload(client, study_a, data).status_code == 404
    assert client.get(reverse("criterion:annotations", args=[study_a.slug])).status_code == 404
    assert Annotation.objects.count() == 0 and AnnotationImport.objects.count() == 0


def test_page_counts_and_its_query_count_do_not_grow(
    client_for, study_a, codes, django_assert_max_num_queries
):
    client = client_for("coordinator_a")
    url = reverse("criterion:annotations", args=[study_a.slug])
    with CaptureQueriesContext(connection) as few:
        client.get(url)
    empty_page = len(few)  # now: the next request clears the connection's query log
    assert empty_page <= 12
    rows = [(code, f"ann{n}", "factual_precision", "0.5") for code in codes for n in range(3)]
    rows += [(codes[0], "ann0", "detector:se", "3")]
    for n in range(3):
        upload(client, study_a, csv_bytes([r for r in rows if r[1] == f"ann{n}"]), f"{n}.csv")

    with django_assert_max_num_queries(empty_page):
        page = client.get(url)

    html = page.content.decode()
    assert f"{len(codes)} transcripts in the package" in html
    assert "3 annotators" in html
    assert (
        f"factual_precision: {len(codes)} transcripts annotated ({3 * len(codes)} values)" in html
    )
    assert "detector:se: 1 transcripts annotated (1 values)" in html
