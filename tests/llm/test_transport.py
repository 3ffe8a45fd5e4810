"""The connection pool checks the address it connects to (llm/transport.py).

These requests bypass `check_base_url` on purpose: they show the second
guard on its own, the one that holds when a name resolves differently at
connection time. Only loopback addresses are used, refused by setting, so a
missing guard shows as a connection accepted here, never as traffic to a
private network.
"""

import asyncio
import socket

import pytest

from llm.endpoints import UnresolvableHost, UnsafeEndpoint
from llm.transport import checked_http_client
from surveys.llm_policy import call_policy


@pytest.fixture
def listener():
    """A listening socket that records whether anyone connected."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        yield server


def was_connected(server: socket.socket) -> bool:
    try:
        connection, _ = server.accept()
    except BlockingIOError:
        return False
    connection.close()
    return True


async def get(url: str):
    async with checked_http_client(call_policy()) as client:
        return await client.get(url, timeout=2)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::ffff:127.0.0.1]"])
def test_loopback_is_not_connected_to_without_its_setting(settings, listener, host):
    settings.LLM_ALLOW_HTTP_LOOPBACK = False
    port = listener.getsockname()[1]

    with pytest.raises(UnsafeEndpoint):
        asyncio.run(get(f"http://{host}:{port}/v1/models"))

    assert not was_connected(listener)


def test_an_allowed_address_is_connected_to(settings, llm_server):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    response = asyncio.run(get(llm_server.removesuffix("/v1") + "/healthz"))
    assert response.json() == {"status": "ok"}


def test_a_name_that_does_not_resolve(settings):
    with pytest.raises(UnresolvableHost):
        asyncio.run(get("https://no-such-host.invalid/v1/models"))


def test_proxy_variables_are_ignored(settings, llm_server, listener, monkeypatch):
    """A proxy would connect on the platform's behalf, to an address nobody checked."""
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    port = listener.getsockname()[1]
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)

    response = asyncio.run(get(llm_server.removesuffix("/v1") + "/healthz"))

    assert response.status_code == 200
    assert not was_connected(listener)
