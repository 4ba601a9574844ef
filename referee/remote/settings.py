"""Where and how the referee listens for remote entrants: the league file's ``remote:`` keys, which
``referee run``'s options override."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Final

WAIT: Final = 60.0
"""Seconds a match waits for its remote entrants to be connected and free, by default."""
MAX_MATCHES: Final = 1
"""Matches one remote entrant may play at once, by default: one after another."""
MAX_MATCHES_LIMIT: Final = 64
"""The largest ``remote: max_matches`` a league may give: what one entrant may hold of the door (a stream
per match) stays bounded whatever its bot asks for."""


class RemoteSettingsError(ValueError):
    """Remote settings that cannot work or are unsafe; one line saying what to change."""


@dataclass(frozen=True, slots=True)
class RemoteSettings:
    listen: str | None = None
    """``HOST:PORT`` of the door; ``None``: no door (a league with a remote entrant needs one)."""
    tls_cert: Path | None = None
    tls_key: Path | None = None
    insecure: bool = False
    """Plaintext on a non-loopback address: only when the organiser says so."""
    wait: float = WAIT
    max_matches: int = MAX_MATCHES
    """The league's cap on the matches one remote entrant plays at once (``remote: max_matches``): a bot
    asks for up to that many in its hello and is granted the smaller."""

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None

    def check(self) -> None:
        """Raises :class:`RemoteSettingsError` for a door that cannot open or would be unsafe.

        >>> RemoteSettings("0.0.0.0:7443").check()
        Traceback (most recent call last):
        ...
        referee.remote.settings.RemoteSettingsError: --listen 0.0.0.0:7443 is not a loopback address and \
has no TLS: give --tls-cert and --tls-key (docs/REMOTE.md), or --insecure to send tokens in plaintext
        >>> RemoteSettings("127.0.0.1:7443").check()
        """
        if self.listen is None:
            return
        host, _, port = self.listen.rpartition(":")
        if not host or not port.isdigit() or not 0 <= int(port) < 65536:
            raise RemoteSettingsError(f"--listen {self.listen}: give HOST:PORT, e.g. 0.0.0.0:7443")
        if (self.tls_cert is None) != (self.tls_key is None):
            raise RemoteSettingsError("give both --tls-cert and --tls-key, or neither")
        for path in (self.tls_cert, self.tls_key):
            if path is not None and not path.is_file():
                raise RemoteSettingsError(f"{path}: no such file (for TLS)")
        if not self.tls and not self.insecure and not is_loopback(host):
            raise RemoteSettingsError(
                f"--listen {self.listen} is not a loopback address and has no TLS: give --tls-cert and "
                "--tls-key (docs/REMOTE.md), or --insecure to send tokens in plaintext"
            )


def is_loopback(host: str) -> bool:
    """Whether ``host`` (of ``HOST:PORT``) is this machine only.

    >>> is_loopback("127.0.0.1"), is_loopback("[::1]"), is_loopback("localhost"), is_loopback("0.0.0.0")
    (True, True, True, False)
    """
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
