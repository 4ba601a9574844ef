"""Invite codes: what lets an author enter a remote entrant by themselves (``referee serve --entry
invite``), kept as the tokens are, as salted hashes only, beside the league's results.

The organiser issues a code (``referee invite issue``), good for a number of entries and a lifetime, and
sees it once; the file keeps a random salt and ``HMAC-SHA256(salt, code)`` per invite, with a short public
id to list and revoke it by, so a copy of the file lets nobody in. A code given at entry is compared with
every invite's hash in constant time, whichever matches. Each entry takes one use at once
(:meth:`InviteBook.take`), under a lock that another process's write (the organiser issuing or revoking
while the server admits an entry) waits for, and gives it back if the entry then fails
(:meth:`InviteBook.give_back`): a use is spent only on an entrant that entered.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import json
import os
import secrets
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from referee.remote.files import invites_path, locked

__all__ = ["INVITE_PREFIX", "Invite", "InviteBook", "InviteError", "Refusal", "invites_path"]

INVITE_PREFIX: Final = "pyi1_"
"""Every invite code starts so (a token starts ``pyr1_``): a person can tell which is which."""
USES: Final = 1
"""Entries one invite admits unless ``--uses`` says otherwise: one code, one author."""
LIFETIME: Final = 7 * 86400.0
"""Seconds an invite lasts unless ``--expires`` says otherwise: a week."""
MAX_USES: Final = 1000
FORMAT: Final = 1


class InviteError(ValueError):
    """The invite file cannot be read or written; the message says which file and why."""


class Refusal(enum.Enum):
    """Why a code admits no entry. Each has its own answer: whoever holds a real code may know what
    became of it, and a guessed code is only ever ``UNKNOWN``."""

    UNKNOWN = "unknown or revoked invite code"
    EXHAUSTED = "this invite code has been used as often as it may be"
    EXPIRED = "this invite code has expired"


class Refused(Exception):
    """A code that admits no entry, and why."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.value)
        self.refusal = refusal


@dataclass(frozen=True, slots=True)
class Invite:
    """One invite as stored: never the code itself."""

    id: str
    salt: str
    digest: str
    issued: float
    expires: float
    uses: int
    used: int = 0

    @property
    def left(self) -> int:
        return max(0, self.uses - self.used)

    def matches(self, code: str) -> bool:
        return hmac.compare_digest(_digest(self.salt, code), self.digest)


def _digest(salt: str, code: str) -> str:
    return hmac.new(bytes.fromhex(salt), code.encode(), hashlib.sha256).hexdigest()


class InviteBook:
    """The invite file of one league (``<database>-invites.json``, readable by its owner only)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def invites(self) -> dict[str, Invite]:
        """Every invite by id, as the file says now (``{}`` when none was ever issued)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            raise InviteError(f"{self.path}: cannot read the invite file: {exc}") from None
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InviteError(f"{self.path}: cannot read the invite file: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InviteError(f"{self.path}: not an invite file of this referee (format {FORMAT})")
        try:
            return {key: Invite(id=key, **fields) for key, fields in data["invites"].items()}
        except (KeyError, TypeError, AttributeError) as exc:
            raise InviteError(f"{self.path}: damaged invite file ({exc})") from None

    def issue(self, uses: int = USES, lifetime: float = LIFETIME) -> tuple[str, str]:
        """A new invite: its id and its code, the code returned this once."""
        if not 1 <= uses <= MAX_USES:
            raise InviteError(f"an invite admits 1 to {MAX_USES} entries, not {uses}")
        code = INVITE_PREFIX + secrets.token_urlsafe(24)
        salt = secrets.token_hex(16)
        now = time.time()
        with locked(self.path):
            invites = self.invites()
            key = secrets.token_hex(4)
            while key in invites:
                key = secrets.token_hex(4)
            invites[key] = Invite(key, salt, _digest(salt, code), now, now + lifetime, uses)
            self._write(invites)
        return key, code

    def revoke(self, key: str) -> bool:
        """Forgets the invite ``key``; ``False`` if there is none. Entrants it admitted stay (revoke their
        tokens with ``referee token revoke``)."""
        with locked(self.path):
            invites = self.invites()
            if invites.pop(key, None) is None:
                return False
            self._write(invites)
        return True

    def take(self, code: str, now: float | None = None) -> str:
        """Takes one use of the invite whose code ``code`` is, and returns its id; raises
        :class:`Refused` (nothing changed) if it is unknown, used up or expired. Every invite's hash is
        compared, whichever matches, so the time taken says nothing of which one (or none) does."""
        now = time.time() if now is None else now
        with locked(self.path):
            invites = self.invites()
            found = None
            for invite in invites.values():
                if invite.matches(code):
                    found = invite
            if found is None:
                raise Refused(Refusal.UNKNOWN)
            if now >= found.expires:
                raise Refused(Refusal.EXPIRED)
            if found.left <= 0:
                raise Refused(Refusal.EXHAUSTED)
            invites[found.id] = replace(found, used=found.used + 1)
            self._write(invites)
        return found.id

    def give_back(self, key: str) -> None:
        """The use :meth:`take` took for an entry that then failed: the invite admits one more again."""
        with locked(self.path):
            invites = self.invites()
            invite = invites.get(key)
            if invite is not None and invite.used > 0:
                invites[key] = replace(invite, used=invite.used - 1)
                self._write(invites)

    def _write(self, invites: dict[str, Invite]) -> None:
        data: dict[str, Any] = {
            "format": FORMAT,
            "invites": {
                key: {
                    "salt": i.salt,
                    "digest": i.digest,
                    "issued": i.issued,
                    "expires": i.expires,
                    "uses": i.uses,
                    "used": i.used,
                }
                for key, i in sorted(invites.items())
            },
        }
        new = self.path.with_name(self.path.name + ".new")
        try:
            descriptor = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                json.dump(data, file, indent=1)
                file.write("\n")
            os.replace(new, self.path)
        except OSError as exc:
            raise InviteError(f"{self.path}: cannot write the invite file: {exc.strerror or exc}") from None
