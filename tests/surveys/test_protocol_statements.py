"""The protocol's two hand-written statements (surveys/protocol/statements.py)
leave the rows the ORM path leaves: each is run beside its ORM path on a
session in the same state, at the same instant, and the rows compared. A
field added to a table they write, and not to the statement, fails here."""

import pytest
import time_machine
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext

from surveys.models import Evaluation, InteractionBlock, StepRecord, StudySession
from surveys.protocol.flow import shs_answer_save
from surveys.protocol.state import enter_step, locked_session
from surveys.steps import Step
from tests.surveys.runner import SessionRun

INSTANT = "2026-11-30 10:00:00+00:00"
# What differs between two sessions by construction, not by how they were written.
OWN = {"id", "session_id", "token", "participant_id", "created_at", "started_at_seq"}


def _rows(model, **where):
    return [
        {key: value for key, value in row.items() if key not in OWN}
        for row in model.objects.filter(**where).order_by("pk").values()
    ]


def _state(session_pk):
    session = _rows(StudySession, pk=session_pk)[0]
    for key in ("study_id", "first_system_id", "second_system_id", "experimenter_id"):
        session.pop(key, None)
    return {
        "session": {
            key: session[key] for key in ("step", "step_entered_at", "last_activity_at", "ended_at")
        },  # fmt: skip
        "has_code": bool(session["completion_code"]),
        "records": _rows(StepRecord, session_id=session_pk),
        "blocks": [
            {key: value for key, value in row.items() if key != "system_id"}
            for row in _rows(InteractionBlock, session_id=session_pk)
        ],
    }


@pytest.fixture
def two_sessions(study_a, client_for):
    def at(step):
        runs = []
        for _ in range(2):
            # Both built at the same instant: their earlier rows are alike too.
            with time_machine.travel(INSTANT, tick=False):
                run = SessionRun(client_for("experimenter_a"), study_a)
                run.advance_to(step)
            runs.append(run.session.pk)
        return runs

    return at


@pytest.mark.parametrize(
    "at, to",
    [
        (Step.BLOCK1_SHS, Step.BLOCK2_INTERACTION),  # a record and a block opened
        (Step.BLOCK2_SHS, Step.DEMOGRAPHICS),  # a record opened
        (Step.FEEDBACK, Step.COMPLETE),  # the session ended
    ],
)
def test_a_step_change_writes_the_rows_of_the_orm(two_sessions, settings, at, to):
    by_sql, by_orm = two_sessions(at)
    with time_machine.travel(INSTANT, tick=False):
        with locked_session(by_sql, expected_step=at) as session:
            enter_step(session, to)
        settings.PROTOCOL_STATEMENTS = False
        with locked_session(by_orm, expected_step=at) as session:
            enter_step(session, to)
    assert _state(by_sql) == _state(by_orm)
    assert _state(by_sql)["session"]["step"] == to


def test_the_step_change_is_one_statement_on_postgresql(two_sessions):
    (pk, _other) = two_sessions(Step.BLOCK1_SHS)
    with CaptureQueriesContext(connection) as captured:
        with locked_session(pk, expected_step=Step.BLOCK1_SHS) as session:
            enter_step(session, Step.BLOCK2_INTERACTION)
    writes = [
        q["sql"] for q in captured.captured_queries if q["sql"].startswith(("WITH", "UPD", "INS"))
    ]
    assert len(writes) == (1 if connection.vendor == "postgresql" else 4)


@pytest.mark.parametrize("statements", [True, False])
def test_a_step_change_of_a_session_that_is_gone_leaves_nothing(two_sessions, settings, statements):
    settings.PROTOCOL_STATEMENTS = statements
    (pk, _other) = two_sessions(Step.BLOCK1_SHS)
    records_before = _rows(StepRecord, session_id=pk)
    with pytest.raises(DatabaseError), transaction.atomic():
        with locked_session(pk, expected_step=Step.BLOCK1_SHS) as session:
            StudySession.objects.filter(pk=pk).delete()
            session.pk = pk
            enter_step(session, Step.BLOCK2_INTERACTION)
    assert _rows(StepRecord, session_id=pk) == records_before


# Saves as a page sends them: out of order, repeated, one of another item.
SAVES = [("q1", 1, 5), ("q1", -2, 3), ("q2", 2, 7), ("q1", 0, 9), ("q2", -1, 7)]


def test_autosaves_store_what_the_orm_path_stores(two_sessions, settings):
    by_sql, by_orm = two_sessions(Step.BLOCK1_SHS)
    outcomes = {}
    for pk, statements in ((by_sql, True), (by_orm, False)):
        settings.PROTOCOL_STATEMENTS = statements
        with time_machine.travel(INSTANT, tick=False):
            outcomes[pk] = [
                shs_answer_save(
                    session_id=pk, step=Step.BLOCK1_SHS, item=item, value=value, sequence=sequence
                )  # fmt: skip
                for item, value, sequence in SAVES
            ]
    assert outcomes[by_sql] == outcomes[by_orm] == [True, False, True, True, False]
    [written_by_sql] = _rows(Evaluation, session_id=by_sql)
    [written_by_orm] = _rows(Evaluation, session_id=by_orm)
    differing = {key for key in written_by_sql if written_by_sql[key] != written_by_orm[key]}
    assert differing <= {"system_id"}  # the balance gives each session its own systems
    stored = Evaluation.objects.get(session_id=by_sql)
    assert (stored.q1, stored.q2, stored.answer_sequence) == (0, 2, {"q1": 9, "q2": 7})
