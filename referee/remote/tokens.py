"""The remote entrants' tokens: issued once, kept only as salted hashes beside the league's results.

A token is shown to the organiser once, when it is issued, and never stored: the file keeps a random salt
and ``HMAC-SHA256(salt, token)`` per entrant, so a copy of the file admits nobody. A hello's token is
compared with every entrant's hash in constant time (``hmac.compare_digest``), so the time a refusal takes
says nothing about how close a guess was. Issuing again replaces the hash: the old token stops working at
the next hello, and a connection that presented it is dropped before its next match
(:meth:`TokenBook.holder`). The file is read again at every check, so ``referee token`` works while a
league runs; it is written to ``.new`` and renamed, readable by its owner only.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from referee.remote.files import locked, tokens_path

__all__ = ["Grant", "TokenBook", "TokenError", "tokens_path"]

TOKEN_PREFIX: Final = "pyr1_"
"""Every token starts so: a secret scanner (or a person) can tell one in a paste."""
FORMAT: Final = 1


class TokenError(ValueError):
    """The token file cannot be read or written; the message says which file and why."""


@dataclass(frozen=True, slots=True)
class Grant:
    """One entrant's token as stored: never the token itself."""

    salt: str
    digest: str
    issued: float
    expires: float | None = None

    def admits(self, token: str, now: float) -> bool:
        """Whether ``token`` is this grant's and has not expired (compared in constant time)."""
        fresh = self.expires is None or now < self.expires
        return hmac.compare_digest(_digest(self.salt, token), self.digest) and fresh


def _digest(salt: str, token: str) -> str:
    return hmac.new(bytes.fromhex(salt), token.encode(), hashlib.sha256).hexdigest()


class TokenBook:
    """The token file of one league."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._read: tuple[bytes, dict[str, Grant]] | None = None
        """The grants as last parsed, with the file's bytes then: the door checks a token at every
        hand-out, and the file (a few hundred bytes) is parsed again only when its bytes changed (a key
        on its inode, size and time could miss a rewrite within the clock's granularity)."""

    def grants(self) -> dict[str, Grant]:
        """Every entrant's grant as the file says now (``{}`` when no token was ever issued)."""
        try:
            text = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise TokenError(f"{self.path}: cannot read the token file: {exc}") from None
        if self._read is None or self._read[0] != text:
            self._read = (text, self._parse(text))
        return dict(self._read[1])

    def _parse(self, text: bytes) -> dict[str, Grant]:
        try:
            data = json.loads(text.decode("utf-8"))
        except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            raise TokenError(f"{self.path}: cannot read the token file: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise TokenError(f"{self.path}: not a token file of this referee (format {FORMAT})")
        try:
            return {name: Grant(**fields) for name, fields in data["tokens"].items()}
        except (KeyError, TypeError, AttributeError) as exc:
            raise TokenError(f"{self.path}: damaged token file ({exc})") from None

    def issue(self, name: str, lifetime: float | None = None) -> str:
        """A new token for ``name``, returned once; any earlier one of ``name`` is revoked."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        salt = secrets.token_hex(16)
        now = time.time()
        grant = Grant(salt, _digest(salt, token), now, now + lifetime if lifetime else None)
        with self._locked():
            self._write({**self.grants(), name: grant})
        return token

    def revoke(self, name: str) -> bool:
        """Forgets ``name``'s token; ``False`` if it had none."""
        with self._locked():
            grants = self.grants()
            if grants.pop(name, None) is None:
                return False
            self._write(grants)
        return True

    def rotate(self, name: str, token: str, now: float | None = None) -> str | None:
        """A new token for ``name`` in place of ``token``, its valid current one (the entrant proves it
        holds it), returned once; ``None``, and nothing changed, if ``token`` is not ``name``'s now. The
        new grant keeps the old one's expiry: a rotation never lengthens a token's life."""
        with self._locked():
            found = self.find(token, now)
            if found is None or found[0] != name:
                return None
            fresh = TOKEN_PREFIX + secrets.token_urlsafe(32)
            salt = secrets.token_hex(16)
            grant = Grant(salt, _digest(salt, fresh), time.time(), found[1].expires)
            self._write({**self.grants(), name: grant})
        return fresh

    def _locked(self) -> contextlib.AbstractContextManager[None]:
        """The file's read-change-write, held against another process's (``referee token issue`` while
        ``referee serve`` rotates a token)."""
        return locked(self.path)

    def holder(self, token: str, now: float | None = None) -> str | None:
        """The entrant whose valid token ``token`` is, or ``None``."""
        found = self.find(token, now)
        return found[0] if found is not None else None

    def find(self, token: str, now: float | None = None) -> tuple[str, Grant] | None:
        """The entrant whose valid token ``token`` is, and its grant, or ``None``. Every grant is
        compared, whichever matches, so the time taken does not depend on which one (or none) does."""
        return self.match(self.grants(), token, now)

    @staticmethod
    def match(grants: Mapping[str, Grant], token: str, now: float | None = None) -> tuple[str, Grant] | None:
        """:meth:`find` among ``grants`` (read already)."""
        now = time.time() if now is None else now
        found = None
        for name, grant in grants.items():
            if grant.admits(token, now):
                found = (name, grant)
        return found

    def _write(self, grants: dict[str, Grant]) -> None:
        data: dict[str, Any] = {
            "format": FORMAT,
            "tokens": {
                name: {"salt": g.salt, "digest": g.digest, "issued": g.issued, "expires": g.expires}
                for name, g in sorted(grants.items())
            },
        }
        new = self.path.with_name(self.path.name + ".new")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                json.dump(data, file, indent=1)
                file.write("\n")
            os.replace(new, self.path)
        except OSError as exc:
            raise TokenError(f"{self.path}: cannot write the token file: {exc.strerror or exc}") from None
