"""A coordinator makes a study remote: the mode and completion URL in the
study's settings, activation only with connected systems, and the public link
on the study page (docs/design/remote.md §11.1)."""

import pytest
from django.urls import reverse

from surveys.models import LLMSystem, Study, StudyMembership
from tests.surveys.test_studies import _study_form


@pytest.fixture
def coordinator(client_for):
    return client_for("coordinator_a")


def edit(client, study, **fields):
    data = _study_form(title=study.title, slug=study.slug, languages=study.languages, **fields)
    return client.post(reverse("surveys:study_edit", args=[study.slug]), data)


def connect_all(study):
    endpoint = {"base_url": "https://llm.example.org/v1", "model_name": "demo"}
    study.systems.update(kind=LLMSystem.Kind.CONNECTED, **endpoint)


def activate(client, study):
    Study.objects.filter(pk=study.pk).update(status=Study.Status.DRAFT)
    client.post(reverse("surveys:study_status", args=[study.slug]), {"status": "active"})
    study.refresh_from_db()
    return study.status


def test_the_coordinator_sets_the_mode_and_a_completion_url(study_a, coordinator):
    url = "https://app.prolific.example/submissions/complete?cc={code}"
    connect_all(study_a)

    response = edit(coordinator, study_a, mode="remote", completion_url=url)

    assert response.status_code == 302
    study_a.refresh_from_db()
    assert (study_a.mode, study_a.completion_url) == ("remote", url)


@pytest.mark.parametrize(
    "url",
    [
        "http://panel.example.org/done?cc={code}",  # not https
        "https://panel.example.org/done?cc={code}&x={other}",  # an unknown placeholder
        "https://user:secret@panel.example.org/done",  # credentials in the URL
        "javascript:alert(1)//{code}",
        "not a url",
    ],
)
def test_a_bad_completion_url_is_refused_and_nothing_changes(url, study_a, coordinator):
    response = edit(coordinator, study_a, mode="remote", completion_url=url)

    assert response.status_code == 200
    assert "completion_url" in response.context["form"].errors
    study_a.refresh_from_db()
    assert (study_a.mode, study_a.completion_url) == ("supervised", "")


def test_a_remote_study_with_external_systems_is_not_activated(study_a, coordinator):
    Study.objects.filter(pk=study_a.pk).update(mode=Study.Mode.REMOTE)
    external = study_a.systems.first()

    assert activate(coordinator, study_a) == Study.Status.DRAFT
    page = coordinator.get(reverse("surveys:study_detail", args=[study_a.slug])).content.decode()
    assert "every active system is connected" in page and external.name in page

    connect_all(study_a)
    assert activate(coordinator, study_a) == Study.Status.ACTIVE


def test_a_remote_study_needs_no_experimenter(study_a, coordinator):
    connect_all(study_a)
    Study.objects.filter(pk=study_a.pk).update(mode=Study.Mode.REMOTE)
    StudyMembership.objects.filter(study=study_a, role=StudyMembership.Role.EXPERIMENTER).delete()

    assert activate(coordinator, study_a) == Study.Status.ACTIVE


def test_the_study_page_shows_coordinators_the_public_link(study_a, study_b, client_for):
    Study.objects.filter(pk=study_a.pk).update(mode=Study.Mode.REMOTE)
    study_a.refresh_from_db()
    link = reverse("surveys:remote_take", args=[study_a.public_code])

    page = client_for("coordinator_a").get(reverse("surveys:study_detail", args=[study_a.slug]))

    assert f"http://testserver{link}" in page.content.decode()
    experimenter = client_for("experimenter_a").get(
        reverse("surveys:study_detail", args=[study_a.slug])
    )
    assert link not in experimenter.content.decode()


def test_public_codes_are_random_not_derived_from_ids(study_a, study_b):
    assert study_a.public_code != study_b.public_code
    assert len(study_a.public_code) >= 16
    assert str(study_a.pk) != study_a.public_code and study_a.slug not in study_a.public_code


def test_an_active_study_with_external_systems_cannot_turn_remote(study_a, coordinator):
    response = edit(coordinator, study_a, mode="remote")

    assert response.status_code == 200
    assert "every active system is connected" in str(response.context["form"].errors["mode"])
    study_a.refresh_from_db()
    assert study_a.mode == Study.Mode.SUPERVISED
    connect_all(study_a)
    assert edit(coordinator, study_a, mode="remote").status_code == 302
