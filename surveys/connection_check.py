"""Test a connected system's API before a participant meets it (docs/design.md §10.1).

One short real call (`llm.check.check_connection`), told to the coordinator
in plain words: which model the server says answered, how long the first
token took, or why the server refused and the likely fix. The call spends
the study's key, so each system is checked at most CHECKS_PER_WINDOW times
per window.
"""

from dataclasses import dataclass

from asgiref.sync import async_to_sync
from django.utils.translation import gettext as _

from llm import check, client
from llm.keys import RefusedKeyVariable, check_key_variable
from surveys.client_limits import window_count
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
    try:
        # Refused here too, so that a refused name is never even looked up.
        check_key_variable(system.api_key_env, system.study.slug) if system.api_key_env else None
    except RefusedKeyVariable as refusal:
        return _failed(system, refusal.message)
    if not _counted(system):
        return CheckOutcome(
            False,
            _("“%(name)s” was tested %(count)d times within %(minutes)d minutes; try again later.")
            % {"name": system.name, "count": CHECKS_PER_WINDOW, "minutes": WINDOW_SECONDS // 60},
        )
    result = async_to_sync(_checked)(client.Endpoint.of(system), close_pool)
    if not result.ok:
        # Written for the coordinator, with the likely fix; it never quotes the server.
        return _failed(system, result.message)
    return CheckOutcome(True, _answered(system, result))


async def _checked(endpoint, close_pool: bool):
    try:
        return await check.check_connection(endpoint)
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


def _failed(system: LLMSystem, why: str) -> CheckOutcome:
    return CheckOutcome(
        False, _("The test of “%(name)s” failed: %(why)s") % {"name": system.name, "why": why}
    )


def _counted(system: LLMSystem) -> bool:
    """Count one check of `system`; False when its window is full."""
    key = f"llm-connection-check:{system.pk}"
    count = window_count(key, window_seconds=WINDOW_SECONDS)
    return count <= CHECKS_PER_WINDOW
