"""Which environment variables a connected system may take its API key from
(docs/design/systems.md §10.1).

A coordinator names the variable; the platform sends its value as the Bearer
key to the base URL the coordinator chose. Left open, that sends SECRET_KEY,
DATABASE_URL or another study's paid key to any server a coordinator (or a
co-coordinator they invited) controls. So only the operator decides, through
the policy (llm/policy.py; the platform's LLM_KEY_PREFIX and LLM_KEYS):

- a name must start with the policy's `key_prefix` (default SHS_LLM_KEY_);
- a name the platform reads itself, or one of the policy's `reserved_names`
  (the platform's: its Django settings' names), is refused whatever the
  prefix (an operator may choose a short prefix);
- when the policy's `keys` lists variables, only those, each for the study
  slugs it names ("*": every study). A key is then spent only by the
  studies whose ethics approval and budget it was meant for.

Whether a variable is set is never told for a refused name: the answer is the
same for a set and an unset one.
"""

import os
import re

from llm.policy import CallPolicy

# What the platform reads from its environment (shs_platform/settings.py, the
# web server's start script, docker-compose.yml), and secrets that commonly sit
# beside it. tests/security/test_key_variables.py fails when the platform
# starts reading a variable missing here.
PLATFORM_VARIABLES = frozenset(
    {
        "ALLOWED_HOSTS",
        "CELERY_QUEUE",
        "CELERY_VISIBILITY_TIMEOUT",
        "CSRF_COOKIE_SECURE",
        "CSRF_TRUSTED_ORIGINS",
        "DATABASE_URL",
        "DATA_UPLOAD_MAX_MEMORY_SIZE",
        "DB_CONN_MAX_AGE",
        "DB_POOL",
        "DB_POOL_MAX_SIZE",
        "DB_PREPARED",
        "DEBUG",
        "DEFAULT_FROM_EMAIL",
        "DELETION_WAIT_SECONDS",
        "DEMO_LLM_URL",
        "DEMO_SCHEDULER",
        "DJANGO_SETTINGS_MODULE",
        "EMAIL_HOST",
        "EMAIL_HOST_PASSWORD",
        "EMAIL_HOST_USER",
        "EMAIL_PORT",
        "EMAIL_USE_TLS",
        "EXPORT_MAX_ATTEMPTS",
        "EXPORT_RETENTION_DAYS",
        "EXPORT_STALE_AFTER_SECONDS",
        "LLM_KEYS",
        "LLM_KEY_PREFIX",
        "LOG_LEVEL",
        "PLAIN_HTTP",
        "PREPARED_LOOKUPS",
        "PRIVATE_STORAGE_ROOT",
        "REDIS_URL",
        "REMOTE_CODE_ATTEMPTS_PER_WINDOW",
        "REMOTE_LIMIT_WINDOW_SECONDS",
        "REMOTE_STARTS_PER_WINDOW",
        "RUN_MAIN",
        "SECRET_KEY",
        "SITE_URL",
        "TIME_ZONE",
        "TRUSTED_PROXY_COUNT",
        "WEB_ACCESS_LOG",
        "WEB_CONCURRENCY",
        "WEB_SYNC_THREADS",
        "WEB_THREADS",
        "WEB_WORKER_CLASS",
        # Beside the platform in a deployment.
        "POSTGRES_PASSWORD",
        "POSTGRES_USER",
        "POSTGRES_DB",
        "PGPASSWORD",
        # Read by the HTTP libraries: a proxy's URL may carry its password.
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
    }
)
# Whole families of them (the openai library reads OPENAI_*); LLM_*, SECURE_*
# and the like are Django settings, refused as the policy's reserved names.
_PLATFORM_PREFIXES = ("DJANGO_", "DB_", "POSTGRES_", "AWS_", "OPENAI_")

_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")


class RefusedKeyVariable(ValueError):
    """The variable may not be used as an API key by this study.

    `reason` is "prefix" (the name breaks the naming rule, which the
    coordinator may be told, with the `prefix` required) or "not_allowed"
    (everything else, told alike so that nothing about the server's
    environment or other studies leaks). The caller words it.
    """

    def __init__(self, name: str, reason: str, prefix: str = ""):
        super().__init__(reason)
        self.name = name
        self.reason = reason
        self.prefix = prefix


def check_key_variable(name: str, study: str, *, policy: CallPolicy) -> None:
    """Raise RefusedKeyVariable unless a system of study `study` may use `name`."""
    prefix = policy.key_prefix
    if not (_NAME.fullmatch(name) and name.startswith(prefix) and len(name) > len(prefix)):
        raise RefusedKeyVariable(name, "prefix", prefix)
    if _is_platform_variable(name, policy):
        raise RefusedKeyVariable(name, "not_allowed")
    listed = policy.keys
    if listed:
        studies = listed.get(name, ())
        if "*" not in studies and study not in studies:
            raise RefusedKeyVariable(name, "not_allowed")


def is_allowed(name: str, study: str, *, policy: CallPolicy) -> bool:
    try:
        check_key_variable(name, study, policy=policy)
    except RefusedKeyVariable:
        return False
    return True


def api_key(name: str, study: str, *, policy: CallPolicy) -> str:
    """The key held by variable `name` for a system of study `study` ("" when
    unset); RefusedKeyVariable, before the environment is read, for a name the
    study may not use."""
    check_key_variable(name, study, policy=policy)
    return os.environ.get(name, "")


def _is_platform_variable(name: str, policy: CallPolicy) -> bool:
    return (
        name in PLATFORM_VARIABLES
        or name.startswith(_PLATFORM_PREFIXES)
        # The platform's settings, each of which may be read from a variable
        # of the same name.
        or name in policy.reserved_names
    )
