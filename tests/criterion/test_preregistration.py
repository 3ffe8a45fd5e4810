"""The pre-registration of the criterion-validity study (docs/design/criterion.md §13.1,
paper 8.2): the paper's defaults, the fingerprint, the freeze when the first
non-pilot session starts, versions after it, deviations, refusals and access."""

import hashlib
import json
import threading

import pytest
from django.core.exceptions import ValidationError
from django.db import close_old_connections, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from criterion.models import PreRegistration
from criterion.preregistration.services import (
    current_version,
    plan_for_report,
    save_version,
)
from surveys.models import Participant, StudySession
from surveys.protocol.flow import session_start


def _page(study):
    return reverse("criterion:preregistration", args=[study.slug])


def _edit(study):
    return reverse("criterion:preregistration_edit", args=[study.slug])


def _form_data(client, study, **changes):
    """What the edit form posts, as the coordinator's browser would send it."""
    form = client.get(_edit(study)).context["form"]
    data = {name: form[name].value() for name in form.fields}
    return {name: "" if value is None else value for name, value in {**data, **changes}.items()}


def _start(study, personas, *, pilot=False):
    starter = personas["coordinator_a"] if pilot else personas["experimenter_a"]
    return session_start(study=study, experimenter=starter, language="en", is_pilot=pilot)


def _stored(study):
    return list(PreRegistration.objects.filter(study=study).order_by("version").values())


# -- the paper's defaults and the fingerprint ------------------------------------


def test_the_form_offers_the_papers_values(study_a, client_for):
    form = client_for("coordinator_a").get(_edit(study_a)).context["form"]

    # Paper 8.2: H1 r >= .40, falsification below r = .20, N >= 200 interactions.
    assert form["h1_threshold"].value() == 0.40
    assert form["falsification_threshold"].value() == 0.20
    assert form["planned_n"].value() == 200
    assert form["alpha"].value() == 0.05
    assert form["sidedness"].value() == "one_sided"
    assert form["primary_analysis"].value() == "clustered"


def test_without_a_registration_the_plan_is_empty_and_the_defaults_are_the_papers(
    study_a, personas
):
    assert plan_for_report(study_a) == {}

    save_version(study_a, {}, personas["coordinator_a"])
    plan = plan_for_report(study_a)

    assert plan["frozen"] is None and not plan["data_collection_began"]
    assert plan["plan_kwargs"] == {
        "h1_threshold": 0.40,
        "falsification_threshold": 0.20,
        "alpha": 0.05,
        "sidedness": "one_sided",
        "primary": "clustered",
        "seed": 20240,
        "resamples": 2000,
        "planned_n": 200,
        "h3_predictor": "DP",
    }


def test_the_fingerprint_is_the_sha256_of_the_canonical_json(study_a, client_for):
    coordinator = client_for("coordinator_a")
    text = "H2: Quellen — über alle Dimensionen.\r\nH3: residual."
    coordinator.post(_edit(study_a), _form_data(coordinator, study_a, alpha="0.01", text=text))

    version = PreRegistration.objects.get(study=study_a)
    # Written out by hand: sorted keys, no spaces, UTF-8, CRLF stored as LF.
    canonical = (
        '{"alpha":0.01,"bootstrap_resamples":2000,"bootstrap_seed":20240,'
        '"falsification_threshold":0.2,"h1_threshold":0.4,"planned_n":200,'
        '"primary_analysis":"clustered","sidedness":"one_sided",'
        '"text":"H2: Quellen — über alle Dimensionen.\\nH3: residual."}'
    )
    expected = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert version.sha256 == expected
    download = coordinator.get(
        reverse("criterion:preregistration_canonical", args=[study_a.slug, 1])
    )
    assert download.content == canonical.encode("utf-8")
    page = coordinator.get(_page(study_a)).content.decode()
    assert expected in page and "recomputed now: matches" in page


def test_the_h3_predictor_enters_the_fingerprint_only_when_it_is_not_dp(study_a, client_for):
    # Versions registered before H3's predictor could be chosen registered the DP
    # form: their canonical JSON (above) has no such key and keeps its hash.
    coordinator = client_for("coordinator_a")
    coordinator.post(
        _edit(study_a), _form_data(coordinator, study_a, h3_predictor="presentation", text="x")
    )
    version = PreRegistration.objects.get(study=study_a)
    assert version.h3_predictor == "presentation"
    assert '"h3_predictor":"presentation"' in version.canonical_json()
    assert version.sha256 == hashlib.sha256(version.canonical_json().encode()).hexdigest()
    assert plan_for_report(study_a)["plan_kwargs"]["h3_predictor"] == "presentation"


# -- the freeze ------------------------------------------------------------------


def test_pilot_sessions_do_not_freeze_the_first_counted_session_does(study_a, personas):
    save_version(study_a, {}, personas["coordinator_a"])

    _start(study_a, personas, pilot=True)
    assert PreRegistration.objects.get(study=study_a).frozen_at is None
    assert current_version(study_a).frozen_at is None

    session = _start(study_a, personas)
    # Stamped as the session started (the receiver), before anything reads it.
    assert PreRegistration.objects.get(study=study_a).frozen_at == session.created_at


def test_a_session_made_without_signals_freezes_on_the_next_read(study_a, personas):
    """The lazy freeze is the guarantee: bulk_create sends no post_save."""
    version = save_version(study_a, {}, personas["coordinator_a"])
    systems = list(study_a.systems.all()[:2])
    (session,) = StudySession.objects.bulk_create(
        [
            StudySession(
                study=study_a,
                participant=Participant.objects.create(study=study_a),
                experimenter=personas["experimenter_a"],
                language="en",
                first_system=systems[0],
                second_system=systems[1],
                allocation_number=1,
            )
        ]
    )
    assert PreRegistration.objects.get(pk=version.pk).frozen_at is None

    assert current_version(study_a).frozen_at == session.created_at


def test_before_collection_a_save_corrects_version_1_in_place(study_a, client_for):
    coordinator = client_for("coordinator_a")
    coordinator.post(_edit(study_a), _form_data(coordinator, study_a))
    first = PreRegistration.objects.get(study=study_a).sha256

    response = coordinator.post(_edit(study_a), _form_data(coordinator, study_a, alpha="0.01"))

    (only,) = _stored(study_a)
    assert response.status_code == 302
    assert only["version"] == 1 and only["alpha"] == 0.01 and only["sha256"] != first
    assert not only["after_data_collection"] and only["frozen_at"] is None


def test_after_the_freeze_a_change_is_version_2_and_version_1_stays(study_a, personas, client_for):
    coordinator = client_for("coordinator_a")
    coordinator.post(_edit(study_a), _form_data(coordinator, study_a))
    _start(study_a, personas)
    (frozen_before,) = _stored(study_a)

    form_page = coordinator.get(_edit(study_a)).content.decode()
    response = coordinator.post(_edit(study_a), _form_data(coordinator, study_a, alpha="0.01"))

    frozen_after, second = _stored(study_a)
    assert "Saving creates version 2, marked as made after data collection began" in form_page
    assert response.status_code == 302
    assert frozen_after == frozen_before
    assert second["version"] == 2 and second["alpha"] == 0.01
    assert second["after_data_collection"] and second["frozen_at"] is None
    page = coordinator.get(_page(study_a)).content.decode()
    assert "Version 1 was frozen at" in page


def test_a_versions_made_after_collection_are_never_edited(study_a, personas):
    coordinator = personas["coordinator_a"]
    save_version(study_a, {}, coordinator)
    _start(study_a, personas)
    save_version(study_a, {"alpha": 0.01}, coordinator)

    save_version(study_a, {"alpha": 0.02}, coordinator)
    unchanged = save_version(study_a, {"alpha": 0.02}, coordinator)

    assert [row["alpha"] for row in _stored(study_a)] == [0.05, 0.01, 0.02]
    assert unchanged.version == 3


def test_a_save_prepared_before_the_freeze_is_shown_again_not_saved(study_a, personas, client_for):
    coordinator = client_for("coordinator_a")
    coordinator.post(_edit(study_a), _form_data(coordinator, study_a))
    data = _form_data(coordinator, study_a, alpha="0.01")  # the page says: corrects v1
    _start(study_a, personas)

    response = coordinator.post(_edit(study_a), data)

    assert response.status_code == 200
    assert "changed since you opened this page" in response.content.decode()
    assert [row["alpha"] for row in _stored(study_a)] == [0.05]
    assert coordinator.post(_edit(study_a), response.context["form"].data).status_code == 302
    assert [row["alpha"] for row in _stored(study_a)] == [0.05, 0.01]


def _in_thread(work, errors) -> threading.Thread:
    """Run `work` on its own database connection; its exception lands in `errors`."""

    def run():
        close_old_connections()
        try:
            work()
        except Exception as error:  # re-raised in the test thread by the assertion
            errors.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.django_db(transaction=True)
def test_a_save_waits_for_a_session_starting_at_the_same_moment(postgres_only, study_a, personas):
    """The session's transaction has frozen version 1 but not committed: the
    save must not correct version 1 in place (nor unfreeze it)."""
    save_version(study_a, {}, personas["coordinator_a"])
    started, release, errors = threading.Event(), threading.Event(), []

    def start_and_hold():
        with transaction.atomic():
            _start(study_a, personas)
            started.set()
            release.wait(timeout=30)

    def save():
        save_version(study_a, {"alpha": 0.01}, personas["coordinator_a"])

    starter = _in_thread(start_and_hold, errors)
    assert started.wait(timeout=30)
    saver = _in_thread(save, errors)
    saver.join(timeout=1)
    waited = saver.is_alive()
    release.set()
    starter.join(timeout=30)
    saver.join(timeout=30)

    assert errors == [] and waited
    first, second = _stored(study_a)
    assert first["alpha"] == 0.05 and first["frozen_at"] is not None
    assert second["alpha"] == 0.01 and second["after_data_collection"]


# -- the plan the report follows ---------------------------------------------------


def test_the_plan_lists_each_deviation_at_the_version_that_made_it(study_a, personas):
    coordinator = personas["coordinator_a"]
    frozen = save_version(study_a, {}, coordinator)
    _start(study_a, personas)
    save_version(study_a, {"alpha": 0.01}, coordinator)
    third = save_version(study_a, {"alpha": 0.01, "sidedness": "two_sided"}, coordinator)

    plan = json.loads(json.dumps(plan_for_report(study_a)))

    frozen.refresh_from_db()
    assert (plan["frozen"]["version"], plan["frozen"]["sha256"]) == (1, frozen.sha256)
    assert plan["frozen"]["frozen_at"] == frozen.frozen_at.isoformat()
    assert plan["followed"]["version"] == 3 and plan["followed"]["sha256"] == third.sha256
    deviations = plan["deviations"]
    assert [(d["field"], d["frozen_value"], d["new_value"], d["version"]) for d in deviations] == [
        ("alpha", 0.05, 0.01, 2),
        ("sidedness", "one_sided", "two_sided", 3),
    ]
    assert plan["deviations"][0]["label"] == "alpha level"
    assert plan["deviations"][1]["created_at"] == third.created_at.isoformat()
    assert plan["plan_kwargs"]["alpha"] == 0.01
    assert plan["plan_kwargs"]["sidedness"] == "two_sided"


def test_a_registration_made_after_collection_began_says_so(study_a, personas):
    _start(study_a, personas)

    save_version(study_a, {}, personas["coordinator_a"])
    plan = plan_for_report(study_a)

    assert plan["frozen"] is None and plan["data_collection_began"]
    assert plan["followed"]["after_data_collection"]
    assert not plan["registered_before_data_collection"]


def test_a_change_taken_back_is_listed_as_no_longer_in_force(study_a, personas):
    coordinator = personas["coordinator_a"]
    save_version(study_a, {}, coordinator)
    _start(study_a, personas)
    save_version(study_a, {"planned_n": 150}, coordinator)
    save_version(study_a, {"planned_n": 200}, coordinator)

    (deviation,) = plan_for_report(study_a)["deviations"]

    assert deviation["version"] == 2 and deviation["in_force"] is False


# -- refusals ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "tampered, field",
    [
        ({"alpha": "0.9"}, "alpha"),
        ({"alpha": "nan"}, "alpha"),
        ({"alpha": "0.5"}, "alpha"),  # the analysis takes alpha in (0, 0.5)
        ({"h1_threshold": "1.5"}, "h1_threshold"),
        ({"h1_threshold": "1"}, "h1_threshold"),  # no correlation exceeds 1
        ({"falsification_threshold": "0.5"}, "falsification_threshold"),  # above H1's .40
        ({"sidedness": "three_sided"}, "sidedness"),
        ({"bootstrap_resamples": "5"}, "bootstrap_resamples"),
    ],
)
def test_a_tampered_form_is_refused_and_nothing_changes(study_a, client_for, tampered, field):
    coordinator = client_for("coordinator_a")
    coordinator.post(_edit(study_a), _form_data(coordinator, study_a))
    before = _stored(study_a)

    response = coordinator.post(_edit(study_a), _form_data(coordinator, study_a, **tampered))

    assert response.status_code == 200
    assert response.context["form"].errors[field]
    assert 'role="alert"' in response.content.decode()
    assert _stored(study_a) == before


@pytest.mark.parametrize(
    "data",
    [{"alpha": 2}, {"alpha": float("inf")}, {"sidedness": "both"}, {"hypothesis": "H4"}],
)
def test_the_service_refuses_what_the_form_refuses(study_a, personas, data):
    with pytest.raises(ValidationError):
        save_version(study_a, data, personas["coordinator_a"])
    assert not PreRegistration.objects.exists()


# -- access ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "persona, page_status, edit_status",
    [
        ("coordinator_a", 200, 200),
        ("experimenter_a", 200, 404),
        ("coordinator_b", 404, 404),
        ("outsider", 404, 404),
    ],
)
def test_members_read_coordinators_edit(
    study_a, personas, client_for, persona, page_status, edit_status
):
    save_version(study_a, {}, personas["coordinator_a"])
    client = client_for(persona)
    canonical = reverse("criterion:preregistration_canonical", args=[study_a.slug, 1])

    assert client.get(_page(study_a)).status_code == page_status
    assert client.get(canonical).status_code == page_status
    assert client.get(_edit(study_a)).status_code == edit_status
    assert client.post(_edit(study_a), {"alpha": "0.01"}).status_code == edit_status
    assert [row["alpha"] for row in _stored(study_a)] == [0.05]


def test_the_study_page_links_to_the_criterion_pages(study_a, client_for):
    coordinators_page, experimenters_page = (
        client_for(persona).get(reverse("surveys:study_detail", args=[study_a.slug]))
        for persona in ("coordinator_a", "experimenter_a")
    )
    annotations = reverse("criterion:annotations", args=[study_a.slug])
    automated = reverse("criterion:automated_results", args=[study_a.slug])

    for page in (coordinators_page, experimenters_page):
        html = page.content.decode()
        assert "Criterion validity (paper 8.2)" in html
        assert f'href="{_page(study_a)}"' in html and f'href="{automated}"' in html
    # The annotations are the coordinators' page only.
    assert f'href="{annotations}"' in coordinators_page.content.decode()
    assert f'href="{annotations}"' not in experimenters_page.content.decode()


def test_the_page_costs_the_same_queries_with_many_versions(study_a, personas, client_for):
    coordinator = client_for("coordinator_a")
    save_version(study_a, {}, personas["coordinator_a"])
    _start(study_a, personas)

    def queries_for_page():
        with CaptureQueriesContext(connection) as captured:
            assert coordinator.get(_page(study_a)).status_code == 200
        return len(captured)

    save_version(study_a, {"alpha": 0.04}, personas["coordinator_a"])
    few = queries_for_page()
    for step in range(20):
        save_version(study_a, {"planned_n": 201 + step}, personas["coordinator_a"])
    many = queries_for_page()

    assert few == many
    assert many <= 12


@pytest.mark.parametrize(
    "language, heading, warning",
    [
        (
            "de",
            "Präregistrierung der Studie zur Kriteriumsvalidität",
            "Speichern erstellt Version 2",
        ),
        (
            "fr",
            "Préenregistrement de l’étude de validité de critère",
            "Enregistrer crée la version 2",
        ),
    ],
)
def test_the_pages_read_in_the_members_language(
    study_a, personas, client_for, language, heading, warning
):
    save_version(study_a, {}, personas["coordinator_a"])
    _start(study_a, personas)
    coordinator = client_for("coordinator_a")

    page = coordinator.get(_page(study_a), HTTP_ACCEPT_LANGUAGE=language).content.decode()
    form = coordinator.get(_edit(study_a), HTTP_ACCEPT_LANGUAGE=language).content.decode()

    assert heading in page and warning in form
    assert "What paper 8.2 pre-registers" not in page
    assert "The paper names none" not in form and "one-sided (in the predicted" not in form
