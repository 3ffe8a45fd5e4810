"""What an export contains: the study's data as anonymized rows, one lazy
table per sheet, read with a fixed number of queries however large the study.

Every table reads the database only when a writer iterates it, each with one
query streamed in chunks (exports.tables), so a CSV export never pays for the
workbook's other sheets and memory stays flat. All tables see the same moment:
sessions and evaluations are taken as of the time the export started, and a
participant's data is not deleted while an export reads the study
(surveys/erasure_lock.py, taken by the job runner).

Each row is a mapping made from its sheet's column list, so that a column is
defined in one place (exports.columns) and every writer checks the rows it is
given against the columns it writes (exports.writers.base).
"""

from collections.abc import Callable, Iterator
from datetime import datetime
from functools import partial

from django.db.models import Count
from django.utils import timezone

from exports import columns as cols
from exports.anonymize import (
    administrator_pseudonyms,
    participant_id_factory,
    session_order_key,
    session_order_salt,
)
from exports.companion_columns import study_columns
from exports.dataset_types import ExportDataset, Record, SessionKey, Table
from exports.tables import SheetRecords
from surveys.models import Study
from surveys.selection import exclusion_counts, included_sessions, submitted_evaluations
from surveys.steps import Step


def build_dataset(
    *, study: Study, include_pilot: bool, include_free_text: bool, as_of: datetime | None = None
) -> ExportDataset:
    """Index the study's sessions and prepare every table (rows are read later),
    as the study stood at `as_of` (now by default)."""
    as_of = as_of or timezone.now()
    pseudonyms = administrator_pseudonyms(study)
    sessions = included_sessions(study, as_of, include_pilot)
    new_participant_id = participant_id_factory()
    salt = session_order_salt()
    # Sessions are numbered, and every sheet lists them, in an order made up for
    # this export: numbered by start, two exports could be joined row by row.
    in_order = sorted(
        sessions.values_list("pk", "experimenter_id", "step", "consent__version"),
        key=lambda session: session_order_key(salt, session[0]),
    )
    index = {
        pk: SessionKey(
            session_id=number,
            participant_id=new_participant_id(),
            administrator=pseudonyms.get(experimenter_id, ""),
            complete=int(step == Step.COMPLETE),
            consent_version=consent_version or "",
        )
        for number, (pk, experimenter_id, step, consent_version) in enumerate(in_order, start=1)
    }
    dataset = ExportDataset(
        study=study,
        as_of=as_of,
        include_pilot=include_pilot,
        include_free_text=include_free_text,
        sessions=index,
        exclusions=exclusion_counts(study, as_of, include_pilot),
        instrument_versions=list(
            submitted_evaluations(study, as_of, include_pilot)
            .order_by("instrument_version")
            .values_list("instrument_version", flat=True)
            .distinct()
        ),
        order_salt=salt,
        consent_versions=list(
            sessions.filter(consent__isnull=False)
            .values_list("consent__language", "consent__version")
            .annotate(n=Count("pk"))
            .order_by("consent__language", "consent__version")
        ),
    )
    for sheet, count, records in SheetRecords(dataset, pseudonyms).all():
        columns = study_columns(sheet.active_columns(include_free_text), study)
        rows = partial(rows_by_column, columns, records)
        dataset.tables[sheet.key] = Table(sheet, columns, count, rows)
    return dataset


def rows_by_column(
    columns: tuple[cols.Column, ...], records: Callable[[], Iterator[Record]]
) -> Iterator[Record]:
    """The rows of a table: its records, which hold the value of each column
    under its key, with the value of every column that works its value out
    from the others (Column.value_of). The writers check that each row holds
    exactly the columns (exports.writers.base)."""
    worked_out = [(column.key, column.value_of) for column in columns if column.value_of]
    for record in records():
        for key, value_of in worked_out:
            record[key] = value_of(record)
        yield record
