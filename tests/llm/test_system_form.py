"""The coordinator's form for a connected system (docs/design/systems.md §10.1).

A refused URL changes nothing; the key's variable is named, never shown.
"""

import pytest
from django.urls import reverse

from surveys.models import LLMSystem

SECRET = "sk-live-4c2e8a0f6b1d3957e2a4c6b8d0f1e3a5"


@pytest.fixture
def strict(settings):
    settings.LLM_ALLOW_HTTP_LOOPBACK = False
    settings.LLM_ALLOW_PRIVATE_NETWORKS = False
    return settings


def connected(**fields) -> dict:
    return {
        "name": "Hosted model",
        "kind": "connected",
        "base_url": "https://8.8.8.8/v1",
        "model_name": "gpt-test",
        "active": "on",
        **fields,
    }


def create(client_for, study, data):
    return client_for("coordinator_a").post(
        reverse("surveys:system_create", args=[study.slug]), data
    )


def test_coordinator_adds_a_connected_system(client_for, study_a, strict):
    response = create(
        client_for,
        study_a,
        connected(
            api_key_env="SHS_LLM_KEY_HOSTED",
            system_prompt="Answer briefly.",
            temperature="0.7",
            max_tokens="400",
        ),
    )

    assert response.status_code == 302
    system = LLMSystem.objects.get(study=study_a, name="Hosted model")
    assert system.is_connected
    assert (system.base_url, system.model_name) == ("https://8.8.8.8/v1", "gpt-test")
    assert (system.api_key_env, system.system_prompt) == ("SHS_LLM_KEY_HOSTED", "Answer briefly.")
    assert (system.temperature, system.max_tokens) == (0.7, 400)


def test_the_demo_server_on_loopback_is_accepted_when_loopback_is_allowed(
    client_for, study_a, strict, llm_server
):
    strict.LLM_ALLOW_HTTP_LOOPBACK = True
    response = create(client_for, study_a, connected(base_url=llm_server))
    assert response.status_code == 302
    assert LLMSystem.objects.get(name="Hosted model").base_url == llm_server


@pytest.mark.parametrize(
    "url",
    [
        "http://8.8.8.8/v1",
        "https://169.254.169.254/latest/meta-data",
        "https://10.0.0.1/v1",
        "https://172.16.5.4/v1",
        "https://192.168.0.10/v1",
        "https://[fc00::1]/v1",
        "https://[::ffff:10.0.0.1]/v1",
        "https://0.0.0.0/v1",
        "http://127.0.0.1:8001/v1",
        "http://localhost:8001/v1",
        "https://user:secret@8.8.8.8/v1",
        "https://no-such-host.invalid/v1",
        "ftp://8.8.8.8/",
    ],
)
def test_a_refused_url_adds_nothing(client_for, study_a, strict, url):
    response = create(client_for, study_a, connected(base_url=url))

    assert response.status_code == 200
    assert "base_url" in response.context["form"].errors
    assert not LLMSystem.objects.filter(name="Hosted model").exists()


@pytest.mark.parametrize(
    "url", ["https://169.254.169.254/latest", "https://10.0.0.1/v1", "http://127.0.0.1:8001/v1"]
)
def test_a_refused_url_changes_nothing_on_an_existing_system(client_for, study_a, strict, url):
    system = LLMSystem.objects.create(
        study=study_a, name="Hosted model", kind="connected",
        base_url="https://8.8.8.8/v1", model_name="gpt-test",
    )  # fmt: skip

    response = client_for("coordinator_a").post(
        reverse("surveys:system_edit", args=[study_a.slug, system.pk]),
        connected(base_url=url, model_name="other-model", vendor="Changed"),
    )

    assert response.status_code == 200
    assert "base_url" in response.context["form"].errors
    system.refresh_from_db()
    assert (system.base_url, system.model_name, system.vendor) == (
        "https://8.8.8.8/v1",
        "gpt-test",
        "",
    )


def test_private_networks_are_accepted_when_the_setting_allows_them(client_for, study_a, strict):
    strict.LLM_ALLOW_PRIVATE_NETWORKS = True
    response = create(client_for, study_a, connected(base_url="https://10.1.2.3/v1"))
    assert response.status_code == 302


def test_a_connected_system_needs_a_url_and_a_model(client_for, study_a, strict):
    response = create(client_for, study_a, connected(base_url="", model_name=" "))

    errors = response.context["form"].errors
    assert "base_url" in errors and "model_name" in errors
    assert not LLMSystem.objects.filter(name="Hosted model").exists()


def test_an_external_system_needs_no_endpoint(client_for, study_a, strict):
    response = create(client_for, study_a, {"name": "Web chat", "kind": "external"})
    assert response.status_code == 302
    assert not LLMSystem.objects.get(name="Web chat").is_connected


@pytest.mark.parametrize(
    ("field", "value"),
    [("temperature", "2.5"), ("temperature", "-0.1"), ("max_tokens", "0"), ("max_tokens", "-5")],
)
def test_generation_parameters_out_of_range_are_refused(client_for, study_a, strict, field, value):
    response = create(client_for, study_a, connected(**{field: value}))
    assert field in response.context["form"].errors
    assert not LLMSystem.objects.filter(name="Hosted model").exists()


def test_a_key_typed_where_its_variable_name_belongs_is_refused_and_not_shown_again(
    client_for, study_a, strict
):
    response = create(client_for, study_a, connected(api_key_env=SECRET))

    assert "api_key_env" in response.context["form"].errors
    assert SECRET not in response.content.decode()
    assert not LLMSystem.objects.filter(name="Hosted model").exists()


def test_the_form_explains_that_only_the_variable_name_is_stored(client_for, study_a):
    page = client_for("coordinator_a").get(reverse("surveys:system_create", args=[study_a.slug]))
    assert "never the key itself" in page.content.decode()


def test_the_systems_list_says_whether_the_key_variable_is_set_never_its_value(
    client_for, study_a, monkeypatch, django_assert_max_num_queries
):
    for number in range(3):
        LLMSystem.objects.create(
            study=study_a, name=f"Hosted {number}", kind="connected",
            base_url="https://8.8.8.8/v1", model_name="m", api_key_env=f"SHS_LLM_KEY_{number}",
        )  # fmt: skip
    monkeypatch.setenv("SHS_LLM_KEY_0", SECRET)
    monkeypatch.delenv("SHS_LLM_KEY_1", raising=False)
    coordinator = client_for("coordinator_a")
    url = reverse("surveys:study_detail", args=[study_a.slug])
    coordinator.get(url)  # warm up the session and the translation catalogue

    with django_assert_max_num_queries(12):
        page = coordinator.get(url).content.decode()

    assert "key variable SHS_LLM_KEY_0 is set" in page
    assert "key variable SHS_LLM_KEY_1 is NOT set" in page
    assert SECRET not in page
    assert page.count("connected") >= 3


def test_an_experimenter_sees_which_systems_are_connected_but_not_the_key_status(
    client_for, study_a
):
    LLMSystem.objects.create(
        study=study_a, name="Hosted", kind="connected",
        base_url="https://8.8.8.8/v1", model_name="m", api_key_env="SHS_LLM_KEY_X",
    )  # fmt: skip
    page = client_for("experimenter_a").get(reverse("surveys:study_detail", args=[study_a.slug]))
    content = page.content.decode()
    assert "connected" in content
    assert "SHS_LLM_KEY_X" not in content


def test_the_edit_page_tells_the_coordinator_whether_the_key_is_set(
    client_for, study_a, monkeypatch
):
    system = LLMSystem.objects.create(
        study=study_a, name="Hosted", kind="connected",
        base_url="https://8.8.8.8/v1", model_name="m", api_key_env="SHS_LLM_KEY_EDIT",
    )  # fmt: skip
    monkeypatch.setenv("SHS_LLM_KEY_EDIT", SECRET)
    url = reverse("surveys:system_edit", args=[study_a.slug, system.pk])

    content = client_for("coordinator_a").get(url).content.decode()

    assert "key variable SHS_LLM_KEY_EDIT is set" in content
    assert SECRET not in content


def test_other_studies_coordinators_cannot_edit_the_system(client_for, study_a):
    system = study_a.systems.first()
    url = reverse("surveys:system_edit", args=[study_a.slug, system.pk])
    response = client_for("coordinator_b").post(url, connected(base_url="https://1.1.1.1/v1"))
    assert response.status_code == 404
    system.refresh_from_db()
    assert not system.is_connected


def test_the_refusal_is_in_the_coordinators_language(client_for, study_a, strict):
    coordinator = client_for("coordinator_a")
    coordinator.cookies["django_language"] = "de"

    response = coordinator.post(
        reverse("surveys:system_create", args=[study_a.slug]),
        connected(base_url="https://169.254.169.254/latest"),
    )

    assert "private, link-lokale oder reservierte Adresse" in response.content.decode()


# Presets and the request's mapping (surveys/system_presets.py).

MAPPING = ("token_parameter", "stream_usage", "idle_timeout_seconds", "answer_timeout_seconds")


def _mapping(system) -> tuple:
    return tuple(getattr(system, name) for name in MAPPING)


@pytest.mark.parametrize(
    ("preset", "expected"),
    [
        ("openai", ("max_completion_tokens", True, 60, 300)),
        ("azure", ("max_tokens", False, 60, 300)),
        ("vllm", ("max_tokens", True, 120, 600)),
        ("llamacpp", ("max_tokens", True, 120, 600)),
        ("ollama", ("max_tokens", True, 120, 600)),
        ("gateway", ("max_tokens", False, 120, 600)),
        ("other", ("max_tokens", True, None, None)),
    ],
)
def test_a_preset_fills_in_the_fields_left_at_their_defaults(
    client_for, study_a, strict, preset, expected
):
    # As the page posts a new form: the checkbox at its default (on), the rest empty.
    response = create(client_for, study_a, connected(server_preset=preset, stream_usage="on"))

    assert response.status_code == 302
    system = LLMSystem.objects.get(name="Hosted model")
    assert (system.server_preset, *_mapping(system)) == (preset, *expected)


def test_a_value_typed_by_hand_is_kept_over_the_preset(client_for, study_a, strict):
    response = create(
        client_for,
        study_a,
        connected(server_preset="ollama", stream_usage="on", idle_timeout_seconds="30"),
    )

    assert response.status_code == 302
    system = LLMSystem.objects.get(name="Hosted model")
    assert _mapping(system) == ("max_tokens", True, 30, 600)


def test_another_preset_replaces_what_the_previous_one_filled_in(client_for, study_a, strict):
    create(client_for, study_a, connected(server_preset="openai", stream_usage="on"))
    system = LLMSystem.objects.get(name="Hosted model")
    edit = reverse("surveys:system_edit", args=[study_a.slug, system.pk])
    coordinator = client_for("coordinator_a")

    # The page posts back what the OpenAI preset put there, with the new server.
    response = coordinator.post(edit, connected(
        server_preset="azure", token_parameter="max_completion_tokens", stream_usage="on",
        idle_timeout_seconds="60", answer_timeout_seconds="300",
    ))  # fmt: skip

    assert response.status_code == 302
    system.refresh_from_db()
    assert _mapping(system) == ("max_tokens", False, 60, 300)


def test_an_unchanged_preset_leaves_the_coordinators_choices_alone(client_for, study_a, strict):
    create(client_for, study_a, connected(server_preset="openai", stream_usage="on"))
    system = LLMSystem.objects.get(name="Hosted model")
    edit = reverse("surveys:system_edit", args=[study_a.slug, system.pk])

    # Back to max_tokens by hand: the preset must not switch it again.
    client_for("coordinator_a").post(edit, connected(
        server_preset="openai", token_parameter="max_tokens", stream_usage="on",
        idle_timeout_seconds="60", answer_timeout_seconds="300",
    ))  # fmt: skip

    system.refresh_from_db()
    assert system.token_parameter == "max_tokens"


def test_the_form_shows_the_connection_fields_and_the_presets(client_for, study_a):
    page = client_for("coordinator_a").get(reverse("surveys:system_create", args=[study_a.slug]))
    content = page.content.decode()
    for name in ("server_preset", *MAPPING, "extra_body", "max_answer_chars"):
        assert f'name="{name}"' in content
    assert 'id="server-presets"' in content and "max_completion_tokens" in content


def test_extra_fields_are_stored_as_an_object(client_for, study_a, strict):
    response = create(client_for, study_a, connected(extra_body='{"top_p": 0.9, "seed": 7}'))
    assert response.status_code == 302
    assert LLMSystem.objects.get(name="Hosted model").extra_body == {"top_p": 0.9, "seed": 7}


def test_no_extra_fields_is_an_empty_object(client_for, study_a, strict):
    assert create(client_for, study_a, connected(extra_body="")).status_code == 302
    assert LLMSystem.objects.get(name="Hosted model").extra_body == {}


@pytest.mark.parametrize(
    ("extra_body", "words"),
    [
        ("[1, 2]", "JSON object"),
        ('"top_p"', "JSON object"),
        ("{not json", "JSON"),
        ('{"model": "other"}', "model"),
        ('{"messages": []}', "messages"),
        ('{"stream": false}', "stream"),
        ('{"stream_options": {}}', "stream_options"),
        ('{"max_tokens": 5}', "max_tokens"),
        ('{"max_completion_tokens": 5}', "max_completion_tokens"),
        ("{" + ", ".join(f'"k{n}": {n}' for n in range(21)) + "}", "At most 20"),
        ('{"stop": "' + "x" * 2100 + '"}', "2048 bytes"),
    ],
)
def test_unusable_extra_fields_are_refused_with_a_reason(
    client_for, study_a, strict, extra_body, words
):
    response = create(client_for, study_a, connected(extra_body=extra_body))

    assert response.status_code == 200
    errors = " ".join(response.context["form"].errors.get("extra_body", []))
    assert words in errors
    assert not LLMSystem.objects.filter(name="Hosted model").exists()
