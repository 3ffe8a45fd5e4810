"""Which base URLs the platform may call (docs/design/systems.md §10.1).

A coordinator types the base URL of a connected system, and the server then
makes requests to it: without a check, that is a way to reach the cloud's
metadata service (169.254.169.254), the database or anything else on the
platform's own network. So a URL must be https (plain http only to this
machine, and only when the policy's `allow_http_loopback` is on), carry no
credentials, and every address its host resolves to must be public, unless
`allow_private_networks` is on. The check runs when a system is saved and
again before every call, because what a name resolves to can change.

A refusal says why as a `reason`, one of REFUSALS, with the address or host
it concerns; the caller words it for the coordinator.
"""

import ipaddress
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

from llm.policy import CallPolicy

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

REFUSALS = (
    # The URL itself.
    "scheme",  # neither https nor http
    "credentials",  # a user name or password in it
    "port",  # a port that is no number, or out of range
    "no_host",
    "plain_http",  # http to anything but this machine, or with loopback not allowed
    # Where its host leads (`address`: the address, or "host (address)").
    "unresolvable",  # UnresolvableHost; `address` is the host name
    "unspecified",  # 0.0.0.0 or ::
    "loopback",
    "private",  # private, link-local, shared, multicast or reserved
)


class UnsafeEndpoint(ValueError):
    """The URL may not be called: `reason` (one of REFUSALS) says why."""

    def __init__(self, reason: str, address: str = ""):
        if reason not in REFUSALS:
            raise ValueError(f"unknown refusal {reason!r}")
        super().__init__(f"{reason}: {address}" if address else reason)
        self.reason = reason
        self.address = address

    def __reduce__(self) -> tuple[type["UnsafeEndpoint"], tuple[str, ...]]:
        # Survives pickling and copying with its reason.
        return (UnsafeEndpoint, (self.reason, self.address))


class UnresolvableHost(UnsafeEndpoint):
    """The host name resolves to nothing (a typo, or no DNS right now)."""

    def __init__(self, host: str):
        super().__init__("unresolvable", host)
        self.host = host

    def __reduce__(self) -> tuple[type["UnresolvableHost"], tuple[str, ...]]:
        return (UnresolvableHost, (self.host,))


def check_base_url(url: str, *, policy: CallPolicy) -> None:
    """Refuse a base URL the platform must not call; return None if it may."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http"):
        raise UnsafeEndpoint("scheme")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise UnsafeEndpoint("credentials")
    host = parts.hostname
    try:
        port = parts.port
    except ValueError:
        raise UnsafeEndpoint("port") from None
    if not host:
        raise UnsafeEndpoint("no_host")
    addresses = _resolve(host, port or (443 if scheme == "https" else 80))
    loopback = all(address.is_loopback for address in addresses)
    if scheme == "http" and not (loopback and policy.allow_http_loopback):
        raise UnsafeEndpoint("plain_http")
    check_addresses(host, addresses, policy=policy)


def check_addresses(host: str, addresses: list[IPAddress], *, policy: CallPolicy) -> None:
    """Refuse unless every address `host` resolved to may be called."""
    for address in addresses:
        _check_address(host, address, policy)


def addresses_of(host: str, resolved: Iterable[str]) -> list[IPAddress]:
    """The addresses `host` resolved to, each as the policy judges it."""
    # A scope id ("fe80::1%eth0") is not part of the address.
    addresses = [ipaddress.ip_address(address.split("%")[0]) for address in resolved]
    if not addresses:
        raise unresolvable(host)
    return [_embedded_ipv4(address) for address in addresses]


def unresolvable(host: str) -> UnresolvableHost:
    return UnresolvableHost(host)


def _resolve(host: str, port: int) -> list[IPAddress]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise unresolvable(host) from None
    # Each answer ends in the socket address: (address, port, ...).
    return addresses_of(host, [str(info[4][0]) for info in infos])


# NAT64's well-known prefix: 64:ff9b::a00:1 reaches 10.0.0.1 through a gateway.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def _embedded_ipv4(address: IPAddress) -> IPAddress:
    """::ffff:10.0.0.1 reaches 10.0.0.1: judge the IPv4 address it carries."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address.sixtofour is not None:
            return address.sixtofour
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def _check_address(host: str, address: IPAddress, policy: CallPolicy) -> None:
    # "localhost (127.0.0.1)", or the address alone when that is what was typed.
    named = str(address) if _same(host, address) else f"{host} ({address})"
    if address.is_unspecified:
        # 0.0.0.0 and :: reach this machine's own services on most systems,
        # whatever the policy says about private networks.
        raise UnsafeEndpoint("unspecified", named)
    if address.is_loopback:
        if not policy.allow_http_loopback:
            raise UnsafeEndpoint("loopback", named)
        return
    if _is_public(address) or policy.allow_private_networks:
        return
    raise UnsafeEndpoint("private", named)


def _same(host: str, address: IPAddress) -> bool:
    try:
        return ipaddress.ip_address(host) == address
    except ValueError:
        return False


def _is_public(address: IPAddress) -> bool:
    # is_global alone lets multicast through.
    return address.is_global and not (
        address.is_multicast or address.is_private or address.is_link_local or address.is_reserved
    )
