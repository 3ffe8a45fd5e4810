"""The naturalistic task is a text per language offered, like the consent
(docs/design/remote.md §11.5): each participant reads it in their own
language, the coordinator writes each language on its own page, and the
readiness check refuses activation while a language lacks its task."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse

from surveys.models import Study, StudySession, TaskText
from surveys.readiness import StudyNotReady, study_readiness, study_status_change
from tests.surveys.remote import RemoteRun, make_remote_study
from tests.surveys.runner import SessionRun

TASKS = {
    "en": "Plan a weekend trip to Vienna with the help of the system.",
    "de": "Planen Sie mit Hilfe des Systems ein Wochenende in Wien.",
    "fr": "Préparez un week-end à Vienne avec le système.",
}
BEFORE = [("surveys", "0012_chat_limits")]
AFTER = [("surveys", "0013_task_texts")]


def naturalistic(study: Study) -> Study:
    Study.objects.filter(pk=study.pk).update(
        protocol=Study.Protocol.NATURALISTIC, min_turns=1, min_minutes=0
    )
    for language, text in TASKS.items():
        study.task_texts.filter(language=language).update(text=text)
    study.refresh_from_db()
    return study


def _draft(study: Study) -> Study:
    Study.objects.filter(pk=study.pk).update(status=Study.Status.DRAFT)
    study.refresh_from_db()
    return study


# -- what participants read -----------------------------------------------------------


@pytest.mark.parametrize("language", ["fr", "de"])
def test_a_remote_participant_reads_the_task_in_their_language(db, llm_server, settings, language):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    participant = RemoteRun(naturalistic(make_remote_study(llm_server)), language=language)
    participant.consent()

    page = participant.get().content.decode()

    assert TASKS[language] in page
    assert TASKS["en"] not in page


def test_a_supervised_participant_reads_the_task_in_the_sessions_language(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), naturalistic(study_a), language="de")
    run.consent()
    run.hand_back()

    page = run.get().content.decode()

    assert TASKS["de"] in page
    assert TASKS["en"] not in page


# -- readiness and sessions -----------------------------------------------------------


def test_a_naturalistic_study_without_a_french_task_cannot_be_activated(study_a, client_for):
    # Given: a draft naturalistic study whose French task was never written.
    study = _draft(naturalistic(study_a))
    study.task_texts.filter(language="fr").delete()

    # When: the coordinator activates it.
    client = client_for("coordinator_a")
    response = client.post(reverse("surveys:study_status", args=[study.slug]), {"status": "active"})

    # Then: it stays a draft, and the study page names the language.
    assert response.status_code == 302
    study.refresh_from_db()
    assert study.status == Study.Status.DRAFT
    page = client.get(reverse("surveys:study_detail", args=[study.slug])).content.decode()
    assert "✗ Naturalistic task: French: <strong>Not written yet.</strong>" in page
    assert "✓ Naturalistic task: German" in page
    with pytest.raises(StudyNotReady, match="Naturalistic task: French"):
        study_status_change(study=study, status=Study.Status.ACTIVE)


def test_an_empty_task_counts_as_missing(study_a, personas):
    study = _draft(naturalistic(study_a))
    study.task_texts.filter(language="de").update(text="")

    missing = [check.label for check in study_readiness(study) if not check.ok]

    assert missing == ["Naturalistic task: German"]


def test_writing_the_last_task_lets_the_study_become_active(study_a, personas):
    study = _draft(naturalistic(study_a))
    study.task_texts.filter(language="fr").delete()
    TaskText.objects.create(study=study, language="fr", text=TASKS["fr"])

    assert study_status_change(study=study, status=Study.Status.ACTIVE).status == "active"


def test_the_two_category_protocol_needs_no_task(study_a, personas):
    study = _draft(study_a)
    study.task_texts.all().delete()

    assert all(check.ok for check in study_readiness(study))
    assert not any("task" in check.label for check in study_readiness(study))


def test_no_real_session_starts_in_a_language_without_its_task(study_a, client_for):
    # Given: an active naturalistic study whose French task went missing (a language added later).
    naturalistic(study_a).task_texts.filter(language="fr").delete()
    client = client_for("experimenter_a")

    response = client.post(
        reverse("surveys:session_start", args=[study_a.slug]), {"language": "fr"}
    )

    assert response.status_code == 302
    assert not StudySession.objects.exists()
    assert "There is no task in this language yet." in client.get(response.url).content.decode()


# -- the coordinator's pages ----------------------------------------------------------


def test_the_coordinator_writes_the_task_of_each_language(study_a, client_for):
    study = naturalistic(study_a)
    study.task_texts.filter(language="fr").delete()
    client = client_for("coordinator_a")
    listing = client.get(reverse("surveys:task_text_list", args=[study.slug])).content.decode()
    assert TASKS["de"] in listing
    assert "Not written yet" in listing

    response = client.post(
        reverse("surveys:task_text_edit", args=[study.slug, "fr"]), {"text": f"  {TASKS['fr']} "}
    )

    assert response.status_code == 302
    assert TaskText.objects.get(study=study, language="fr").text == TASKS["fr"]
    assert TaskText.objects.get(study=study, language="en").text == TASKS["en"]
    detail = client.get(reverse("surveys:study_detail", args=[study.slug])).content.decode()
    assert reverse("surveys:task_text_list", args=[study.slug]) in detail


def test_an_empty_task_is_refused_and_changes_nothing(study_a, client_for):
    study = naturalistic(study_a)

    response = client_for("coordinator_a").post(
        reverse("surveys:task_text_edit", args=[study.slug, "de"]), {"text": "   "}
    )

    assert response.status_code == 200
    assert "Write the task participants read in this language." in response.content.decode()
    assert TaskText.objects.get(study=study, language="de").text == TASKS["de"]


def test_a_language_the_study_does_not_offer_has_no_task_page(study_a, client_for):
    Study.objects.filter(pk=study_a.pk).update(languages=["en", "de"])

    response = client_for("coordinator_a").post(
        reverse("surveys:task_text_edit", args=[study_a.slug, "fr"]), {"text": "Tâche"}
    )

    assert response.status_code == 404


@pytest.mark.parametrize("persona", ["experimenter_a", "coordinator_b", "outsider"])
def test_only_the_studys_coordinators_write_its_task(persona, study_a, client_for):
    client = client_for(persona)

    listing = client.get(reverse("surveys:task_text_list", args=[study_a.slug]))
    response = client.post(
        reverse("surveys:task_text_edit", args=[study_a.slug, "en"]), {"text": "Something else."}
    )

    assert listing.status_code in (403, 404)
    assert response.status_code in (403, 404)
    assert not TaskText.objects.filter(text="Something else.").exists()


# -- the migration --------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_single_task_moves_to_the_studys_first_language():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps.get_model("surveys", "Study")
    written = old.objects.create(
        title="Written",
        slug="written",
        languages=["fr", "en"],
        protocol="naturalistic",
        task_description="Préparez un voyage.",
    )
    old.objects.create(title="Unwritten", slug="unwritten", languages=["en"])

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    tasks = TaskText.objects.values_list("study_id", "language", "text")
    assert list(tasks) == [(written.pk, "fr", "Préparez un voyage.")]
