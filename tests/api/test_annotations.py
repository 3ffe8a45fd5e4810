"""Annotation files through the API (docs/design/api.md §16.4, the round trip of
docs/design/criterion.md §13.2): imported by the page's form and service, the
whole file or nothing, each refused row named; coordinators only."""

import hashlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from audit.models import AuditEntry
from criterion.annotations.files import MAX_FILE_BYTES
from criterion.models import Annotation, AnnotationImport
from tests.api.conftest import READ
from tests.criterion.annotation_data import (
    csv_bytes,
    packaged_codes,
    study_with_transcripts,
    xlsx_bytes,
)
from tests.criterion.test_annotation_sheet import SHEET_HEADER

URL = "/api/v1/studies/study-a/annotations/"


@pytest.fixture
def codes(personas, study_a):
    study_with_transcripts(study_a)
    return sorted(packaged_codes(study_a))


def upload(api, data: bytes, name: str = "annotations.csv", url: str = URL):
    return api.post(url, {"file": SimpleUploadedFile(name, data)})


def stored() -> set[tuple]:
    return set(Annotation.objects.values_list("transcript__code", "annotator", "measure", "value"))


def counts() -> tuple[int, int]:
    return Annotation.objects.count(), AnnotationImport.objects.count()


def test_a_file_of_two_annotators_is_imported_as_the_page_imports_it(
    api_as, personas, study_a, codes
):
    # Given a CSV holding two annotators' values
    data = csv_bytes(
        [
            (codes[0], "ann1", "factual_precision", "0.75"),
            (codes[1], "ann1", "citation_support", "1"),
            (codes[0], "ann2", "detector:semantic_entropy", "-0.25"),
        ]
    )
    api = api_as("coordinator_a", [study_a])
    before = AuditEntry.objects.count()

    # When a coordinator imports it
    response = upload(api, data, "round1.csv")

    # Then every value is stored, one import per annotator by the token's owner
    assert response.status_code == 201, response.content
    assert stored() == {
        (codes[0], "ann1", "factual_precision", 0.75),
        (codes[1], "ann1", "citation_support", 1.0),
        (codes[0], "ann2", "detector:semantic_entropy", -0.25),
    }
    imports = AnnotationImport.objects.filter(study=study_a)
    assert {i.imported_by for i in imports} == {personas["coordinator_a"]}
    sha256 = hashlib.sha256(data).hexdigest()
    answered = {row["annotator"]: row for row in response.json()}
    assert {name: row["values"] for name, row in answered.items()} == {"ann1": 2, "ann2": 1}
    assert {row["file_name"] for row in answered.values()} == {"round1.csv"}
    assert {row["file_sha256"] for row in answered.values()} == {sha256}
    assert {row["id"] for row in answered.values()} == {i.pk for i in imports}
    assert all(row["imported_at"] for row in answered.values())
    # And the service's audit row is written once, beside the call's
    kinds = list(AuditEntry.objects.order_by("pk")[before:].values_list("kind", flat=True))
    assert sorted(kinds) == sorted(
        [AuditEntry.Kind.ANNOTATIONS_IMPORTED, AuditEntry.Kind.API_TOKEN_USED]
    )


def test_an_annotation_sheet_in_xlsx_is_read_too(api_as, study_a, codes):
    data = xlsx_bytes([(codes[2], "ann3", 0.5, None)], list(SHEET_HEADER))

    response = upload(api_as("coordinator_a", [study_a]), data, "sheet.xlsx")

    assert response.status_code == 201, response.content
    assert stored() == {(codes[2], "ann3", "factual_precision", 0.5)}


def test_the_imports_are_listed_newest_first(api_as, study_a, codes):
    api = api_as("coordinator_a", [study_a])
    upload(api, csv_bytes([(codes[0], "ann1", "factual_precision", "0.1")]), "first.csv")
    upload(api, csv_bytes([(codes[0], "ann1", "factual_precision", "0.2")]), "again.csv")

    response = api.get(URL)

    assert response.status_code == 200
    rows = [(row["file_name"], row["values"], row["replaced"]) for row in response.json()]
    assert rows == [("again.csv", 1, 1), ("first.csv", 1, 0)]


def test_a_bad_file_is_refused_whole_naming_each_row(api_as, study_a, codes):
    # Given an earlier import, and a file with two bad rows among good ones
    api = api_as("coordinator_a", [study_a])
    upload(api, csv_bytes([(codes[0], "ann1", "factual_precision", "0.5")]))
    before = counts()
    data = csv_bytes(
        [
            (codes[1], "ann1", "factual_precision", "0.5"),
            (codes[2], "ann1", "factual_precision", "1.01"),
            (codes[3], "ann1", "citation_support", "0.2"),
            ("TXXXXXXXXXXX", "ann1", "citation_support", "0.2"),
        ]
    )

    # When it is imported
    response = upload(api, data)

    # Then nothing changed, and the problem names rows 3 and 5 in the page's words
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["detail"] == "The file was refused; nothing was stored."
    assert [(e["row"], e["column"]) for e in problem["errors"]] == [(3, None), (5, None)]
    assert problem["errors"][1]["message"] == (
        "transcript_id TXXXXXXXXXXX is not a transcript of this study"
    )
    assert counts() == before


def test_a_sheet_names_the_column_of_the_bad_cell(api_as, study_a, codes):
    data = csv_bytes([(codes[0], "ann1", "0.5", ""), (codes[1], "ann1", "", "-0.1")], SHEET_HEADER)

    response = upload(api_as("coordinator_a", [study_a]), data)

    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert (error["row"], error["column"]) == (3, "citation_support")
    assert counts() == (0, 0)


def test_a_file_that_is_no_table_is_refused_in_the_detail(api_as, study_a, codes):
    response = upload(api_as("coordinator_a", [study_a]), csv_bytes([]))

    assert response.status_code == 400
    assert response.json()["detail"] == "The file has a header but no values."
    assert "errors" not in response.json()
    assert counts() == (0, 0)


def test_no_file_and_too_large_a_file_are_refused_by_the_pages_form(api_as, study_a, codes):
    api = api_as("coordinator_a", [study_a])

    missing = api.post(URL, {})
    too_large = upload(api, b"x" * (MAX_FILE_BYTES + 1))

    assert missing.status_code == too_large.status_code == 400
    assert missing.json()["errors"] == [{"field": "file", "message": "This field is required."}]
    assert too_large.json()["errors"] == [
        {"field": "file", "message": "The file is larger than 10 MB; nothing was stored."}
    ]
    assert counts() == (0, 0)


def test_a_read_only_token_lists_but_imports_nothing(api_as, study_a, codes):
    api = api_as("coordinator_a", [study_a], access=READ)

    assert api.get(URL).status_code == 200
    response = upload(api, csv_bytes([(codes[0], "ann1", "factual_precision", "0.5")]))

    assert response.status_code == 403
    assert counts() == (0, 0)


@pytest.mark.parametrize("persona", ["experimenter_a", "coordinator_b"])
def test_only_the_studys_coordinators(api_as, study_a, study_b, codes, persona):
    api = api_as(persona, [study_a, study_b])

    assert api.get(URL).status_code == 404
    response = upload(api, csv_bytes([(codes[0], "ann1", "factual_precision", "0.5")]))

    assert response.status_code == 404
    assert counts() == (0, 0)


def test_another_studys_transcripts_are_unknown_here(api_as, study_a, study_b, codes):
    # Given coordinator B's token and a file naming study A's transcripts
    api = api_as("coordinator_b", [study_b])
    data = csv_bytes([(codes[0], "ann1", "factual_precision", "0.5")])

    response = upload(api, data, url="/api/v1/studies/study-b/annotations/")

    # Then study B has no such transcript, and study A's are not touched
    assert response.status_code == 400
    assert "is not a transcript of this study" in response.json()["errors"][0]["message"]
    assert counts() == (0, 0)
