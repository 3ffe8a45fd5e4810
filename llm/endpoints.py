"""Which base URLs the platform may call (docs/design.md §10.1).

A coordinator types the base URL of a connected system, and the server then
makes requests to it: without a check, that is a way to reach the cloud's
metadata service (169.254.169.254), the database or anything else on the
platform's own network. So a URL must be https (plain http only to this
machine, and only when LLM_ALLOW_HTTP_LOOPBACK is on), carry no credentials,
and every address its host resolves to must be public, unless
LLM_ALLOW_PRIVATE_NETWORKS is on. The check runs when a system is saved and
again before every call, because what a name resolves to can change.
"""

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings
from django.utils.translation import gettext as _

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class UnsafeEndpoint(ValueError):
    """The URL may not be called; the message says why, for the coordinator."""


class UnresolvableHost(UnsafeEndpoint):
    """The host name resolves to nothing (a typo, or no DNS right now)."""


def check_base_url(url: str) -> None:
    """Refuse a base URL the platform must not call; return None if it may."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http"):
        raise UnsafeEndpoint(_("The address must start with https://."))
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise UnsafeEndpoint(
            _(
                "The address must not contain a user name or password: the key goes in the "
                "environment."
            )
        )
    host = parts.hostname
    try:
        port = parts.port
    except ValueError:
        raise UnsafeEndpoint(_("The address has an invalid port.")) from None
    if not host:
        raise UnsafeEndpoint(_("The address has no host name."))
    addresses = _resolve(host, port or (443 if scheme == "https" else 80))
    loopback = all(address.is_loopback for address in addresses)
    if scheme == "http" and not (loopback and settings.LLM_ALLOW_HTTP_LOOPBACK):
        raise UnsafeEndpoint(
            _(
                "The address must start with https:// (plain http:// only to this machine, when "
                "the platform allows it)."
            )
        )
    check_addresses(host, addresses)


def check_addresses(host: str, addresses: list[IPAddress]) -> None:
    """Refuse unless every address `host` resolved to may be called."""
    for address in addresses:
        _check_address(host, address)


def addresses_of(host: str, infos: list) -> list[IPAddress]:
    """The addresses of getaddrinfo's answer, each as the policy judges it."""
    # A scope id ("fe80::1%eth0") is not part of the address.
    addresses = [ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos]
    if not addresses:
        raise unresolvable(host)
    return [_embedded_ipv4(address) for address in addresses]


def unresolvable(host: str) -> UnresolvableHost:
    return UnresolvableHost(_("The host name %(host)s could not be resolved.") % {"host": host})


def _resolve(host: str, port: int) -> list[IPAddress]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise unresolvable(host) from None
    return addresses_of(host, infos)


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


def _check_address(host: str, address: IPAddress) -> None:
    # "localhost (127.0.0.1)", or the address alone when that is what was typed.
    context = {"address": address if _same(host, address) else f"{host} ({address})"}
    if address.is_unspecified:
        # 0.0.0.0 and :: reach this machine's own services on most systems,
        # whatever the settings say about private networks.
        raise UnsafeEndpoint(_("%(address)s is not a usable address.") % context)
    if address.is_loopback:
        if not settings.LLM_ALLOW_HTTP_LOOPBACK:
            raise UnsafeEndpoint(
                _("%(address)s is this machine, which is not allowed here.") % context
            )
        return
    if _is_public(address) or settings.LLM_ALLOW_PRIVATE_NETWORKS:
        return
    raise UnsafeEndpoint(
        _("%(address)s is a private, link-local or reserved address, which is not allowed.")
        % context
    )


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
