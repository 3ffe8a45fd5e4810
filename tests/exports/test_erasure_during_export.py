"""An export and a deletion of participant data never interleave (PostgreSQL):
an export started while a deletion is under way waits for it, and its file
holds none of the deleted data."""

import threading
import time

import pytest
from django.db import connection, transaction

from exports.models import ExportJob
from exports.runner import Outcome, export_job_run
from exports.services import export_job_create
from surveys.models import Evaluation
from surveys.protocol.curation import session_erase_on_request
from tests.exports.factories import populate_study
from tests.exports.readers import read_csv

HOLD_SECONDS = 1.0


@pytest.mark.django_db(transaction=True)
def test_an_export_waits_for_a_deletion_under_way(postgres_only, personas, study_a):
    populated = populate_study(study_a, sessions=4)
    session = populated.complete_sessions[0]
    exported = Evaluation.objects.submitted().filter(
        session__study=study_a, session__is_pilot=False
    )
    before = exported.count()
    job = export_job_create(
        study=study_a, requested_by=personas["coordinator_a"], fmt="csv", dispatch=False
    )
    deleting, errors = threading.Event(), []

    def delete_slowly():
        try:
            with transaction.atomic():
                session_erase_on_request(
                    session_id=session.pk,
                    participant_code=session.participant.code,
                    erased_by=personas["coordinator_a"],
                )
                deleting.set()
                time.sleep(HOLD_SECONDS)  # deleted, not committed yet
        except Exception as error:  # re-raised in the test thread
            errors.append(error)
        finally:
            connection.close()

    deleter = threading.Thread(target=delete_slowly)
    deleter.start()
    assert deleting.wait(timeout=30)
    started = time.perf_counter()
    outcome = export_job_run(job_id=job.pk)
    waited = time.perf_counter() - started
    deleter.join(timeout=30)

    assert errors == []
    assert outcome == Outcome.SUCCEEDED
    assert waited > HOLD_SECONDS * 0.8  # it waited for the deletion to commit
    _header, rows = read_csv(ExportJob.objects.get(pk=job.pk).absolute_path)
    assert len(rows) == exported.count() == before - 2  # both of the session's, gone
