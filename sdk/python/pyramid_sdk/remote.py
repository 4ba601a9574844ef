"""What a remote entrant's connection needs beyond a sandboxed bot's: a keepalive of its own, and a probe
that tells a connection that can never work (the wrong TLS settings) from a referee that is not there yet.

A sandboxed bot talks to its referee over a Unix socket on the same machine, and the referee sees it die.
A remote bot's connection crosses a network, where it can go silent without closing: the referee's machine
gone, a NAT that forgot it, a cable pulled. Its gRPC channel then pings the referee every
:data:`KEEPALIVE_INTERVAL` seconds, and gives the connection up when a ping goes :data:`KEEPALIVE_TIMEOUT`
seconds unanswered; the bot then reconnects as after any drop (docs/PROTOCOL.md, "Remote entrants"). The
timeout is long enough that a Node.js bot, whose event loop cannot read the answer while its code
thinks, is not cut by its own keepalive for a decision the default time control allows (21 s); gRPC's
Python threads read the answer while the bot thinks.

Only the remote path loads this module, and it loads :mod:`ssl` only to probe a failed connection.
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import ssl

ENV_KEEPALIVE: Final = "PYRAMID_KEEPALIVE"
"""Seconds a remote bot waits for the answer to its keepalive ping before it gives the connection up."""
KEEPALIVE_TIMEOUT: Final = 45.0
KEEPALIVE_MIN: Final = 6.0
"""The shortest ``PYRAMID_KEEPALIVE``: it pings every third of it, and the referee's door takes a ping a
second at most (``referee/remote/door.py``, ``CLIENT_PING_MIN_INTERVAL``)."""
KEEPALIVE_INTERVAL: Final = KEEPALIVE_TIMEOUT / 3
PROBE_TIMEOUT: Final = 5.0
"""Seconds the probe of a failed connection waits to connect, or for the referee's TLS handshake."""
_HTTP2_PREFACE: Final = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes((0, 0, 0, 4, 0, 0, 0, 0, 0))
"""An HTTP/2 client's first bytes: the preface and an empty SETTINGS frame."""
_SETTINGS: Final = 4
_NAME_MISMATCH: Final = frozenset({62, 64})
"""OpenSSL's ``X509_V_ERR_HOSTNAME_MISMATCH`` and ``X509_V_ERR_IP_ADDRESS_MISMATCH``."""


def keepalive_timeout() -> float:
    """``PYRAMID_KEEPALIVE`` in seconds, else :data:`KEEPALIVE_TIMEOUT`; ``ValueError`` saying what to
    set for a value that is not a number of seconds, or is under :data:`KEEPALIVE_MIN`."""
    text = os.environ.get(ENV_KEEPALIVE, "").strip()
    if not text:
        return KEEPALIVE_TIMEOUT
    try:
        seconds = float(text.removesuffix("s"))
    except ValueError:
        seconds = float("nan")
    if not seconds >= KEEPALIVE_MIN:  # also NaN
        raise ValueError(f"{ENV_KEEPALIVE}={text!r} is not a number of seconds of at least {KEEPALIVE_MIN:g}")
    return seconds


def channel_options(timeout: float) -> tuple[tuple[str, int], ...]:
    """gRPC channel options that ping every third of ``timeout`` seconds and give the connection up when
    a ping goes ``timeout`` seconds unanswered, also while no message flows (gRPC's default stops pinging
    after two pings without data, and an idle lobby sends none for minutes)."""
    return (
        ("grpc.keepalive_time_ms", round(timeout / 3 * 1000)),
        ("grpc.keepalive_timeout_ms", round(timeout * 1000)),
        ("grpc.http2.ping_timeout_ms", round(timeout * 1000)),  # what a keepalive ping waits, since 1.7x
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.keepalive_permit_without_calls", 1),
    )


def host_and_port(address: str) -> tuple[str, int] | None:
    """The host and port of a gRPC target, or ``None`` if it names no TCP address.

    >>> host_and_port("arena.example.org:7443"), host_and_port("[::1]:80"), host_and_port("dns:///h:1")
    (('arena.example.org', 7443), ('::1', 80), ('h', 1))
    >>> host_and_port("unix:/tmp/s"), host_and_port("10.0.0.1")
    (None, ('10.0.0.1', 443))
    """
    for prefix in ("dns:///", "dns:", "ipv4:", "ipv6:"):
        if address.startswith(prefix):
            address = address.removeprefix(prefix)
            break
    else:
        if address.partition(":")[0] in ("unix", "unix-abstract", "vsock"):
            return None
    if address.startswith("["):
        host, _, rest = address[1:].partition("]")
        port = rest.removeprefix(":")
    elif address.count(":") == 1:
        host, _, port = address.partition(":")
    else:
        host, port = address, ""
    if not host or not (port or "443").isdigit():
        return None
    return host, int(port or "443")


def tls_refusal(address: str, ca_path: str | None) -> str | None:
    """Why no connection to ``address`` can work with these TLS settings (``ca_path``: the file of
    ``PYRAMID_TLS_CA``, or ``None`` for plaintext), as the line a bot prints before it stops; or ``None``
    when the probe finds nothing final (nobody listens yet, the network is down, the handshake works:
    then trying again is right).

    gRPC reports every one of these cases as ``UNAVAILABLE``, as it reports a referee that is not up yet;
    its message text differs between versions and languages. So the probe asks the referee's port
    directly: one TLS handshake with Python's :mod:`ssl` (and, if that fails short of a certificate,
    one plaintext HTTP/2 greeting), then closes."""
    target = host_and_port(address)
    if target is None:
        return None
    import ssl  # noqa: PLC0415 (a failed remote connection's only)

    host, port = target
    if ca_path is None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        if _handshake(context, host, port) is None:
            return "the referee speaks TLS: set PYRAMID_TLS_CA to the organiser's CA certificate"
        return None
    try:
        context = ssl.create_default_context(cafile=ca_path)
    except (OSError, ssl.SSLError):
        return f"PYRAMID_TLS_CA={ca_path} is not a PEM certificate"
    error = _handshake(context, host, port)
    if isinstance(error, ssl.SSLCertVerificationError):
        if error.verify_code in _NAME_MISMATCH:
            names = _certificate_names(ca_path, host, port)
            return (
                f"the referee's certificate is not for {host}"
                + (f" (it names {names})" if names else "")
                + ": set PYRAMID_ADDRESS to a name it was issued for"
            )
        if error.verify_code in (9, 10):  # not yet valid, expired
            return f"the referee's certificate does not verify: {error.verify_message}"
        return f"the referee's certificate is not signed by PYRAMID_TLS_CA={ca_path}"
    if isinstance(error, ssl.SSLError) and _speaks_plaintext(host, port):
        return (
            f"the referee at {host}:{port} does not speak TLS: unset PYRAMID_TLS_CA to connect in "
            "plaintext (its token then crosses the network unencrypted)"
        )
    return None


def _handshake(context: ssl.SSLContext, host: str, port: int) -> Exception | None:
    """The error of one TLS handshake with the referee; ``None`` once it succeeded, and a plain
    ``OSError`` when it could not be tried (nobody listens, no route, a timeout)."""
    import ssl  # noqa: PLC0415

    context.set_alpn_protocols(["h2"])
    try:
        with (
            socket.create_connection((host, port), PROBE_TIMEOUT) as raw,
            context.wrap_socket(raw, server_hostname=host),
        ):
            return None
    except ssl.SSLError as exc:
        return exc
    except OSError as exc:
        return exc


def _certificate_names(ca_path: str, host: str, port: int) -> str:
    """The names the referee's certificate (signed by the CA) was issued for, as ``DNS:a, IP:b``."""
    import ssl  # noqa: PLC0415

    context = ssl.create_default_context(cafile=ca_path)
    context.check_hostname = False
    try:
        with (
            socket.create_connection((host, port), PROBE_TIMEOUT) as raw,
            context.wrap_socket(raw, server_hostname=host) as tls,
        ):
            names = (tls.getpeercert() or {}).get("subjectAltName", ())
    except OSError:
        return ""
    return ", ".join(f"{name[0]}:{name[1]}" for name in names if isinstance(name, tuple))


def _speaks_plaintext(host: str, port: int) -> bool:
    """Whether the referee's port answers an HTTP/2 greeting in plaintext (with its SETTINGS frame)."""
    try:
        with socket.create_connection((host, port), PROBE_TIMEOUT) as raw:
            raw.settimeout(PROBE_TIMEOUT)
            raw.sendall(_HTTP2_PREFACE)
            header = b""
            while len(header) < 9:
                chunk = raw.recv(9 - len(header))
                if not chunk:
                    return False
                header += chunk
    except OSError:
        return False
    return header[3] == _SETTINGS
