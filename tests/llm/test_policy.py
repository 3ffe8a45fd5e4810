"""The operator's settings as the client's policy (surveys/llm_policy.py): llm
reads no settings of its own, so each LLM_* setting reaches it only this way."""

from llm.policy import CallPolicy
from surveys.llm_policy import call_policy


def test_the_policy_holds_the_settings(settings):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    settings.LLM_ALLOW_PRIVATE_NETWORKS = True
    settings.LLM_KEY_PREFIX = "LAB_KEY_"
    settings.LLM_KEYS = {"LAB_KEY_A": ("study-a",)}
    settings.LLM_CONNECT_TIMEOUT_SECONDS = 3
    settings.LLM_IDLE_TIMEOUT_SECONDS = 30
    settings.LLM_ANSWER_TIMEOUT_SECONDS = 300
    settings.LLM_MAX_RETRIES = 2

    policy = call_policy()

    assert policy == CallPolicy(
        allow_http_loopback=True,
        allow_private_networks=True,
        key_prefix="LAB_KEY_",
        keys={"LAB_KEY_A": ("study-a",)},
        reserved_names=policy.reserved_names,
        connect_timeout=3,
        idle_timeout=30,
        answer_timeout=300,
        max_retries=2,
    )
    # Every setting's name, which a variable of that name may set.
    assert {"SECRET_KEY", "LANGUAGE_CODE", "LLM_KEYS", "LLM_MAX_RETRIES"} <= policy.reserved_names


def test_the_policy_is_built_once_and_again_when_a_setting_changes(settings):
    settings.LLM_MAX_RETRIES = 1
    assert call_policy() is call_policy()

    settings.LLM_MAX_RETRIES = 0

    assert call_policy().max_retries == 0


def test_a_setting_added_later_is_reserved_too(settings):
    settings.LAB_KEY_NEW_SETTING = "x"
    assert "LAB_KEY_NEW_SETTING" in call_policy().reserved_names
