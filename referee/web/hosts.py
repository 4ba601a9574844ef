"""Which host names a request to ``referee serve`` may name (its ``Host`` header), from the address it
is bound to and the ``--public-host`` names it is given (docs/SERVER.md, "Safety").

A web page elsewhere can make a browser send requests to any address through DNS rebinding (a name of
the attacker's that resolves to the server's address); such a request names the attacker's host, so
refusing every name but the server's own stops it. An address written as such (``10.0.0.5``,
``[::1]``) is not a name anyone can rebind: with a wildcard bind (``0.0.0.0``, ``::``), every address
of the machine is the server's own, so any address literal is accepted.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

_HOST: Final = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(?P<port>[0-9]{1,5}))?")
_LABEL: Final = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_NAME: Final = re.compile(rf"(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*")


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None


def shown(host: str) -> str:
    """How a host is written in a URL and in a ``Host`` header: an IPv6 address in brackets.

    >>> shown("::1"), shown("127.0.0.2"), shown("arena.example.org")
    ('[::1]', '127.0.0.2', 'arena.example.org')
    """
    ip = _ip(host)
    return f"[{ip}]" if isinstance(ip, ipaddress.IPv6Address) else host.lower()


def is_loopback(bind: str) -> bool:
    """Whether a server bound to ``bind`` is reached from this machine only.

    >>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("localhost"), is_loopback("0.0.0.0")
    (True, True, True, False)
    """
    ip = _ip(bind)
    return bind.lower() == "localhost" if ip is None else ip.is_loopback


def public_host(text: str) -> str:
    """A ``--public-host`` value, as it will be compared; ``ValueError`` says why it is not one.

    >>> public_host("Arena.Example.org"), public_host("10.0.0.5"), public_host("[2001:db8::1]")
    ('arena.example.org', '10.0.0.5', '[2001:db8::1]')
    >>> public_host("*")
    Traceback (most recent call last):
    ValueError: '*': expected a host name (arena.example.org) or an address, without a port
    """
    if _ip(text) is not None and (not text.startswith("[") or text.endswith("]")):
        return shown(text.strip("[]"))
    if _NAME.fullmatch(text) and not text.replace(".", "").isdigit():
        return text.lower()
    raise ValueError(f"{text!r}: expected a host name (arena.example.org) or an address, without a port")


@dataclass(frozen=True, slots=True)
class Hosts:
    """The names a request may name; ``any_address``: any address literal too (a wildcard bind)."""

    names: frozenset[str]
    any_address: bool = False

    def allows(self, header: str | None) -> bool:
        """Whether a ``Host`` header names this server (any port).

        >>> hosts = allowed("127.0.0.2")
        >>> hosts.allows("127.0.0.2:8000"), hosts.allows("localhost:8000"), hosts.allows("evil.example")
        (True, False, False)
        >>> allowed("0.0.0.0").allows("10.1.2.3:80"), allowed("0.0.0.0").allows("evil.example")
        (True, False)
        """
        found = _HOST.fullmatch(header or "")
        if found is None:
            return False
        host = found["host"].lower()
        ip = _ip(host)
        if host.startswith("[") and not isinstance(ip, ipaddress.IPv6Address):
            return False
        if ip is not None:
            host = shown(str(ip))
        return host in self.names or (self.any_address and ip is not None)


def allowed(bind: str, public: Sequence[str] = ()) -> Hosts:
    """The hosts of a server bound to ``bind`` (an address or a name) and reached as ``public`` too.

    >>> sorted(allowed("127.0.0.1").names), sorted(allowed("::1").names)
    (['127.0.0.1', 'localhost'], ['[::1]', 'localhost'])
    >>> sorted(allowed("localhost").names)
    ['127.0.0.1', '[::1]', 'localhost']
    >>> sorted(allowed("10.0.0.5", ["arena.example.org"]).names)
    ['10.0.0.5', 'arena.example.org']
    """
    names = {shown(bind)}
    ip = _ip(bind)
    if bind.lower() == "localhost":
        names |= {"127.0.0.1", "[::1]"}
    elif ip is not None and ip in (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")):
        names.add("localhost")  # the name browsers give the loopback address
    wildcard = ip is not None and ip.is_unspecified
    if wildcard:
        names = {"localhost"}
    return Hosts(frozenset(names | {public_host(name) for name in public}), any_address=wildcard)


class HostGuard:
    """Refuses (400) a request that names a host not in ``hosts``."""

    def __init__(self, app: ASGIApp, hosts: Hosts) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            header = next((v for k, v in scope["headers"] if k == b"host"), b"").decode("latin-1")
            if not self.hosts.allows(header):
                await PlainTextResponse("Invalid host header", status_code=400)(scope, receive, send)
                return
        await self.app(scope, receive, send)
