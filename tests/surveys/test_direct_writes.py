"""The protocol's writes as hand-written statements (surveys/direct_writes.py,
issue 17) store what the ORM would store: the fields named, their
`pre_save`, the model's defaults; a step change is one statement on
PostgreSQL and fails whole."""

import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from surveys.direct_writes import insert_statement, save_fields, update_statement, write_together
from surveys.models import Evaluation, InteractionBlock, StepRecord, Study, StudySession
from surveys.protocol.evaluations import EVALUATION_OF_BLOCK
from surveys.protocol.state import enter_step, locked_session
from surveys.steps import Step
from tests.surveys.runner import SessionRun


@pytest.fixture
def shs_session(study_a, client_for, personas):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    run.hand_back()
    run.get()  # first display: the evaluation exists
    return run.session


def test_saving_fields_stores_what_the_orm_would_in_one_statement(shs_session):
    evaluation = EVALUATION_OF_BLOCK.one(session_id=shs_session.pk, block=1)
    evaluation.q1, evaluation.q2 = 2, -2
    evaluation.submitted_at = timezone.now()
    with CaptureQueriesContext(connection) as captured:
        save_fields(evaluation, ["q1", "q2", "submitted_at"])
    assert len(captured.captured_queries) == 1
    stored = Evaluation.objects.get(pk=evaluation.pk)
    assert (stored.q1, stored.q2, stored.submitted_at) == (2, -2, evaluation.submitted_at)
    assert stored.q3 is None  # only the named fields


def test_saving_fields_runs_their_pre_save_as_the_orm_does(study_a):
    # `updated_at` is auto_now: its value comes from the field, not the instance.
    before = Study.objects.get(pk=study_a.pk).updated_at
    study_a.title = "Renamed"
    save_fields(study_a, ["title", "updated_at"])
    stored = Study.objects.get(pk=study_a.pk)
    assert stored.title == "Renamed" and stored.updated_at > before


def test_saving_fields_of_a_row_that_is_gone_fails(shs_session):
    evaluation = EVALUATION_OF_BLOCK.one(session_id=shs_session.pk, block=1)
    Evaluation.objects.filter(pk=evaluation.pk).delete()
    with pytest.raises(DatabaseError):
        save_fields(evaluation, ["q1"])


def test_an_inserted_row_has_the_models_defaults(shs_session):
    system = shs_session.second_system
    started = timezone.now()
    opened = InteractionBlock(session=shs_session, block=2, system=system, started_at=started)
    write_together([insert_statement(opened), update_statement(shs_session, ["step"])])
    stored = InteractionBlock.objects.get(session=shs_session, block=2)
    assert (stored.system_id, stored.started_at) == (system.pk, started)
    assert (stored.ended_at, stored.override_reason) == (None, "")  # the defaults


def test_a_step_change_is_one_statement_on_postgresql(shs_session):
    with CaptureQueriesContext(connection) as captured:
        with locked_session(shs_session.pk, expected_step=Step.BLOCK1_SHS) as session:
            enter_step(session, Step.BLOCK2_INTERACTION)
    sqls = [q["sql"] for q in captured.captured_queries]
    writes = [sql for sql in sqls if sql.startswith(("WITH", "UPDATE", "INSERT"))]
    assert len(writes) == (1 if connection.vendor == "postgresql" else 4)
    records = StepRecord.objects.filter(session=shs_session)
    assert records.get(step=Step.BLOCK1_SHS).completed_at is not None
    assert records.get(step=Step.BLOCK2_INTERACTION).completed_at is None
    assert InteractionBlock.objects.filter(session=shs_session, block=2).exists()
    assert StudySession.objects.get(pk=shs_session.pk).step == Step.BLOCK2_INTERACTION


def test_writes_whose_last_row_is_gone_fail_and_leave_nothing(shs_session):
    gone = StudySession(pk=10**9, step=Step.BLOCK2_INTERACTION)
    record = StepRecord(session=shs_session, step=Step.FEEDBACK, entered_at=timezone.now())
    with pytest.raises(DatabaseError), transaction.atomic():
        write_together([insert_statement(record), update_statement(gone, ["step"])])
    assert not StepRecord.objects.filter(session=shs_session, step=Step.FEEDBACK).exists()
