"""Failed-login limits behind a reverse proxy.

Behind a proxy every request comes from the proxy's address. The client's own
address is read from X-Forwarded-For, trusting only as many entries from the
end as there are proxies of our own (TRUSTED_PROXY_COUNT); the failed-login
limit counts per account, and per address with room for a lab of people.
"""

import subprocess
import sys

import pytest
from allauth.core.internal.ratelimit import parse_rates
from django.conf import settings as django_settings
from django.test import Client
from django.urls import reverse

from tests.personas import PASSWORD
from tests.security.production import ROOT, compose_environment, process_env

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
