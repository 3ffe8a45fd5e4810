import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from surveys.models import LLMSystem, Study, StudyMembership


def _study_form(**overrides):
    data = {
        "title": "Perceived reliability 2027",
        "slug": "pr-2027",
        "description": "",
        "status": "draft",
        "languages": ["en", "de"],
        "prompting_regime": "Supervised, two-category protocol",
        "min_verified_prompts": 3,
        "min_glatteis_prompts": 3,
        "small_sample_evaluations": 30,
        "speeding_seconds": 20,
        "inactivity_timeout_minutes": 90,
        "allow_pilot_sessions": "on",
        "target_consent": 5,
        "target_block1_interaction": 15,
        "target_block1_shs": 5,
        "target_block2_interaction": 15,
        "target_block2_shs": 5,
        "target_feedback": 5,
        "target_demographics": 2,
    }
    data.update(overrides)
    return data


def test_coordinator_creates_a_study_and_becomes_its_coordinator(client_for, personas):
    client = client_for("coordinator_a")

    response = client.post(reverse("surveys:study_create"), _study_form(target_block1_shs=7))

    study = Study.objects.get(slug="pr-2027")
    assert response.status_code == 302
    assert study.languages == ["en", "de"]
    assert study.target_minutes("block1_shs") == 7
    assert study.target_minutes("consent") == 5
    assert StudyMembership.objects.get(study=study).user == personas["coordinator_a"]


def test_duplicate_slug_is_refused_and_nothing_changes(client_for, study_a):
    client = client_for("coordinator_a")

    response = client.post(reverse("surveys:study_create"), _study_form(slug=study_a.slug))

    assert response.status_code == 200
    assert "slug" in response.context["form"].errors
    assert Study.objects.filter(slug=study_a.slug).count() == 1
    assert Study.objects.count() == 2


def test_study_needs_a_language(client_for, personas):
    response = client_for("coordinator_a").post(
        reverse("surveys:study_create"), _study_form(languages=[])
    )
    assert "languages" in response.context["form"].errors
    assert not Study.objects.filter(slug="pr-2027").exists()


def test_unknown_language_is_refused(client_for, personas):
    response = client_for("coordinator_a").post(
        reverse("surveys:study_create"), _study_form(languages=["en", "xx"])
    )
    assert "languages" in response.context["form"].errors


@pytest.mark.parametrize("field", ["languages", "fluency_languages"])
def test_the_study_model_refuses_unknown_language_codes(field):
    study = Study(title="T", slug="t", **{"languages": ["en"], field: ["en", "xx", "yy"]})

    with pytest.raises(ValidationError) as refused:
        study.clean()

    assert refused.value.message_dict == {field: ["Unknown language code(s): xx, yy"]}


def test_system_without_a_name_is_refused(client_for, study_a):
    response = client_for("coordinator_a").post(
        reverse("surveys:system_create", args=[study_a.slug]), {"name": "   ", "active": "on"}
    )
    assert response.status_code == 200
    assert "name" in response.context["form"].errors
    assert study_a.systems.count() == 5


def test_system_name_must_be_unique_within_the_study(client_for, study_a):
    existing = study_a.systems.first().name
    response = client_for("coordinator_a").post(
        reverse("surveys:system_create", args=[study_a.slug]), {"name": existing.upper()}
    )
    assert "name" in response.context["form"].errors
    assert study_a.systems.count() == 5


def test_coordinator_adds_a_system_with_its_collection_window(client_for, study_a):
    response = client_for("coordinator_a").post(
        reverse("surveys:system_create", args=[study_a.slug]),
        {
            "name": "Mistral",
            "vendor": "Mistral AI",
            "access_mode": "Public inference platform",
            "access_url": "https://chat.mistral.ai/",
            "collection_start": "2025-10-01",
            "collection_end": "2025-11-30",
            "active": "on",
        },
    )
    assert response.status_code == 302
    system = LLMSystem.objects.get(study=study_a, name="Mistral")
    assert str(system.collection_end) == "2025-11-30"


def test_collection_window_must_not_end_before_it_starts(client_for, study_a):
    response = client_for("coordinator_a").post(
        reverse("surveys:system_create", args=[study_a.slug]),
        {"name": "Late", "collection_start": "2025-11-30", "collection_end": "2025-10-01"},
    )
    assert "collection_end" in response.context["form"].errors
    assert not LLMSystem.objects.filter(name="Late").exists()


def test_study_list_shows_only_own_studies(client_for, study_a, study_b):
    response = client_for("experimenter_a").get(reverse("surveys:study_list"))
    content = response.content.decode()
    assert study_a.title in content
    assert study_b.title not in content


def test_the_small_sample_threshold_is_set_in_the_study_form(client_for, personas):
    client = client_for("coordinator_a")
    refused = client.post(reverse("surveys:study_create"), _study_form(small_sample_evaluations=0))
    assert "small_sample_evaluations" in refused.context["form"].errors
    assert not Study.objects.filter(slug="pr-2027").exists()

    client.post(reverse("surveys:study_create"), _study_form(small_sample_evaluations=50))
    assert Study.objects.get(slug="pr-2027").small_sample_evaluations == 50
    assert Study().small_sample_evaluations == 30  # the paper's "at least 30 users"


def test_the_speeding_threshold_is_set_in_the_study_form(client_for, personas):
    client = client_for("coordinator_a")
    for bad in (-1, 601, ""):
        refused = client.post(reverse("surveys:study_create"), _study_form(speeding_seconds=bad))
        assert "speeding_seconds" in refused.context["form"].errors
    assert not Study.objects.filter(slug="pr-2027").exists()

    client.post(reverse("surveys:study_create"), _study_form(speeding_seconds=45))
    study = Study.objects.get(slug="pr-2027")
    assert study.speeding_seconds == 45
    assert Study().speeding_seconds == 20  # 2 s for each of the ten items

    client.post(reverse("surveys:study_edit", args=[study.slug]), _study_form(speeding_seconds=0))
    assert Study.objects.get(pk=study.pk).speeding_seconds == 0  # the flag turned off


def test_blinding_and_the_time_hint_are_off_unless_the_coordinator_turns_them_on(
    client_for, personas
):
    client = client_for("coordinator_a")
    client.post(reverse("surveys:study_create"), _study_form())
    plain = Study.objects.get(slug="pr-2027")
    assert (plain.blind_system_names, plain.participant_time_hint) == (False, False)

    client.post(
        reverse("surveys:study_edit", args=[plain.slug]),
        _study_form(blind_system_names="on", participant_time_hint="on"),
    )

    study = Study.objects.get(pk=plain.pk)
    assert (study.blind_system_names, study.participant_time_hint) == (True, True)
