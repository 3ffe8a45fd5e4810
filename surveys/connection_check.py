"""Test a connected system's API before a participant meets it (docs/design/systems.md §10.1).

One short real call (`llm.check.check_connection`), told to the coordinator
in plain words: which model the server says answered, how long the first
token took, or why the server refused and the likely fix. The call spends
the study's key, so each system is checked at most CHECKS_PER_WINDOW times
per window.
"""

from dataclasses import dataclass

from asgiref.sync import async_to_sync
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from llm import check, client
from llm.check import ConnectionCheck
from llm.keys import RefusedKeyVariable, check_key_variable
from llm.policy import CallPolicy
from surveys.client_limits import window_count
from surveys.llm_policy import call_policy, key_refusal_message
from surveys.models import LLMSystem

CHECKS_PER_WINDOW = 5
WINDOW_SECONDS = 600


@dataclass(frozen=True)
class CheckOutcome:
    ok: bool
    text: str


def check_system(system: LLMSystem, *, close_pool: bool) -> CheckOutcome:
    """Call the system once and say how it went. `close_pool`: the request's
    event loop ends with the call (WSGI), so its connection pool must close."""
    policy = call_policy()
    try:
        # Refused here too, so that a refused name is never even looked up.
        if system.api_key_env:
            check_key_variable(system.api_key_env, system.study.slug, policy=policy)
    except RefusedKeyVariable as refusal:
        return _failed(system, key_refusal_message(refusal))
    if not _counted(system):
        return CheckOutcome(
            False,
            _("“%(name)s” was tested %(count)d times within %(minutes)d minutes; try again later.")
            % {"name": system.name, "count": CHECKS_PER_WINDOW, "minutes": WINDOW_SECONDS // 60},
        )
    result = async_to_sync(_checked)(client.Endpoint.of(system), policy, close_pool)
    if not result.ok:
        # Written for the coordinator, with the likely fix; it never quotes the server.
        return _failed(system, coordinator_message(result, system.api_key_env))
    return CheckOutcome(True, _answered(system, result))


async def _checked(endpoint, policy: CallPolicy, close_pool: bool) -> ConnectionCheck:
    try:
        return await check.check_connection(endpoint, policy=policy)
    finally:
        if close_pool:
            await client.close_pool()


def _answered(system: LLMSystem, result) -> str:
    text = _("“%(name)s” answered: the server reports the model %(model)s.") % {
        "name": system.name,
        "model": result.model or _("(not reported)"),
    }
    if result.first_token_ms is not None:
        text += " " + _("First token after %(first)d ms, whole answer after %(total)d ms.") % {
            "first": result.first_token_ms,
            "total": result.latency_ms,
        }
    else:
        text += " " + _("Whole answer after %(total)d ms.") % {"total": result.latency_ms}
    return text


# For the coordinator: what went wrong and the likely fix, by the check's
# cause. Never the server's own text, which may quote the key it was sent.
_CHECK_MESSAGES = {
    "unreachable": gettext_lazy(
        "No connection to the server: check the base URL (host and port) and that the "
        "server is running."
    ),
    "timeout": gettext_lazy(
        "The server did not answer in time: it may be overloaded or still loading the model. "
        "Try again, or raise this system's time limits."
    ),
    "rate_limited": gettext_lazy(
        "The server is limiting requests for this key: wait and try again, or raise the key's "
        "limits with the provider."
    ),
    "server_error": gettext_lazy(
        "The server failed or did not answer with a chat answer (a sign-in or error page?): "
        "check the base URL, which usually ends in /v1."
    ),
    "stream_broken": gettext_lazy("The connection broke off during the answer: try again."),
    "content_filter": gettext_lazy("The provider's content filter stopped the test answer."),
    "rejected": gettext_lazy(
        "The server refused the request: check the model name, the answer-length parameter "
        "or stream_options."
    ),
    "refused_url": gettext_lazy(
        "The platform's address policy does not allow this base URL (plain http, a private "
        "network, or credentials in the URL)."
    ),
    "no_api_key": gettext_lazy(
        "The environment variable %(variable)s, which should hold this system's API key, is "
        "not set on the platform's server."
    ),
    "refused_key": gettext_lazy(
        "The platform does not allow the key variable %(variable)s for this system's study: "
        "ask the operator (settings LLM_KEY_PREFIX and LLM_KEYS)."
    ),
    "no_text": gettext_lazy(
        "The server answered, but with no text (only reasoning or tool calls) within a "
        "short test answer. A reasoning model may need a larger answer length."
    ),
    "too_long": gettext_lazy("The test answer was longer than this system's answer limit."),
}
_REJECTED_MESSAGES = {
    401: gettext_lazy(
        "The server refused the API key: check the key in this system's key variable."
    ),
    403: gettext_lazy(
        "The key is not allowed to use this model or endpoint: check the key and the model."
    ),
    404: gettext_lazy(
        "Nothing answers at this address, or the model is unknown: check the base URL "
        "(usually ending in /v1) and the model name."
    ),
}


def coordinator_message(result: ConnectionCheck, variable: str) -> str:
    """A failed check in plain words, with the likely fix and the server's HTTP
    status; `variable`: the system's key variable."""
    text = _CHECK_MESSAGES.get(result.cause, gettext_lazy("The call failed: %(cause)s."))
    if result.cause == "rejected" and result.status in _REJECTED_MESSAGES:
        text = _REJECTED_MESSAGES[result.status]
    elif result.cause == "rejected" and result.status and result.status < 400:
        text = gettext_lazy(
            "The server redirected the request, which the platform does not follow."
        )
    message = str(text) % {"variable": variable, "cause": result.cause}
    return f"{message} (HTTP {result.status})" if result.status else message


def _failed(system: LLMSystem, why: str) -> CheckOutcome:
    return CheckOutcome(
        False, _("The test of “%(name)s” failed: %(why)s") % {"name": system.name, "why": why}
    )


def _counted(system: LLMSystem) -> bool:
    """Count one check of `system`; False when its window is full."""
    key = f"llm-connection-check:{system.pk}"
    count = window_count(key, window_seconds=WINDOW_SECONDS)
    return count <= CHECKS_PER_WINDOW
