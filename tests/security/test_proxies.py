"""Failed-login limits behind a reverse proxy.

Behind a proxy every request comes from the proxy's address. The client's own
address is read from X-Forwarded-For, trusting only as many entries from the
end as there are proxies of our own (TRUSTED_PROXY_COUNT); the failed-login
limit counts per account, and per address with room for a lab of people.
"""

import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from allauth.core.internal.httpkit import get_client_ip
from allauth.core.internal.ratelimit import parse_rates
from django.conf import settings as django_settings
from django.test import Client, RequestFactory
from django.urls import reverse

from tests.bench.proxy import local_config, nginx_missing
from tests.faults.redis_server import free_port
from tests.personas import PASSWORD
from tests.security.production import (
    ROOT,
    _interpolate,
    compose_environment,
    compose_service,
    process_env,
)
from tests.services import require_services

PROXY = "10.0.0.2"
LAB, ELSEWHERE = "198.51.100.7", "203.0.113.5"


def _per_address_limit() -> int:
    rates = parse_rates(django_settings.ACCOUNT_RATE_LIMITS["login_failed"])
    return next(rate.amount for rate in rates if rate.per == "ip")


def _log_in(client, email, password, **headers):
    response = client.post(
        reverse("account_login"), {"login": email, "password": password}, **headers
    )
    return response.status_code == 302 and "_auth_user_id" in client.session


def _refused_as_too_many(client, email, **headers) -> bool:
    response = client.post(reverse("account_login"), {"login": email, "password": "x"}, **headers)
    return "Too many failed login attempts" in response.content.decode()


def test_typos_on_one_account_do_not_lock_out_another_from_the_same_address(client, personas):
    for _ in range(5):
        assert not _log_in(client, "coord-a@example.org", "wrong")

    assert not _log_in(client, "coord-a@example.org", PASSWORD)  # that account waits
    assert _log_in(Client(), "exp-a@example.org", PASSWORD)  # its neighbour does not


def test_failures_on_invented_accounts_do_not_lock_out_real_ones(personas):
    for number in range(5):
        assert not _log_in(Client(), f"nobody-{number}@example.org", "guess")

    assert _log_in(Client(), "coord-a@example.org", PASSWORD)


def test_guessing_across_accounts_from_one_address_is_stopped(personas):
    for number in range(_per_address_limit()):
        _log_in(Client(), f"nobody-{number}@example.org", "guess")

    assert _refused_as_too_many(Client(), "someone-else@example.org")


@pytest.mark.parametrize(
    ("trusted_proxies", "forwarded_for"),
    [
        (1, "{spoofed}, {client}"),  # client -> our proxy -> app
        (2, "{spoofed}, {client}, 10.0.0.1"),  # client -> CDN -> our proxy -> app
    ],
)
def test_the_client_address_comes_from_the_trusted_proxies(
    personas, settings, trusted_proxies, forwarded_for
):
    settings.ALLAUTH_TRUSTED_PROXY_COUNT = trusted_proxies

    def via_proxy(client_address, spoofed):
        xff = forwarded_for.format(client=client_address, spoofed=spoofed)
        return {"REMOTE_ADDR": PROXY, "HTTP_X_FORWARDED_FOR": xff}

    # One address guesses across accounts, writing a new made-up address in
    # front each time: the entries it adds itself are ignored.
    for number in range(_per_address_limit()):
        spoofed = f"192.0.2.{number}"
        _log_in(Client(), f"nobody-{number}@example.org", "guess", **via_proxy(LAB, spoofed))

    assert _refused_as_too_many(Client(), "x@example.org", **via_proxy(LAB, "192.0.2.99"))
    # Someone else behind the same proxy is not affected.
    assert _log_in(Client(), "coord-a@example.org", PASSWORD, **via_proxy(ELSEWHERE, "192.0.2.1"))


@pytest.mark.parametrize(("given", "expected"), [({}, "1"), ({"TRUSTED_PROXY_COUNT": "2"}, "2")])
def test_compose_trusts_one_proxy_unless_told_otherwise(given, expected):
    code = "from django.conf import settings; print(settings.ALLAUTH_TRUSTED_PROXY_COUNT)"
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        cwd=ROOT,
        env=process_env(compose_environment(given)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.stdout.strip() == expected, result.stderr


def test_without_proxies_forwarded_for_is_ignored(personas):
    assert django_settings.ALLAUTH_TRUSTED_PROXY_COUNT == 0  # settings.py's default
    for number in range(_per_address_limit()):
        spoofed = {"HTTP_X_FORWARDED_FOR": f"192.0.2.{number}"}
        _log_in(Client(), f"nobody-{number}@example.org", "guess", **spoofed)

    assert _refused_as_too_many(Client(), "x@example.org")


# The compose file's proxy itself: Debian's nginx running deploy/nginx.conf
# (only its upstreams, port and paths changed) in front of an upstream that
# answers with the X-Forwarded-* headers it received.


class _EchoForwarded(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps(
            {name: self.headers.get(name) for name in ("X-Forwarded-For", "X-Forwarded-Proto")}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def compose_proxy(tmp_path):
    """start(trusted=()) -> a function sending one request through the proxy,
    with the addresses `trusted` added to its trusted proxies."""
    if nginx_missing():
        if require_services():
            pytest.fail("this test needs nginx (apt-get install nginx-light)")
        pytest.skip(nginx_missing())
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _EchoForwarded)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    processes = []

    def start(trusted=()):
        port = free_port()
        config = local_config(
            port, {"web": upstream.server_port, "chat": upstream.server_port}, tmp_path
        )
        for address in trusted:  # as an operator adds the address of their TLS proxy
            config, found = re.subn(
                r"(geo \$from_trusted_proxy \{\n)", rf"\g<1>{address} 1;\n", config
            )
            assert found
        (tmp_path / "nginx.conf").write_text(config)
        process = subprocess.Popen(
            ["nginx", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"),
             "-e", str(tmp_path / "error.log"), "-g", f"daemon off; pid {tmp_path / 'nginx.pid'};"],
        )  # fmt: skip
        processes.append(process)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)

        def send(**headers) -> dict:
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/accounts/login/", headers=headers
            )
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.loads(response.read())

        return send

    yield start
    for process in processes:
        process.terminate()
        process.wait(timeout=10)
    upstream.shutdown()


def _client_address(received: dict, settings) -> str:
    """The address the app's limits count, from what the proxy sent (compose: one proxy)."""
    settings.ALLAUTH_TRUSTED_PROXY_COUNT = 1
    headers = {
        f"HTTP_{name.upper().replace('-', '_')}": value for name, value in received.items() if value
    }
    return get_client_ip(RequestFactory().get("/", REMOTE_ADDR="172.18.0.5", **headers))


def test_a_client_reaching_the_proxy_directly_cannot_choose_its_address(compose_proxy, settings):
    send = compose_proxy()

    received = send(**{"X-Forwarded-For": "192.0.2.1, 192.0.2.2", "X-Forwarded-Proto": "https"})

    assert received == {"X-Forwarded-For": "127.0.0.1", "X-Forwarded-Proto": "http"}
    assert _client_address(received, settings) == "127.0.0.1"


def test_the_proxy_passes_on_what_a_trusted_proxy_says(compose_proxy, settings):
    send = compose_proxy(trusted=["127.0.0.1"])

    # The TLS proxy appended the client it saw to what the client wrote.
    received = send(**{"X-Forwarded-For": f"192.0.2.1, {LAB}", "X-Forwarded-Proto": "https"})
    assert received == {"X-Forwarded-For": f"192.0.2.1, {LAB}", "X-Forwarded-Proto": "https"}
    assert _client_address(received, settings) == LAB
    # A trusted proxy that says nothing: what nginx saw.
    assert send() == {"X-Forwarded-For": "127.0.0.1", "X-Forwarded-Proto": "http"}


@pytest.mark.parametrize(
    ("given", "published"),
    [({}, "127.0.0.1:8000:8080"), ({"PROXY_BIND": "0.0.0.0", "WEB_PORT": "80"}, "0.0.0.0:80:8080")],
)
def test_compose_publishes_the_proxy_on_loopback_unless_told_otherwise(given, published):
    ports = [_interpolate(port, given) for port in compose_service("proxy")["ports"]]
    assert ports == [published]
