"""What an autosave and an SHS submission cost the database: the
statements are pinned, and the same however many sessions the study holds."""

from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from surveys.models import Evaluation, StudySession
from surveys.protocol.state import ACTIVITY_RESOLUTION
from surveys.steps import Step
from tests.surveys.bulk import add_sessions
from tests.surveys.runner import SessionRun, answers
from tests.surveys.statements import statement_shapes, written_together


def _statements(captured) -> list[str]:
    return statement_shapes(query["sql"] for query in captured.captured_queries)


def _as_this_database_writes_it(shapes):
    """SQLite (the service-free run) has no row locks: its statements carry no FOR UPDATE."""
    if connection.features.has_select_for_update:
        return shapes
    return [shape.removesuffix(" FOR UPDATE") for shape in shapes]


def _autosave_statements(run, sequence):
    with CaptureQueriesContext(connection) as captured:
        response = run.client.post(
            reverse("surveys:session_answer", args=[run.token]),
            {"step": "block1_shs", "item": "q1", "value": "1", "sequence": sequence},
        )
    assert response.json()["saved"] is True
    return _statements(captured)


AUTOSAVE = [
    "SELECT surveys_user",
    # The access check is the row lock: the session row is read once.
    "SELECT surveys_studysession FOR UPDATE",
    # The evaluation is not read: the UPDATE checks the answer's sequence.
    "UPDATE surveys_evaluation",
    # No activity write: the step change wrote it under a minute ago
    # (ACTIVITY_RESOLUTION; the stale case is the test below).
]


def test_an_autosave_reads_the_session_once_whatever_the_study_holds(study_a, personas, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    run.get()  # first display creates the evaluation
    add_sessions(study_a, [personas["experimenter_a"]], 5)
    few = _autosave_statements(run, 9)
    add_sessions(study_a, [personas["experimenter_a"]], 200)
    many = _autosave_statements(run, 10)  # 10 > 9 as numbers, not as text

    assert few == many == _as_this_database_writes_it(AUTOSAVE)


SUBMIT = [
    "SELECT surveys_user",
    "SELECT surveys_studysession",  # the access check
    "SELECT surveys_studysession FOR UPDATE",
    "SELECT surveys_evaluation",
    "UPDATE surveys_evaluation",
]
# The step change: the record closed, the next one and the block's
# interaction opened, the new step and the request's activity saved; one
# statement on PostgreSQL (surveys/protocol/statements.py).
STEP_CHANGE = [
    "UPDATE surveys_steprecord",
    "INSERT surveys_steprecord",
    "INSERT surveys_interactionblock",
    "UPDATE surveys_studysession",
]


def test_an_shs_submission_writes_the_session_once(study_a, personas, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    run.get()
    add_sessions(study_a, [personas["experimenter_a"]], 200)
    with CaptureQueriesContext(connection) as captured:
        response = run.post("block1_shs", **answers())
    assert response.status_code == 302

    expected = _as_this_database_writes_it(SUBMIT) + written_together(STEP_CHANGE)
    assert _statements(captured) == expected
    # The device's hand-back goes in a cookie: the browser session is not written.
    sqls = [query["sql"] for query in captured.captured_queries]
    assert not [sql for sql in sqls if "django_session" in sql and not sql.startswith("SELECT")]
    assert run.session.step == Step.BLOCK2_INTERACTION


def test_activity_older_than_the_resolution_is_written_by_autosaves_and_pages(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    run.get()
    sessions = StudySession.objects.filter(pk=run.session.pk)
    stale = timezone.now() - ACTIVITY_RESOLUTION - timedelta(seconds=1)

    sessions.update(last_activity_at=stale)
    assert _autosave_statements(run, 1)[-1] == "UPDATE surveys_studysession"
    assert sessions.get().last_activity_at > stale
    sessions.update(last_activity_at=stale)
    run.get()
    assert sessions.get().last_activity_at > stale
    # Fresh again: neither writes it.
    assert "UPDATE surveys_studysession" not in _autosave_statements(run, 2)


def test_an_autosave_before_the_first_display_creates_the_evaluation(study_a, client_for):
    # The one-statement save finds no row; the save falls back to creating it.
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    Evaluation.objects.filter(session=run.session).delete()

    _autosave_statements(run, 3)

    evaluation = Evaluation.objects.get(session=run.session, block=1)
    assert (evaluation.q1, evaluation.answer_sequence) == (1, {"q1": 3})
