"""Importing an annotation file into a study (docs/design/criterion.md §13.2), in the long
form or as the annotation sheet (files.py reads both into the same values): the whole
file or nothing, and for each annotator in it, everything imported earlier
for that annotator in the study replaced in the same transaction, with an
audit row saying how many values were replaced."""

from __future__ import annotations

import hashlib

from django.db import transaction
from django.db.models import Count
from django.utils.translation import gettext as _

from audit.log import record
from audit.models import AuditEntry
from criterion.annotations.files import (
    AnnotationFileError,
    AnnotationValue,
    RowProblem,
    in_row_order,
    parse_values,
    read_rows,
)
from criterion.models import Annotation, AnnotationImport
from surveys.models import Study, Transcript

FILE_NAME_LENGTH = AnnotationImport._meta.get_field("file_name").max_length


class AnnotationImportRefused(Exception):
    """Nothing was stored: the file as a whole (`message`) or these rows (`problems`)."""

    def __init__(self, message: str = "", problems: list[RowProblem] | None = None):
        self.message = message
        self.problems = problems or []
        super().__init__(message or f"{len(self.problems)} rows refused")


def annotations_import(
    *, study: Study, data: bytes, file_name: str, user
) -> list[AnnotationImport]:
    """Store a file's values, one AnnotationImport per annotator in it, or raise
    AnnotationImportRefused and store nothing."""
    try:
        rows = read_rows(data, file_name)
    except AnnotationFileError as error:
        raise AnnotationImportRefused(str(error)) from None
    if not rows:
        raise AnnotationImportRefused(_("The file has a header but no values."))
    values, problems = parse_values(rows)
    transcripts = dict(
        Transcript.objects.filter(
            interaction__session__study=study, code__in={v.transcript_id for v in values}
        ).values_list("code", "pk")
    )
    problems += [_unknown(value) for value in values if value.transcript_id not in transcripts]
    if problems:
        raise AnnotationImportRefused(problems=in_row_order(problems))
    return _store(study, values, transcripts, file_name, hashlib.sha256(data).hexdigest(), user)


def _unknown(value: AnnotationValue) -> RowProblem:
    # Another study's transcript gets the same answer as a mistyped one: the
    # file must not tell a coordinator what exists outside their studies.
    return RowProblem(
        value.row,
        _("transcript_id %(id)s is not a transcript of this study") % {"id": value.transcript_id},
        "transcript_id" if value.column else "",
    )


@transaction.atomic
def _store(study, values, transcripts, file_name, sha256, user) -> list[AnnotationImport]:
    # One import of a study at a time: two at once for the same annotator
    # would each replace the values the other is storing.
    Study.objects.select_for_update().filter(pk=study.pk).first()
    annotators = sorted({value.annotator for value in values})
    earlier = Annotation.objects.filter(imported_in__study=study, annotator__in=annotators)
    replaced = dict(
        earlier.order_by()
        .values_list("annotator")
        .annotate(n=Count("pk"))
        .values_list("annotator", "n")
    )
    earlier.delete()
    imports = AnnotationImport.objects.bulk_create(
        [
            AnnotationImport(
                study=study,
                annotator=annotator,
                file_name=file_name[:FILE_NAME_LENGTH],
                file_sha256=sha256,
                rows=sum(1 for value in values if value.annotator == annotator),
                replaced=replaced.get(annotator, 0),
                imported_by=user,
            )
            for annotator in annotators
        ]
    )
    import_of = {record.annotator: record for record in imports}
    Annotation.objects.bulk_create(
        [
            Annotation(
                transcript_id=transcripts[value.transcript_id],
                imported_in=import_of[value.annotator],
                annotator=value.annotator,
                measure=value.measure,
                value=value.value,
            )
            for value in values
        ],
        batch_size=2000,
    )
    # One row for the file, whatever the number of annotators in it (their
    # imports follow the first one named).
    record(
        AuditEntry.Kind.ANNOTATIONS_IMPORTED,
        actor=user,
        study_id=study.pk,
        target=f"annotation import {imports[0].pk}",
        details={
            "annotators": len(imports),
            "values": len(values),
            "replaced": sum(replaced.values()),
            "sha256": sha256,
        },
    )
    return imports
