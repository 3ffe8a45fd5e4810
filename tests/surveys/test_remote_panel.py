"""Panel ids of a remote study (docs/design/remote.md §11.6): kept apart, one
session per id, a payment list for coordinators, deleted on withdrawal,
erasure and after the retention days."""

from datetime import timedelta

import pytest
import time_machine
from django.core.management import call_command
from django.db import close_old_connections
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from surveys.models import PanelEntry, Study, StudyMembership
from surveys.panel import panel_ids_purge
from surveys.protocol.curation import session_erase_on_request
from surveys.steps import Step
from surveys.tasks import purge_panel_ids
from tests.surveys.remote import RemoteRun, sessions_of, take_url
from tests.surveys.runner import ELIGIBLE
from tests.surveys.test_concurrency import _in_threads
from tests.surveys.test_remote_study import edit

PID = "5f3a9c2e1b7d4e6fa0c8b912"


@pytest.fixture
def study(remote_study, personas):
    Study.objects.filter(pk=remote_study.pk).update(panel_parameter="PROLIFIC_PID")
    remote_study.refresh_from_db()
    for persona, role in (("coordinator_a", "coordinator"), ("experimenter_a", "experimenter")):
        StudyMembership.objects.create(user=personas[persona], study=remote_study, role=role)
    return remote_study


class PanelRun(RemoteRun):
    """A participant arriving from the panel: the link carries their id."""

    def __init__(self, study, panel_id=PID, client=None):
        self.client = client or Client()
        self.study = study
        page = self.client.get(take_url(study), {"PROLIFIC_PID": panel_id})
        assert page.status_code == 200, page.content.decode()[:2000]
        assert f'name="panel_id" value="{panel_id}"' in page.content.decode()
        response = self.client.post(
            take_url(study), {"action": "start", "language": "en", "panel_id": panel_id}
        )
        assert response.status_code == 302, response.content.decode()[:2000]
        self.url = response.url
        self.token = self.url.rstrip("/").rsplit("/", 1)[-1]


def revisit(study, panel_id=PID):
    """The panel's link opened again, on a new device (no cookie)."""
    return Client().get(take_url(study), {"PROLIFIC_PID": panel_id})


def test_the_panel_id_is_recorded_apart_from_the_session(study):
    run = PanelRun(study)

    [entry] = PanelEntry.objects.filter(study=study)
    assert (entry.panel_id, entry.session_id) == (PID, run.session.pk)
    assert PID not in str(run.session.__dict__) and PID not in str(run.session.participant.__dict__)


def test_a_second_visit_on_the_same_device_resumes_the_running_session(study):
    run = PanelRun(study)
    run.consent()

    response = run.client.get(take_url(study), {"PROLIFIC_PID": PID})

    assert response.status_code == 302 and response.url == run.url
    assert sessions_of(study).count() == 1
    # On a new device the id alone opens nothing: tests/surveys/test_remote_hardening.py


def test_a_completed_panel_id_gets_its_completion_code_again_never_a_new_session(study):
    session = PanelRun(study).complete()
    client = Client()

    response = client.get(take_url(study), {"PROLIFIC_PID": PID})
    posted = client.post(take_url(study), {"action": "start", "language": "en", "panel_id": PID})

    for page in (response, posted):
        assert page.status_code == 200 and session.completion_code in page.content.decode()
        assert "shs_participant" not in page.cookies  # the end page only, not the session
    assert sessions_of(study).count() == 1


def test_a_bad_panel_id_starts_nothing(study):
    for bad in ("abc\x00def", "abc\ndef", "abc\x7f", "x" * 101, "=cmd|calc", "a b"):
        posted = Client().post(
            take_url(study), {"action": "start", "language": "en", "panel_id": bad}
        )
        opened = Client().get(take_url(study), {"PROLIFIC_PID": bad})
        assert (posted.status_code, opened.status_code) == (400, 400), bad
        if "\x00" not in bad:  # a NUL is refused before the view (middleware)
            assert (
                "damaged" in posted.content.decode()
                and 'value="start"' not in opened.content.decode()
            )
    assert not sessions_of(study).exists() and not PanelEntry.objects.exists()


def test_without_the_parameter_the_link_starts_as_usual_and_records_nothing(study):
    RemoteRun(study)

    assert sessions_of(study).count() == 1 and not PanelEntry.objects.exists()


def test_a_study_without_a_panel_parameter_ignores_the_query(study):
    Study.objects.filter(pk=study.pk).update(panel_parameter="")
    client = Client()
    client.get(take_url(study), {"PROLIFIC_PID": PID})
    client.post(take_url(study), {"action": "start", "language": "en", "panel_id": PID})

    assert sessions_of(study).count() == 1 and not PanelEntry.objects.exists()


def test_coordinators_get_the_payment_list_others_do_not(
    study, client_for, django_assert_max_num_queries
):
    done = PanelRun(study).complete()
    for n in range(3):
        PanelRun(study, panel_id=f"running{n}").consent()
    coordinator = client_for("coordinator_a")
    url = reverse("surveys:payment_list", args=[study.slug])

    with django_assert_max_num_queries(8):
        page = coordinator.get(url).content.decode()
    csv_text = coordinator.get(reverse("surveys:payment_list_csv", args=[study.slug]))

    assert PID in page and done.completion_code in page and "running2" in page
    lines = csv_text.content.decode().splitlines()
    assert lines[0] == "panel_id,status,date,completion_code" and len(lines) == 5
    assert lines[1].startswith(f"{PID},") and lines[1].endswith(f",{done.completion_code}")
    csv_url = reverse("surveys:payment_list_csv", args=[study.slug])
    for persona in ("experimenter_a", "coordinator_b"):
        assert client_for(persona).get(url).status_code == 404
        assert client_for(persona).get(csv_url).status_code == 404
    study_page = coordinator.get(reverse("surveys:study_detail", args=[study.slug]))
    assert url in study_page.content.decode()


def test_the_payment_list_costs_the_same_queries_for_more_ids(study, client_for):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    coordinator = client_for("coordinator_a")
    url = reverse("surveys:payment_list", args=[study.slug])
    PanelRun(study, panel_id="first")
    with CaptureQueriesContext(connection) as one:
        coordinator.get(url)
    for n in range(4):
        PanelRun(study, panel_id=f"more{n}")
    with CaptureQueriesContext(connection) as five:
        coordinator.get(url)

    assert len(five) == len(one)


def test_withdrawal_deletes_the_panel_id(study):
    run = PanelRun(study)
    run.consent()

    run.client.post(f"/sessions/{run.token}/withdraw/")

    assert run.session.step == Step.WITHDRAWN
    assert not PanelEntry.objects.exists()


def test_erasure_on_request_deletes_the_panel_id(study, personas):
    session = PanelRun(study).complete()

    session_erase_on_request(
        session_id=session.pk,
        participant_code=session.participant.code,
        erased_by=personas["coordinator_a"],
    )

    assert not PanelEntry.objects.exists()


def test_a_screened_out_person_keeps_the_panel_id_and_cannot_start_again(study):
    run = PanelRun(study)
    key = next(iter(ELIGIBLE))
    run.consent(**{key: "0" if ELIGIBLE[key] == "1" else "1"})
    assert run.session.step == Step.INELIGIBLE

    response = revisit(study)

    assert response.status_code == 409 and "shs_participant" not in response.cookies
    assert "taken part in this study already" in response.content.decode()
    assert sessions_of(study).count() == 1 and PanelEntry.objects.count() == 1


def test_panel_ids_are_purged_after_the_retention_days(study):
    Study.objects.filter(pk=study.pk).update(panel_retention_days=10)
    with time_machine.travel(timezone.now() - timedelta(days=11), tick=False):
        PanelEntry.objects.create(study=study, panel_id="old")
    with time_machine.travel(timezone.now() - timedelta(days=9), tick=False):
        PanelEntry.objects.create(study=study, panel_id="recent")

    assert panel_ids_purge() == 1
    assert list(PanelEntry.objects.values_list("panel_id", flat=True)) == ["recent"]
    with time_machine.travel(timezone.now() + timedelta(days=2)):
        assert purge_panel_ids() == 1
    PanelEntry.objects.create(study=study, panel_id="new")
    with time_machine.travel(timezone.now() + timedelta(days=11)):
        call_command("purge_panel_ids", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert not PanelEntry.objects.exists()


def test_the_coordinator_sets_the_panel_parameter_retention_and_quota(study, client_for):
    coordinator = client_for("coordinator_a")

    saved = edit(
        coordinator,
        study,
        mode="remote",
        panel_parameter="PID",
        panel_retention_days=14,
        quota_per_system=50,
    )
    refused = edit(coordinator, study, mode="remote", panel_parameter="p id&x=1")

    assert saved.status_code == 302 and refused.status_code == 200
    study.refresh_from_db()
    fields = (study.panel_parameter, study.panel_retention_days, study.quota_per_system)
    assert fields == ("PID", 14, 50)


@pytest.mark.django_db(transaction=True)
def test_two_starts_with_one_panel_id_at_once_make_one_session(postgres_only, study):
    responses = []

    def start(_index):
        close_old_connections()
        data = {"action": "start", "language": "en", "panel_id": PID}
        responses.append(Client().post(take_url(study), data))

    assert _in_threads(4, start) == []

    [session] = sessions_of(study)
    # The first start gets the session; the others are told where it runs.
    assert sorted(r.status_code for r in responses) == [302, 409, 409, 409]
    [started] = [r for r in responses if r.status_code == 302]
    assert started.url == f"/sessions/{session.token}/"
    assert [r for r in responses if "shs_participant" in r.cookies] == [started]
    assert PanelEntry.objects.get().session_id == session.pk
