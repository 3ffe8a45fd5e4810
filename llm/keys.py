"""Which environment variables a connected system may take its API key from
(docs/design.md §10.1).

Placeholder: the operator's allow-list is built here (settings.LLM_KEY_PREFIX,
settings.LLM_KEYS).
"""

import os


class RefusedKeyVariable(ValueError):
    """The variable may not be used as an API key by this study."""


def api_key(name: str, study: str) -> str:
    """The key held by variable `name` for a system of study `study` ("" when unset)."""
    return os.environ.get(name, "")
