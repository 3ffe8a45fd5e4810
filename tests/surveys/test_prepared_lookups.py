"""The lookups compiled once per thread (surveys/prepared.py) give
what the ORM gives for the same queryset: the same statement, the same model
instances with the same `select_related` objects, and the same refusals."""

import importlib
import pkgutil
import threading

import pytest
from django.db import connection, transaction
from django.db.models import F, FilteredRelation, Q
from django.db.models.functions import Upper
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from surveys.access import MEMBERSHIP, SESSION_OF_MEMBER
from surveys.auth_backends import USER_BY_ID
from surveys.models import Evaluation, StudySession
from surveys.participant_access import REMOTE_SESSION
from surveys.prepared import USES, PreparedLookup
from surveys.protocol.evaluations import EVALUATION_OF_BLOCK, evaluation_for_display
from surveys.protocol.state import LOCKED_SESSION
from surveys.steps import Step
from tests.surveys.runner import SessionRun


def _fields(obj) -> dict:
    return {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields}


def _values(obj) -> dict:
    """Every stored field and the related objects loaded with it."""
    if obj is None:
        return {}
    found = _fields(obj)
    for name, related in obj._state.fields_cache.items():
        found[name] = related and _fields(related)
    return found


def _both(settings, lookup, **values):
    """(prepared result, ORM result, their SQL) for the same lookup."""
    with CaptureQueriesContext(connection) as prepared_sql:
        prepared = lookup.one(**values)
    settings.PREPARED_LOOKUPS = False
    with CaptureQueriesContext(connection) as orm_sql:
        orm = lookup.one(**values)
    settings.PREPARED_LOOKUPS = True
    statements = [[q["sql"] for q in c.captured_queries] for c in (prepared_sql, orm_sql)]
    return prepared, orm, statements


@pytest.fixture
def shs_session(study_a, client_for, personas):
    run = SessionRun(client_for("experimenter_a"), study_a, language="de")
    run.advance_to(Step.BLOCK1_SHS)
    run.hand_back()
    run.get()  # first display: the evaluation exists
    return run.session


@pytest.mark.parametrize(
    "lookup", [SESSION_OF_MEMBER["page"], SESSION_OF_MEMBER["light"]], ids=["page", "row"]
)
def test_the_staff_check_gives_what_the_orm_gives(settings, shs_session, personas, lookup):
    user = personas["experimenter_a"]
    prepared, orm, (ours, theirs) = _both(
        settings, lookup, token=shs_session.token, user_id=user.pk
    )
    assert prepared is not None
    assert _values(prepared) == _values(orm)
    assert ours == theirs  # the very same statement, values included
    # The study's TOTP rule comes with the session in every shape (surveys/access.py).
    loaded = {"study"}
    if lookup is SESSION_OF_MEMBER["page"]:
        loaded |= {"first_system", "second_system", "participant"}
    assert set(prepared._state.fields_cache) == loaded


def test_the_membership_lookup_gives_what_the_orm_gives(settings, shs_session, personas):
    user = personas["experimenter_a"]
    prepared, orm, (ours, theirs) = _both(
        settings, MEMBERSHIP, study_id=shs_session.study_id, user_id=user.pk
    )
    assert ours == theirs and _values(prepared) == _values(orm)
    assert prepared.role == "experimenter"
    outsider = personas["outsider"]
    prepared, orm, _sql = _both(
        settings, MEMBERSHIP, study_id=shs_session.study_id, user_id=outsider.pk
    )
    assert prepared is None and orm is None


def test_the_staff_check_finds_nothing_outside_the_users_studies(settings, shs_session, personas):
    for persona in ("coordinator_b", "outsider"):
        user = personas[persona]
        prepared, orm, _sql = _both(
            settings, SESSION_OF_MEMBER["page"], token=shs_session.token, user_id=user.pk
        )
        assert prepared is None and orm is None
    prepared, _orm, _sql = _both(
        settings,
        SESSION_OF_MEMBER["page"],
        token=shs_session.token + "x",
        user_id=personas["experimenter_a"].pk,
    )
    assert prepared is None


def test_the_locking_reads_lock_as_the_orm_does(settings, shs_session, personas):
    user = personas["experimenter_a"]
    with transaction.atomic():
        prepared, orm, (ours, theirs) = _both(
            settings, SESSION_OF_MEMBER["for_update"], token=shs_session.token, user_id=user.pk
        )
        assert ours == theirs and _locks(ours[0])
        assert _values(prepared) == _values(orm)
        assert set(prepared._state.fields_cache) == {"study"}
        prepared, orm, (ours, theirs) = _both(settings, LOCKED_SESSION, pk=shs_session.pk)
        assert ours == theirs and _locks(ours[0])
        assert _values(prepared) == _values(orm)


def _locks(sql: str) -> bool:
    # SQLite (the service-free run) has no row locks: its statement has none.
    return ("FOR UPDATE" in sql) == connection.features.has_select_for_update


def test_a_locking_read_outside_a_transaction_is_refused(transactional_db, shs_session):
    with transaction.atomic():
        LOCKED_SESSION.one(pk=shs_session.pk)  # compiled in this thread
    with pytest.raises(TransactionManagementError):
        LOCKED_SESSION.one(pk=shs_session.pk)


def test_a_thread_compiles_its_own_and_refuses_a_lock_outside_a_transaction(shs_session):
    errors = []

    def read():
        try:
            LOCKED_SESSION.one(pk=shs_session.pk)
        except TransactionManagementError as error:
            errors.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=read)
    thread.start()
    thread.join()
    assert len(errors) == 1


def test_the_evaluation_and_user_lookups_convert_as_the_orm_does(settings, shs_session, personas):
    prepared, orm, (ours, theirs) = _both(
        settings, EVALUATION_OF_BLOCK, session_id=shs_session.pk, block=1
    )
    assert ours == theirs
    assert _values(prepared) == _values(orm)
    assert isinstance(prepared.answer_sequence, dict)  # a JSON column, converted
    assert prepared.first_displayed_at.tzinfo is not None
    user = personas["experimenter_a"]
    prepared, orm, (ours, theirs) = _both(settings, USER_BY_ID, pk=user.pk)
    assert ours == theirs and _values(prepared) == _values(orm)
    assert prepared.password == user.password


def test_a_remote_session_is_found_only_as_remote(settings, shs_session):
    prepared, orm, (ours, theirs) = _both(settings, REMOTE_SESSION["page"], token=shs_session.token)
    assert prepared is None and orm is None and ours == theirs
    StudySession.objects.filter(pk=shs_session.pk).update(remote=True)
    prepared, orm, _sql = _both(settings, REMOTE_SESSION["page"], token=shs_session.token)
    assert _values(prepared) == _values(orm) and prepared.remote


def test_the_evaluation_is_created_once_at_first_display(shs_session):
    again = evaluation_for_display(StudySession.objects.get(pk=shs_session.pk))
    assert again.pk == EVALUATION_OF_BLOCK.one(session_id=shs_session.pk, block=1).pk


def test_a_placeholder_the_queryset_changes_is_refused(db):
    # `contains` wraps the value in wildcards: the statement could not be kept.
    lookup = PreparedLookup(
        lambda token: StudySession.objects.filter(token__contains=token), token=str
    )
    with pytest.raises(TypeError, match="token must appear once"):
        lookup.one(token="abc")


def test_more_than_one_row_is_an_error_as_with_get(study_a, make_session):
    make_session()
    make_session()
    lookup = PreparedLookup(
        lambda study_id: StudySession.objects.filter(study_id=study_id), study_id=int
    )
    with pytest.raises(StudySession.MultipleObjectsReturned):
        lookup.one(study_id=study_a.pk)


def test_a_second_tab_displaying_at_the_same_instant_gets_the_first_row(shs_session, monkeypatch):
    # The other tab's insert lands between this one's lookup and its insert:
    # the unique constraint refuses this one, which then reads the other's row.
    existing = EVALUATION_OF_BLOCK.one(session_id=shs_session.pk, block=1)
    calls = []
    real_one = EVALUATION_OF_BLOCK.one

    def first_misses(**values):
        calls.append(values)
        return None if len(calls) == 1 else real_one(**values)

    monkeypatch.setattr(EVALUATION_OF_BLOCK, "one", first_misses)
    session = StudySession.objects.get(pk=shs_session.pk)
    assert evaluation_for_display(session).pk == existing.pk
    assert Evaluation.objects.filter(session=shs_session, block=1).count() == 1
    assert len(calls) == 2  # the miss, then the read after the refused insert


# -- the fence ------------------------------------------------------------------------


def test_a_value_the_queryset_computes_is_refused(db):
    # Compiled once and kept, `now` would be the time of the first request for ever.
    lookup = PreparedLookup(
        lambda token: StudySession.objects.filter(token=token, created_at__lte=timezone.now()),
        token=str,
    )
    with pytest.raises(TypeError, match="compute values of its own"):
        lookup.one(token="abc")


@pytest.mark.parametrize(
    ("shape", "refusal"),
    [
        (lambda queryset: queryset.annotate(shouted=Upper("token")), "annotations"),
        # Even a column of a joined row, as the staff check once read the role.
        (
            lambda queryset: queryset.annotate(member_role=F("study__memberships__role")),
            r"not annotations \(member_role\)",
        ),
        (lambda queryset: queryset.alias(rule=F("study__require_coordinator_mfa")), "annotations"),
        (
            lambda queryset: queryset.annotate(
                staff=FilteredRelation("study__memberships", condition=Q(study__title="x"))
            ).filter(staff__user_id=1),
            "filtered relations",
        ),
        (lambda queryset: queryset.distinct(), "distinct"),
        (lambda queryset: queryset.only("token"), "deferred fields"),
        (lambda queryset: queryset.extra(where=["1 = 1"]), "extra"),
        (lambda queryset: queryset.prefetch_related("step_records"), "nothing prefetched"),
    ],
    ids=[
        "computed annotation",
        "column annotation",
        "alias",
        "filtered relation",
        "distinct",
        "deferred fields",
        "extra",
        "prefetch",
    ],
)
def test_only_plain_shapes_are_kept(db, shape, refusal):
    lookup = PreparedLookup(
        lambda token: shape(StudySession.objects.filter(token=token)), token=str
    )
    with pytest.raises(TypeError, match=refusal):
        lookup.one(token="abc")


def test_every_prepared_lookup_is_one_of_the_listed_uses():
    for package in ("surveys", "shs_platform", "exports", "criterion", "validation"):
        for module in pkgutil.walk_packages(
            importlib.import_module(package).__path__, f"{package}."
        ):
            if ".migrations" not in module.name and ".management" not in module.name:
                importlib.import_module(module.name)
    listed = set()
    for use in USES:
        module, name = use.rsplit(".", 1)
        found = getattr(importlib.import_module(module), name)
        listed |= {
            id(lookup) for lookup in (found.values() if isinstance(found, dict) else [found])
        }
    found_in_code = {
        id(lookup) for lookup in PreparedLookup.made if not lookup.defined_in.startswith("tests.")
    }
    assert found_in_code == listed
