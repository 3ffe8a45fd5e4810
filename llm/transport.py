"""The connection pool the client calls through: it connects only where the
URL policy allows, judged on the address it is about to connect to.

`check_base_url` runs before every call, but a name can resolve to another
address a moment later, when the connection is made (DNS rebinding), and a
redirect or a proxy would send the request somewhere else again. So the
pool resolves the host itself, checks every address it got, and connects to
one of those: the address checked is the address called. It follows no
redirect and reads no proxy settings from the environment.
"""

import asyncio
import socket

import httpcore2
import httpx2
from django.utils.translation import gettext as _

from llm.endpoints import UnsafeEndpoint, addresses_of, check_addresses, unresolvable


class CheckedNetworkBackend(httpcore2.AsyncNetworkBackend):
    """httpcore's own backend, behind the address check."""

    def __init__(self):
        self._backend = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self, host, port, timeout=None, local_address=None, socket_options=None
    ) -> httpcore2.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                infos = await asyncio.get_running_loop().getaddrinfo(
                    host, port, type=socket.SOCK_STREAM
                )
        except (socket.gaierror, UnicodeError):
            raise unresolvable(host) from None
        check_addresses(host, addresses_of(host, infos))
        return await self._backend.connect_tcp(
            infos[0][4][0],
            port,
            timeout=timeout,
            local_address=local_address,
            socket_options=socket_options,
        )

    async def connect_unix_socket(self, *args, **kwargs):
        raise UnsafeEndpoint(_("The address must start with https://."))

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


def checked_http_client() -> httpx2.AsyncClient:
    limits = httpx2.Limits(max_connections=None, max_keepalive_connections=100)
    transport = httpx2.AsyncHTTPTransport(limits=limits, trust_env=False)
    # httpx2 takes no network backend as an argument: its pool is built again
    # with ours (tests/llm/test_transport.py fails if this stops working).
    transport._pool = httpcore2.AsyncConnectionPool(
        ssl_context=httpx2.create_ssl_context(trust_env=False),
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=CheckedNetworkBackend(),
    )
    return httpx2.AsyncClient(transport=transport, follow_redirects=False, trust_env=False)
