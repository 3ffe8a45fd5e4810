"""Two experimenters at the same second: row locks on PostgreSQL keep the
allocation balanced, a doubled SHS submission stores one evaluation, a
protocol write locks its own session only, a doubled erasure deletes once
and an erasure waits for an export reading."""

import threading
import time
from collections import Counter

import pytest
from django.db import DatabaseError, close_old_connections, connection, transaction

from surveys.erasure_lock import reading_study_data
from surveys.models import Evaluation, LLMSystem, SessionErasure, Study, StudySession
from surveys.protocol.curation import session_erase_on_request
from surveys.protocol.flow import session_start, shs_submit
from surveys.protocol.state import ANY_STEP, ProtocolError, locked_session
from surveys.steps import Step
from tests.surveys.runner import SessionRun, answers


def _in_threads(count, work):
    barrier = threading.Barrier(count)
    errors = []

    def run(index):
        try:
            barrier.wait(timeout=30)
            work(index)
        except Exception as error:  # collected and re-raised in the test thread
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return errors


@pytest.mark.django_db(transaction=True)
def test_40_parallel_starts_keep_per_system_counts_within_1(postgres_only, study_a, personas):
    experimenter = personas["experimenter_a"]

    def start(_index):
        close_old_connections()
        session_start(study=study_a, experimenter=experimenter, language="en")

    errors = _in_threads(40, start)

    assert errors == []
    uses = Counter()
    for first, second in StudySession.objects.values_list("first_system", "second_system"):
        uses.update([first, second])
    assert sum(uses.values()) == 80
    assert max(uses.values()) - min(uses.values()) <= 1
    assert sorted(StudySession.objects.values_list("allocation_number", flat=True)) == list(
        range(1, 41)
    )


@pytest.mark.django_db(transaction=True)
def test_two_parallel_submissions_store_exactly_one_evaluation(postgres_only, study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    run.get()
    session_id = run.session.pk
    results = []

    def submit(_index):
        close_old_connections()
        results.append(shs_submit(session_id=session_id, step=Step.BLOCK1_SHS, responses=answers()))

    errors = _in_threads(2, submit)

    assert errors == []
    assert results == [[], []]  # the second is recognised as the same submission
    assert Evaluation.objects.filter(session_id=session_id).count() == 1
    assert Evaluation.objects.submitted().filter(session_id=session_id).count() == 1
    assert StudySession.objects.get(pk=session_id).step == Step.BLOCK2_INTERACTION


@pytest.mark.django_db(transaction=True)
def test_two_parallel_http_submissions_store_one_evaluation(postgres_only, study_a, client_for):
    from django.test import Client

    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    run.get()
    cookies = run.client.cookies
    statuses = []

    def post(_index):
        close_old_connections()
        client = Client()
        client.cookies = cookies
        statuses.append(client.post(run.url, {"step": "block1_shs", **answers()}).status_code)

    errors = _in_threads(2, post)

    assert errors == []
    assert statuses == [302, 302]
    assert Evaluation.objects.submitted().filter(session__token=run.token).count() == 1


@pytest.fixture
def finished(study_a, client_for):
    return SessionRun(client_for("experimenter_a"), study_a).complete()


@pytest.fixture
def erase(personas):
    """erase(session): study A's coordinator deletes the session's participant data."""

    def erase_session(session):
        return session_erase_on_request(
            session_id=session.pk,
            participant_code=session.participant.code,
            erased_by=personas["coordinator_a"],
        )

    return erase_session


@pytest.mark.django_db(transaction=True)
def test_two_coordinators_erasing_at_once_erase_once(postgres_only, finished, erase):
    session_id = finished.pk
    refused = []
    # Read the participant (its code is the confirmation) before the threads:
    # read lazily in a thread, it could be one the other thread has deleted.
    assert finished.participant.code

    def attempt(_index):
        close_old_connections()
        try:
            erase(finished)
        except ProtocolError as error:
            refused.append(str(error))

    errors = _in_threads(2, attempt)

    assert errors == []
    assert refused == ["This session holds no participant data to delete."]
    assert SessionErasure.objects.filter(session_id=session_id).count() == 1
    assert not Evaluation.objects.filter(session_id=session_id).exists()


@pytest.mark.django_db(transaction=True)
def test_an_erasure_waits_for_an_export_reading_the_study(postgres_only, study_a, finished, erase):
    session_id = finished.pk
    reading, erasure_started, done = threading.Event(), threading.Event(), threading.Event()

    def work(index):
        close_old_connections()
        if index == 0:  # an export reading the study
            with reading_study_data(study_a.pk):
                reading.set()
                erasure_started.wait(timeout=30)
                time.sleep(0.5)  # the erasure, if it did not wait, is done by now
                assert not done.is_set()
                assert Evaluation.objects.filter(session_id=session_id).count() == 2
        else:
            reading.wait(timeout=30)
            erasure_started.set()
            erase(finished)
            done.set()

    errors = _in_threads(2, work)

    assert errors == []
    assert done.is_set()
    assert not Evaluation.objects.filter(session_id=session_id).exists()


@pytest.mark.django_db(transaction=True)
def test_a_deletion_gives_up_on_an_export_that_reads_too_long(
    postgres_only, study_a, finished, erase, settings
):
    settings.DELETION_WAIT_SECONDS = 1
    session_id = finished.pk
    reading, given_up = threading.Event(), threading.Event()
    refused = []

    def work(index):
        close_old_connections()
        if index == 0:  # an export stuck while reading the study
            with reading_study_data(study_a.pk):
                reading.set()
                given_up.wait(timeout=30)
        else:
            reading.wait(timeout=30)
            try:
                erase(finished)
            except ProtocolError as error:
                refused.append(str(error))
            finally:
                given_up.set()

    errors = _in_threads(2, work)

    assert errors == []
    assert refused == [
        "An export of this study is being written; nothing was deleted. Try again in a minute."
    ]
    assert Evaluation.objects.filter(session_id=session_id).count() == 2
    assert StudySession.objects.get(pk=session_id).step == Step.COMPLETE
    assert not SessionErasure.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_protocol_write_locks_its_session_and_no_other_row(postgres_only, study_a, personas):
    """While one participant's answer is written, the study's other sessions
    start and go on: the write locks its session's row, not the study's or
    the systems' it reads with it."""
    session = session_start(study=study_a, experimenter=personas["experimenter_a"], language="en")
    rows = {
        "session": (StudySession, session.pk),
        "study": (Study, study_a.pk),
        "first system": (LLMSystem, session.first_system_id),
        "second system": (LLMSystem, session.second_system_id),
    }
    free = {}

    def try_to_lock(_index):
        for name, (model, pk) in rows.items():
            try:
                with transaction.atomic():
                    model.objects.select_for_update(nowait=True).filter(pk=pk).first()
                free[name] = True
            except DatabaseError:
                free[name] = False

    with locked_session(session.pk, expected_step=ANY_STEP):
        errors = _in_threads(1, try_to_lock)

    assert errors == []
    assert free == {"session": False, "study": True, "first system": True, "second system": True}
