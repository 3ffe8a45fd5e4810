"""A study with transcripts for the annotation tests (docs/design/criterion.md §13.2), and
annotation files written as a coordinator would save them."""

import csv
import io

import openpyxl

from surveys.models import Transcript
from tests.exports.factories import StudyData, make_experimenters, populate_study
from tests.exports.transcript_factory import add_transcripts

HEADER = ["transcript_id", "annotator", "measure", "value"]


def study_with_transcripts(study, *, sessions: int = 4, seed: int = 3, tag: str = "") -> StudyData:
    """Complete sessions plus a pilot, a withdrawal, a screen-out and an abandoned
    session; a transcript for every block but the second of every fourth session."""
    experimenters = make_experimenters(study, tag=tag) if tag else None
    data = populate_study(study, sessions=sessions, seed=seed, experimenters=experimenters)
    add_transcripts(study)
    return data


def packaged_codes(study) -> set[str]:
    """The transcripts the package must hold: non-pilot sessions that left data."""
    return set(
        Transcript.objects.filter(
            interaction__session__study=study, interaction__session__is_pilot=False
        ).values_list("code", flat=True)
    )


def pilot_codes(study) -> set[str]:
    return set(
        Transcript.objects.filter(
            interaction__session__study=study, interaction__session__is_pilot=True
        ).values_list("code", flat=True)
    )


def csv_bytes(rows, header=HEADER, *, separator=",", encoding="utf-8") -> bytes:
    out = io.StringIO(newline="")
    writer = csv.writer(out, delimiter=separator)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode(encoding)


def xlsx_bytes(rows, header=HEADER) -> bytes:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(header)
    for row in rows:
        sheet.append(list(row))
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()
