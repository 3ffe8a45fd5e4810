"""The URL policy for connected systems (docs/design/systems.md §10.1).

Only `check_base_url` runs here: resolving a literal address sends nothing
over the network, so none of these tests reaches a private address even if
the guard were gone (they would fail instead).
"""

import pytest

from llm import endpoints
from llm.endpoints import REFUSALS, UnresolvableHost, UnsafeEndpoint
from surveys.llm_policy import call_policy, url_refusal_message


def check_base_url(url: str) -> None:
    """Under the policy of the settings, as the platform checks it."""
    endpoints.check_base_url(url, policy=call_policy())


@pytest.fixture
def strict(settings):
    """Production defaults: no plain http, no loopback, no private networks."""
    settings.LLM_ALLOW_HTTP_LOOPBACK = False
    settings.LLM_ALLOW_PRIVATE_NETWORKS = False
    return settings


@pytest.mark.parametrize(
    "url",
    [
        "https://8.8.8.8/v1",
        "https://1.1.1.1:8443/v1/",
        "https://[2606:4700:4700::1111]/v1",
        "HTTPS://8.8.8.8/v1",
    ],
)
def test_public_https_addresses_are_allowed(strict, url):
    check_base_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://8.8.8.8/v1",
        "ftp://8.8.8.8/v1",
        "file:///etc/passwd",
        "gopher://8.8.8.8/",
        "8.8.8.8/v1",
        "",
    ],
)
def test_only_https_is_allowed(strict, url):
    with pytest.raises(UnsafeEndpoint):
        check_base_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://10.0.0.1/v1",
        "https://10.255.1.2:8000/v1",
        "https://172.16.0.1/v1",
        "https://172.31.255.254/v1",
        "https://192.168.1.10/v1",
        "https://169.254.169.254/latest/meta-data",
        "https://100.64.0.1/v1",
        "https://0.0.0.0/v1",
        "https://224.0.0.1/v1",
        "https://240.0.0.1/v1",
        "https://255.255.255.255/v1",
        "https://[fc00::1]/v1",
        "https://[fd12:3456::1]/v1",
        "https://[fe80::1]/v1",
        "https://[::]/v1",
        "https://[ff02::1]/v1",
        "https://[::ffff:10.0.0.1]/v1",
        "https://[::ffff:169.254.169.254]/v1",
        "https://[::ffff:a9fe:a9fe]/v1",
        "https://[2002:0a00:0001::1]/v1",
        "https://[64:ff9b::a9fe:a9fe]/v1",
        "https://[2001::1]/v1",
    ],
)
def test_private_link_local_and_reserved_addresses_are_refused(strict, url):
    with pytest.raises(UnsafeEndpoint) as refusal:
        check_base_url(url)
    assert refusal.value.reason in ("private", "unspecified")
    assert "not allowed" in url_refusal_message(refusal.value) or (
        "not a usable address" in url_refusal_message(refusal.value)
    )


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/v1",
        "https://127.1.2.3:8443/v1",
        "https://[::1]/v1",
        "https://[::ffff:127.0.0.1]/v1",
        "https://localhost/v1",
        "http://localhost:8001/v1",
        "http://127.0.0.1:8001/v1",
    ],
)
def test_loopback_is_refused_without_its_setting(strict, url):
    with pytest.raises(UnsafeEndpoint):
        check_base_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8001/v1",
        "http://localhost:8001/v1",
        "http://[::1]:8001/v1",
        "https://127.0.0.1/v1",
    ],
)
def test_loopback_is_allowed_with_its_setting(strict, url):
    strict.LLM_ALLOW_HTTP_LOOPBACK = True
    check_base_url(url)


def test_private_networks_setting_does_not_open_loopback_nor_plain_http(strict):
    strict.LLM_ALLOW_PRIVATE_NETWORKS = True
    check_base_url("https://10.0.0.1/v1")
    check_base_url("https://[fc00::1]/v1")
    with pytest.raises(UnsafeEndpoint):
        check_base_url("https://127.0.0.1/v1")
    with pytest.raises(UnsafeEndpoint):
        check_base_url("http://10.0.0.1/v1")
    with pytest.raises(UnsafeEndpoint):
        check_base_url("https://0.0.0.0/v1")


def test_plain_http_to_a_private_address_is_refused_even_with_loopback_allowed(strict):
    strict.LLM_ALLOW_HTTP_LOOPBACK = True
    with pytest.raises(UnsafeEndpoint):
        check_base_url("http://10.0.0.1/v1")
    with pytest.raises(UnsafeEndpoint):
        check_base_url("http://0.0.0.0:8001/v1")


@pytest.mark.parametrize(
    "url",
    [
        "https://user:secret@8.8.8.8/v1",
        "https://sk-abc@8.8.8.8/v1",
        "https://:secret@8.8.8.8/v1",
        "http://user:pass@127.0.0.1:8001/v1",
    ],
)
def test_credentials_in_the_url_are_refused(strict, url):
    strict.LLM_ALLOW_HTTP_LOOPBACK = True
    with pytest.raises(UnsafeEndpoint) as refusal:
        check_base_url(url)
    assert refusal.value.reason == "credentials"
    assert "user name or password" in url_refusal_message(refusal.value)


@pytest.mark.parametrize("url", ["https:///v1", "https://8.8.8.8:99999/v1", "https://:443/v1"])
def test_malformed_addresses_are_refused(strict, url):
    with pytest.raises(UnsafeEndpoint):
        check_base_url(url)


def test_a_name_that_does_not_resolve_is_refused(strict):
    with pytest.raises(UnresolvableHost) as refusal:
        check_base_url("https://no-such-host.invalid/v1")
    assert refusal.value.host == "no-such-host.invalid"
    assert url_refusal_message(refusal.value) == (
        "The host name no-such-host.invalid could not be resolved."
    )


def test_the_refusal_names_the_host_and_the_address(strict):
    with pytest.raises(UnsafeEndpoint) as refusal:
        check_base_url("https://169.254.169.254/latest")
    assert "169.254.169.254" in str(refusal.value)
    assert url_refusal_message(refusal.value) == (
        "169.254.169.254 is a private, link-local or reserved address, which is not allowed."
    )
    with pytest.raises(UnsafeEndpoint) as refusal:
        check_base_url("https://localhost/v1")
    assert url_refusal_message(refusal.value) in (
        "localhost (127.0.0.1) is this machine, which is not allowed here.",
        "localhost (::1) is this machine, which is not allowed here.",
    )


def test_every_refusal_is_told_to_the_coordinator_in_their_language():
    from django.utils import translation

    for reason in REFUSALS:
        refusal = UnsafeEndpoint(reason, "10.0.0.1")
        with translation.override("de"):
            german = url_refusal_message(refusal)
        english = url_refusal_message(refusal)
        assert german != english and "%(" not in english + german
    with pytest.raises(ValueError):
        UnsafeEndpoint("something_else")
