"""What the retest refuses and who reaches it (docs/design/validation.md §14.2): forms of
another step, tampered answers, a second submission, other studies' staff,
wrong links; erasure takes the retest with the rest; the study page counts."""

import threading
import time
from datetime import timedelta

import pytest
from django.db import close_old_connections
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from surveys.models import Retest, RetestEvaluation, StudySession
from surveys.models.studies import hash_token
from surveys.retests import new_retest_token
from surveys.steps import Step
from tests.surveys.retests import RetestVisit, link_on, make_due, with_retest
from tests.surveys.runner import SessionRun, answers
from tests.surveys.test_concurrency import _in_threads
from tests.surveys.test_remote_hardening import postgres_and_redis  # noqa: F401

FIRST = (2, -2, 1, -1, 0, 0, 1, -2, 2, -1)
SECOND = (1, -1, 1, -1, 1, -1, 1, -1, 1, -1)


@pytest.fixture
def completed(study_a, client_for):
    """A completed supervised session of a study with a retest, and its link (due)."""
    with_retest(study_a)
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.FEEDBACK)
    path, _token = link_on(run.get())
    run.hand_back()
    run.feedback()
    make_due()
    return run, path


def stored(retest_id: int) -> tuple:
    """Everything a refused form must leave as it was."""
    retest = Retest.objects.get(pk=retest_id)
    rows = list(RetestEvaluation.objects.values().order_by("block"))
    return retest.step, retest.completed_at, rows


def _form(values) -> dict[str, str]:
    return answers(*values)


# -- refusals ----------------------------------------------------------------------


def test_a_form_of_the_next_step_is_refused_and_changes_nothing(completed):
    _run, path = completed
    visit = RetestVisit(path)
    visit.get()
    before = stored(Retest.objects.get().pk)

    response = visit.post("block2_shs", **_form(FIRST))

    assert response.status_code == 409
    assert "Nothing was saved" in response.content.decode()
    assert stored(Retest.objects.get().pk) == before


@pytest.mark.parametrize(
    "step, status",
    [
        ("consent", 409),
        ("complete", 409),
        ("block1_interaction", 409),
        ("", 409),
        # A NUL byte is refused before any view (surveys.middleware), as everywhere.
        ("block1_shs\x00", 400),
    ],
)
def test_a_tampered_step_name_is_refused(completed, step, status):
    _run, path = completed
    visit = RetestVisit(path)
    visit.get()
    before = stored(Retest.objects.get().pk)

    response = visit.post(step, **_form(FIRST))

    assert response.status_code == status
    assert stored(Retest.objects.get().pk) == before


@pytest.mark.parametrize("value", ["3", "-3", "1.5", "agree", "\x00", "2\x00"])
def test_tampered_answers_are_refused_with_nothing_stored(completed, value):
    _run, path = completed
    visit = RetestVisit(path)
    visit.get()
    before = stored(Retest.objects.get().pk)

    response = visit.post("block1_shs", **{**_form(FIRST), "q3": value})

    assert response.status_code == 400
    # A NUL byte gets the platform's own 400 page (surveys.middleware), which says so too.
    said = "nothing was stored" if "\x00" in value else "Nothing was saved"
    assert said in response.content.decode()
    assert stored(Retest.objects.get().pk) == before


def test_a_missing_answer_is_asked_for_and_the_given_ones_shown_again(completed):
    _run, path = completed
    visit = RetestVisit(path)
    visit.get()
    form = _form(FIRST)
    del form["q10"]

    response = visit.post("block1_shs", **form)

    content = response.content.decode()
    assert response.status_code == 400
    assert "1 statement still needs an answer." in content
    assert 'name="q1" value="2" checked' in content
    evaluation = RetestEvaluation.objects.get()
    assert evaluation.submitted_at is None and evaluation.q1 is None


def test_the_same_form_twice_is_one_submission(completed):
    _run, path = completed
    visit = RetestVisit(path)
    assert visit.shs(1, FIRST).status_code == 302
    before = stored(Retest.objects.get().pk)

    again = visit.post("block1_shs", **_form(FIRST))

    assert again.status_code == 302
    assert stored(Retest.objects.get().pk) == before
    assert Retest.objects.get().step == Retest.Step.BLOCK2_SHS


def test_other_answers_after_submission_are_refused(completed):
    _run, path = completed
    visit = RetestVisit(path)
    visit.complete(block1=FIRST, block2=SECOND)
    before = stored(Retest.objects.get().pk)

    changed = visit.post("block1_shs", **_form(SECOND))
    repeated = visit.post("block2_shs", **_form(SECOND))

    assert changed.status_code == 409
    assert "can no longer be changed" in changed.content.decode()
    assert repeated.status_code == 302  # the last form again: the thank-you page
    assert stored(Retest.objects.get().pk) == before


# -- who reaches it --------------------------------------------------------------------


@pytest.mark.parametrize("persona", ["coordinator_b", "outsider"])
def test_staff_of_other_studies_cannot_start_or_open_a_retest(completed, client_for, persona):
    run, _path = completed
    retest = Retest.objects.get()
    client = client_for(persona)
    code = run.session.participant.code

    start = client.post(reverse("surveys:retest_start", args=["study-a"]), {"code": code})
    page = client.get(reverse("surveys:retest_staff", args=["study-a", retest.pk]))
    own_study = client.get(reverse("surveys:retest_staff", args=["study-b", retest.pk]))

    assert [start.status_code, page.status_code, own_study.status_code] == [404, 404, 404]
    assert not RetestEvaluation.objects.exists()


def test_a_visitor_without_an_account_is_sent_to_the_login(completed):
    retest = Retest.objects.get()
    page = Client().get(reverse("surveys:retest_staff", args=["study-a", retest.pk]))
    assert page.status_code == 302 and "login" in page.url


def test_wrong_links_answer_404_then_429_even_for_a_right_one(completed, settings):
    _run, path = completed
    settings.REMOTE_CODE_ATTEMPTS_PER_WINDOW = 3
    client = Client()

    wrong = [client.get(reverse("surveys:retest", args=[new_retest_token()])) for _ in range(3)]
    stopped = client.get(path)

    assert [response.status_code for response in wrong] == [404] * 3
    assert stopped.status_code == 429


def test_a_nul_byte_in_the_link_is_404(completed):
    assert Client().get("/retest/abc%00def/").status_code == 404


# -- erasure ---------------------------------------------------------------------------


def test_erasure_on_request_deletes_the_retest_and_closes_its_link(completed, client_for):
    # Given a participant who came back for the retest
    run, path = completed
    RetestVisit(path).complete(block1=FIRST, block2=SECOND)
    session = run.session
    assert RetestEvaluation.objects.count() == 2

    # When they ask for their data to be deleted
    response = client_for("coordinator_a").post(
        reverse("surveys:session_erase", args=["study-a", session.token]),
        {"participant_code": session.participant.code},
    )

    # Then the retest goes with the rest, and its link opens nothing
    assert response.status_code == 302
    assert StudySession.objects.get(pk=session.pk).step == Step.WITHDRAWN
    assert not Retest.objects.exists() and not RetestEvaluation.objects.exists()
    assert Client().get(path).status_code == 404


def test_withdrawing_at_the_feedback_step_deletes_the_scheduled_retest(study_a, client_for):
    with_retest(study_a)
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.FEEDBACK)
    path, _token = link_on(run.get())
    assert Retest.objects.exists()

    run.client.post(reverse("surveys:session_withdraw", args=[run.token]))

    assert run.session.step == Step.WITHDRAWN
    assert not Retest.objects.exists()
    assert Client().get(path).status_code == 404


# -- the study page and the pairs -------------------------------------------------------


def _retests(make_session, count: int, **fields) -> list[Retest]:
    now = timezone.now()
    made = []
    for _ in range(count):
        session = make_session(step=Step.COMPLETE, ended_at=now)
        retest = Retest.objects.create(
            session=session,
            token_hash=hash_token(new_retest_token()),
            due_at=now + timedelta(days=3),
            **fields,
        )
        made.append(retest)
    return made


def test_the_study_page_counts_scheduled_due_and_completed_retests(
    study_a, make_session, client_for
):
    with_retest(study_a)
    _retests(make_session, 3)
    due = _retests(make_session, 2)
    for retest in due:
        make_due(retest)
    done = _retests(make_session, 1, step=Retest.Step.COMPLETE)
    make_due(done[0])
    # A pilot's retest (a session marked pilot afterwards) is not counted
    pilot = _retests(make_session, 1)[0]
    StudySession.objects.filter(pk=pilot.session_id).update(is_pilot=True)

    page = client_for("experimenter_a").get(reverse("surveys:study_detail", args=["study-a"]))

    assert "Retests: 6 scheduled, 2 due and not yet done, 1 completed." in page.content.decode()


def test_the_study_page_costs_the_same_queries_for_more_retests(
    study_a, make_session, client_for, django_assert_max_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with_retest(study_a)
    client = client_for("coordinator_a")
    url = reverse("surveys:study_detail", args=["study-a"])
    _retests(make_session, 2)
    with CaptureQueriesContext(connection) as few:
        client.get(url)
    _retests(make_session, 30)
    with django_assert_max_num_queries(len(few)):
        client.get(url)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("postgres_and_redis")
def test_wrong_links_arriving_together_are_looked_up_at_most_the_limit(settings, monkeypatch):
    """Counted before the lookup: a read of the count first and a count after
    let every guess that read in between through."""
    import surveys.views.retests as retest_view

    settings.REMOTE_CODE_ATTEMPTS_PER_WINDOW = 10
    lookups, lock, original = [], threading.Lock(), retest_view.retest_by_token

    def slow(token):
        with lock:
            lookups.append(token)
        time.sleep(0.05)  # every guess reaches the limit before any lookup ends
        return original(token)

    monkeypatch.setattr(retest_view, "retest_by_token", slow)
    statuses = []

    def guess(_index):
        close_old_connections()
        statuses.append(Client().get(reverse("surveys:retest", args=[new_retest_token()])))

    assert _in_threads(40, guess) == []

    assert len(lookups) == 10
    assert sorted(r.status_code for r in statuses) == [404] * 10 + [429] * 30
