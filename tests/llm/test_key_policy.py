"""Which environment variables a connected system may take its key from (llm/keys.py).

Only the operator decides: a name must carry the prefix, never be one the
platform reads itself, and, once LLM_KEYS lists variables, be listed for the
system's study. A refused name is refused alike whether it is set or not.
"""

import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from llm import keys as key_rules
from llm.keys import RefusedKeyVariable
from shs_platform.key_variables import key_variables
from surveys.llm_policy import call_policy, key_refusal_message
from surveys.models import LLMSystem
from surveys.readiness import StudyNotReady, study_readiness, study_status_change

SECRET = "sk-live-9d1f3b5a7c2e4d6f8a0b1c3d5e7f9a2b"


# Under the policy of the settings, as the platform calls them.
def api_key(name: str, study: str) -> str:
    return key_rules.api_key(name, study, policy=call_policy())


def check_key_variable(name: str, study: str) -> None:
    key_rules.check_key_variable(name, study, policy=call_policy())


def is_allowed(name: str, study: str) -> bool:
    return key_rules.is_allowed(name, study, policy=call_policy())


@pytest.fixture
def keys(settings):
    settings.LLM_KEY_PREFIX = "SHS_LLM_KEY_"
    settings.LLM_KEYS = {}
    return settings


@pytest.mark.parametrize(
    "name",
    ["SECRET_KEY", "DATABASE_URL", "EMAIL_HOST_PASSWORD", "REDIS_URL", "HOME", "OPENAI_API_KEY",
     "SHS_LLM_KEY_", "shs_llm_key_lower", "SHS_LLM_KEY_A-B"],
)  # fmt: skip
def test_a_name_without_the_prefix_is_refused_even_when_set(keys, monkeypatch, name):
    monkeypatch.setenv(name, SECRET)
    with pytest.raises(RefusedKeyVariable) as refused:
        api_key(name, "study-a")
    assert refused.value.reason == "prefix"
    assert SECRET not in str(refused.value) + key_refusal_message(refused.value)


def test_a_prefixed_name_is_read_for_any_study_while_nothing_is_listed(keys, monkeypatch):
    monkeypatch.setenv("SHS_LLM_KEY_OPENAI", SECRET)
    assert api_key("SHS_LLM_KEY_OPENAI", "study-a") == SECRET
    assert api_key("SHS_LLM_KEY_OPENAI", "study-b") == SECRET
    monkeypatch.delenv("SHS_LLM_KEY_OPENAI")
    assert api_key("SHS_LLM_KEY_OPENAI", "study-a") == ""


@pytest.mark.parametrize(
    ("prefix", "name"),
    [("S", "SECRET_KEY"), ("E", "EMAIL_HOST_PASSWORD"), ("D", "DATABASE_URL"),
     ("D", "DJANGO_SETTINGS_MODULE"), ("L", "LLM_KEYS"), ("L", "LANGUAGE_CODE"),
     ("A", "ALLOWED_HOSTS"), ("P", "POSTGRES_PASSWORD")],
)  # fmt: skip
def test_what_the_platform_reads_is_refused_whatever_the_prefix(keys, monkeypatch, prefix, name):
    keys.LLM_KEY_PREFIX = prefix
    monkeypatch.setenv(name, SECRET)
    with pytest.raises(RefusedKeyVariable) as refused:
        api_key(name, "study-a")
    assert refused.value.reason == "not_allowed"


def test_a_listed_variable_serves_only_its_studies(keys, monkeypatch):
    keys.LLM_KEYS = {"SHS_LLM_KEY_OPENAI": ("study-a", "study-c"), "SHS_LLM_KEY_LAB": ("*",)}
    monkeypatch.setenv("SHS_LLM_KEY_OPENAI", SECRET)

    assert api_key("SHS_LLM_KEY_OPENAI", "study-a") == SECRET
    with pytest.raises(RefusedKeyVariable):
        api_key("SHS_LLM_KEY_OPENAI", "study-b")
    assert is_allowed("SHS_LLM_KEY_LAB", "study-b")
    # Once variables are listed, an unlisted one is refused though it has the prefix.
    monkeypatch.setenv("SHS_LLM_KEY_OTHER", SECRET)
    with pytest.raises(RefusedKeyVariable) as refused:
        api_key("SHS_LLM_KEY_OTHER", "study-a")
    assert refused.value.reason == "not_allowed"


def test_a_refusal_reads_the_same_whether_the_variable_is_set_or_not(keys, monkeypatch):
    keys.LLM_KEYS = {"SHS_LLM_KEY_OPENAI": ("study-b",)}
    monkeypatch.setenv("SHS_LLM_KEY_OPENAI", SECRET)
    monkeypatch.delenv("SHS_LLM_KEY_UNSET", raising=False)

    messages = set()
    for name in ("SHS_LLM_KEY_OPENAI", "SHS_LLM_KEY_UNSET"):
        with pytest.raises(RefusedKeyVariable) as refused:
            check_key_variable(name, "study-a")
        messages.add(key_refusal_message(refused.value))
    assert len(messages) == 1


def test_the_operators_list_is_read_from_its_variable():
    value = " SHS_LLM_KEY_OPENAI=study-a, study-b ; SHS_LLM_KEY_LAB=*;"
    assert key_variables(value, "SHS_LLM_KEY_") == {
        "SHS_LLM_KEY_OPENAI": ("study-a", "study-b"),
        "SHS_LLM_KEY_LAB": ("*",),
    }
    assert key_variables("", "SHS_LLM_KEY_") == {}


@pytest.mark.parametrize(
    "value",
    ["SHS_LLM_KEY_OPENAI", "SHS_LLM_KEY_OPENAI=", "SECRET_KEY=*", "=study-a", "SHS_LLM_KEY_=*"],
)
def test_a_malformed_list_stops_the_start(value):
    with pytest.raises(ImproperlyConfigured):
        key_variables(value, "SHS_LLM_KEY_")


# The coordinator's side: the form, the pages, the readiness check.


def _post_system(client_for, study, variable):
    return client_for("coordinator_a").post(
        reverse("surveys:system_create", args=[study.slug]),
        {"name": "Hosted model", "kind": "connected", "base_url": "https://8.8.8.8/v1",
         "model_name": "gpt-test", "api_key_env": variable, "active": "on"},
    )  # fmt: skip


@pytest.mark.parametrize("variable", ["SECRET_KEY", "DATABASE_URL", "EMAIL_HOST_PASSWORD"])
def test_the_form_refuses_a_server_setting_as_the_key_variable(
    client_for, study_a, keys, monkeypatch, variable
):
    monkeypatch.setenv(variable, SECRET)
    response = _post_system(client_for, study_a, variable)

    assert response.status_code == 200
    errors = " ".join(response.context["form"].errors["api_key_env"])
    assert "SHS_LLM_KEY_" in errors
    assert SECRET not in response.content.decode()
    assert not LLMSystem.objects.filter(name="Hosted model").exists()


def test_the_form_refuses_another_studys_key_alike_whether_it_is_set_or_not(
    client_for, study_a, keys, monkeypatch
):
    keys.LLM_KEYS = {"SHS_LLM_KEY_B": ("study-b",), "SHS_LLM_KEY_B_UNSET": ("study-b",)}
    monkeypatch.setenv("SHS_LLM_KEY_B", SECRET)
    monkeypatch.delenv("SHS_LLM_KEY_B_UNSET", raising=False)

    errors = [
        _post_system(client_for, study_a, name).context["form"].errors["api_key_env"]
        for name in ("SHS_LLM_KEY_B", "SHS_LLM_KEY_B_UNSET")
    ]

    assert errors[0] == errors[1]
    assert "not allowed by the server's configuration" in errors[0][0]
    assert not LLMSystem.objects.filter(name="Hosted model").exists()


def test_the_form_accepts_a_variable_listed_for_the_study(client_for, study_a, keys):
    keys.LLM_KEYS = {"SHS_LLM_KEY_A": (study_a.slug,)}
    assert _post_system(client_for, study_a, "SHS_LLM_KEY_A").status_code == 302


def _stored(study, variable, name="Hosted old"):
    # Saved before the operator's rules existed: the database takes any name.
    return LLMSystem.objects.create(
        study=study, name=name, kind="connected", base_url="https://8.8.8.8/v1",
        model_name="m", api_key_env=variable,
    )  # fmt: skip


@pytest.mark.parametrize("is_set", [True, False])
def test_the_pages_never_tell_whether_a_refused_variable_is_set(
    client_for, study_a, keys, monkeypatch, is_set
):
    system = _stored(study_a, "SECRET_KEY")
    if is_set:
        monkeypatch.setenv("SECRET_KEY", SECRET)
    else:
        monkeypatch.delenv("SECRET_KEY", raising=False)
    coordinator = client_for("coordinator_a")

    for url in (
        reverse("surveys:study_detail", args=[study_a.slug]),
        reverse("surveys:system_edit", args=[study_a.slug, system.pk]),
    ):
        page = coordinator.get(url).content.decode()
        assert "key variable SECRET_KEY is not allowed by the server&#x27;s configuration" in page
        assert "SECRET_KEY is set" not in page and "SECRET_KEY is NOT set" not in page
        assert SECRET not in page


def test_a_stored_system_with_a_refused_variable_blocks_activation(client_for, study_a, keys):
    study_a.status = "draft"
    study_a.save(update_fields=["status"])
    ready = [check for check in study_readiness(study_a) if not check.ok]
    _stored(study_a, "SECRET_KEY")

    failed = [check for check in study_readiness(study_a) if not check.ok]

    assert len(failed) == len(ready) + 1
    assert "Hosted old" in failed[-1].missing
    with pytest.raises(StudyNotReady):
        study_status_change(study=study_a, status="active")
    page = client_for("coordinator_a").get(reverse("surveys:study_detail", args=[study_a.slug]))
    assert "Not allowed by the server&#x27;s configuration: Hosted old" in page.content.decode()


def test_an_allowed_variable_passes_the_readiness_check(study_a, keys):
    _stored(study_a, "SHS_LLM_KEY_A")
    check = next(c for c in study_readiness(study_a) if "API key variables" in c.label)
    assert check.ok


def test_the_settings_read_the_list_and_refuse_a_malformed_one():
    read = "from django.conf import settings; print(settings.LLM_KEYS)"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "shs_platform.settings"}

    listed = subprocess.run(
        [sys.executable, "-c", read], env={**env, "LLM_KEYS": "SHS_LLM_KEY_A=study-a"},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    malformed = subprocess.run(
        [sys.executable, "-c", read], env={**env, "LLM_KEYS": "SECRET_KEY=*"},
        capture_output=True, text=True,
    )  # fmt: skip

    assert listed.stdout.strip() == "{'SHS_LLM_KEY_A': ('study-a',)}"
    assert malformed.returncode != 0 and "ImproperlyConfigured" in malformed.stderr
