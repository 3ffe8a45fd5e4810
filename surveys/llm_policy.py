"""The operator's rules for calls to connected systems (docs/design/systems.md §10.1):
the LLM_* settings as the `CallPolicy` the client is handed, and the client's
refusals in the coordinator's words.

llm is a Django-free core: it reads no settings and translates nothing. So
every caller here passes `call_policy()`, and words a refusal, which llm
gives as a stable reason, with the functions below.
"""

from functools import cache

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from llm.endpoints import UnsafeEndpoint
from llm.keys import RefusedKeyVariable
from llm.policy import CallPolicy


@cache
def call_policy() -> CallPolicy:
    """The policy of the settings, built once (again after a setting changes:
    tests change them)."""
    return CallPolicy(
        allow_http_loopback=settings.LLM_ALLOW_HTTP_LOOPBACK,
        allow_private_networks=settings.LLM_ALLOW_PRIVATE_NETWORKS,
        key_prefix=settings.LLM_KEY_PREFIX,
        keys=dict(settings.LLM_KEYS),
        # A Django setting may be read from a variable of the same name
        # (LLM_*, SECURE_*, ...): none may hold a key, whatever the prefix.
        reserved_names=frozenset(name for name in dir(settings) if name.isupper()),
        connect_timeout=settings.LLM_CONNECT_TIMEOUT_SECONDS,
        idle_timeout=settings.LLM_IDLE_TIMEOUT_SECONDS,
        answer_timeout=settings.LLM_ANSWER_TIMEOUT_SECONDS,
        max_retries=settings.LLM_MAX_RETRIES,
    )


@receiver(setting_changed)
def _forget_policy(**kwargs: object) -> None:
    call_policy.cache_clear()


def key_refusal_message(refusal: RefusedKeyVariable) -> str:
    """Why a system may not take its key from the variable it names: the
    naming rule, or else the same words whatever the reason (llm/keys.py)."""
    if refusal.reason == "prefix":
        return _(
            "The server accepts API keys only from variables whose names start with "
            "%(prefix)s. Ask the platform's operator to set the key under such a name."
        ) % {"prefix": refusal.prefix}
    return _(
        "This variable is not allowed by the server's configuration for this study. "
        "Ask the platform's operator which key variable the study may use."
    )


# By llm.endpoints.REFUSALS.
_URL_REFUSALS = {
    "scheme": gettext_lazy("The address must start with https://."),
    "credentials": gettext_lazy(
        "The address must not contain a user name or password: the key goes in the environment."
    ),
    "port": gettext_lazy("The address has an invalid port."),
    "no_host": gettext_lazy("The address has no host name."),
    "plain_http": gettext_lazy(
        "The address must start with https:// (plain http:// only to this machine, when "
        "the platform allows it)."
    ),
    "unresolvable": gettext_lazy("The host name %(host)s could not be resolved."),
    "unspecified": gettext_lazy("%(address)s is not a usable address."),
    "loopback": gettext_lazy("%(address)s is this machine, which is not allowed here."),
    "private": gettext_lazy(
        "%(address)s is a private, link-local or reserved address, which is not allowed."
    ),
}


def url_refusal_message(refusal: UnsafeEndpoint) -> str:
    """Why the platform may not call a base URL, for the coordinator."""
    # The host that did not resolve, or the address ("localhost (127.0.0.1)").
    context = {"host": refusal.address, "address": refusal.address}
    return str(_URL_REFUSALS[refusal.reason]) % context
