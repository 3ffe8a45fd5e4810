"""The connection pool the client calls through: it connects only where the
URL policy allows, judged on the address it is about to connect to.

`check_base_url` runs before every call, but a name can resolve to another
address a moment later, when the connection is made (DNS rebinding), and a
redirect or a proxy would send the request somewhere else again. So the
pool checks every address the host resolved to, as it resolves it, and
connects only to those: the address checked is the address called. It
follows no redirect and reads no proxy settings from the environment.

The pool is aiohttp's, under the `openai` client's own aiohttp transport
(the `openai[aiohttp]` extra): its HTTP parser is compiled, where httpx's
is pure Python, and a streamed answer arrives as one small chunk per token,
so the parser's cost per chunk is most of what receiving an answer costs
(docs/benchmarks.md, "The built-in chat under load").
"""

from collections.abc import Sequence

import aiohttp
from aiohttp.abc import ResolveResult
from aiohttp.tracing import Trace
from openai import DefaultAioHttpClient

# The transport behind `DefaultAioHttpClient`, which builds its own session;
# this one takes ours (tests/llm/test_transport.py fails if it moves).
from openai._vendor.httpx_aiohttp.transport import AiohttpTransport

from llm.endpoints import addresses_of, check_addresses, unresolvable
from llm.policy import CallPolicy


class CheckedConnector(aiohttp.TCPConnector):
    """aiohttp's connector, behind the address check of `policy`."""

    def __init__(self, *, policy: CallPolicy, limit: int, use_dns_cache: bool) -> None:
        super().__init__(limit=limit, use_dns_cache=use_dns_cache)
        self.policy = policy

    async def _resolve_host(
        self, host: str, port: int, traces: Sequence[Trace] | None = None
    ) -> list[ResolveResult]:
        # Every connection resolves here, an IP literal too (aiohttp answers
        # it without a lookup), so a literal is judged like a name.
        try:
            hosts = await super()._resolve_host(host, port, traces=traces)
        except OSError:
            raise unresolvable(host) from None
        addresses = addresses_of(host, [resolved["host"] for resolved in hosts])
        check_addresses(host, addresses, policy=self.policy)
        return hosts


def checked_http_client(policy: CallPolicy) -> DefaultAioHttpClient:
    """An httpx2 client for the `openai` client, connecting only where
    `policy` allows; build it inside the event loop that will use it (an
    aiohttp session belongs to one loop)."""

    def session() -> aiohttp.ClientSession:
        # No DNS cache: a name is resolved, and checked, for every connection.
        connector = CheckedConnector(policy=policy, limit=0, use_dns_cache=False)
        return aiohttp.ClientSession(connector=connector, trust_env=False)

    return DefaultAioHttpClient(
        transport=AiohttpTransport(client=session), follow_redirects=False, trust_env=False
    )
