"""What the platform's operator allows a call to a connected system, handed
to every function of llm that needs it (docs/design/systems.md §10.1).

llm reads no configuration of its own: the application that calls it builds
one `CallPolicy` from its settings (the platform: surveys/llm_policy.py, from
the LLM_* settings) and passes it in. The defaults are the strict ones, so a
policy built with nothing opens nothing.

    policy = CallPolicy(allow_http_loopback=True, key_prefix="SHS_LLM_KEY_")
    async for piece in stream_reply(endpoint, messages, policy=policy): ...
"""

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CallPolicy:
    """Where a call may go, which variables may hold its key, how long it may take."""

    # Where (llm/endpoints.py): plain http to this machine; private,
    # link-local and reserved addresses.
    allow_http_loopback: bool = False
    allow_private_networks: bool = False
    # Which environment variables may hold a key (llm/keys.py): a name must
    # start with `key_prefix`; once `keys` lists any, only those, each for
    # the study slugs it names ("*": every study).
    key_prefix: str = "SHS_LLM_KEY_"
    keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)
    # Names refused whatever the prefix, beside those llm/keys.py refuses
    # itself: the calling application's own settings, which may be read from
    # a variable of the same name.
    reserved_names: frozenset[str] = frozenset()
    # How long (llm/wire.py), in seconds, where a system sets no limit of its
    # own: to connect (and resolve the host), each wait for the server, the
    # whole answer; and how often a request is tried again before the answer began.
    connect_timeout: float = 5
    idle_timeout: float = 60
    answer_timeout: float = 600
    max_retries: int = 1
