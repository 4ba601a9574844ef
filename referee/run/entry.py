"""Entry by the author (``referee serve --entry invite|open``): a remote entrant entered by its author,
with an invite code or on a trusted network, under a name of its own choosing, and its token shown once;
and a token rotated by the entrant that holds it.

Here, in the run part, because an entry joins three files of a league that the server plays: the league
file gains the remote entrant through the same comment-keeping, checked, renamed write ``referee submit``
uses (:func:`referee.league.config.add_remote_entrant`), the token file its token's salted hash, and the
invite file one use of the invite. The server's driver then takes the newcomer in without ending its pass
(``ServeDriver._absorb``). Entries are admitted one at a time (one lock), so a name asked for twice at
once goes to the first; the files are written in a thread, so the play never waits for a disk.

Every refusal is a :class:`Refused` with its :class:`Why` (the web app makes each a status); nothing is
written for one. Each address may be refused :data:`MAX_REFUSED` times in :data:`REFUSED_WINDOW` seconds
before it is shut out for the rest of the window, as the door shuts out an address after refused hellos,
and may enter :data:`MAX_ENTRIES` entrants in :data:`ENTRY_WINDOW`. The log names each entrant entered
and each refusal with its address, never a token or a code.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from referee.league.config import LeagueError, add_remote_entrant, load_league
from referee.remote.invites import InviteBook, InviteError, invites_path
from referee.remote.invites import Refused as InviteRefused
from referee.remote.tokens import TokenBook, TokenError, tokens_path
from referee.results.owner import made_by

LOGGER = logging.getLogger(__name__)

NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")
"""An entered name: the league file's rule for names, in ASCII only (no look-alike letters)."""
CODE: Final = re.compile(r"pyi1_[A-Za-z0-9_-]{16,64}")
TOKEN: Final = re.compile(r"pyr1_[A-Za-z0-9_-]{16,64}")
MAX_REFUSED: Final = 5
"""Refused entries and rotations one address may make in :data:`REFUSED_WINDOW` (the door's refused
hellos: 5 in 60 s) before it is shut out until the window has passed."""
REFUSED_WINDOW: Final = 60.0
MAX_ENTRIES: Final = 3
"""Entrants one address may enter in :data:`ENTRY_WINDOW`: an open door on a trusted network still does
not let one machine fill the league."""
ENTRY_WINDOW: Final = 3600.0
ADDRESSES: Final = 4096
"""Addresses whose attempts are remembered; past it, the longest quiet ones are forgotten."""


class EntryMode(enum.Enum):
    """Who may enter: nobody (the default), holders of an invite code, anyone who reaches the server."""

    CLOSED = "closed"
    INVITE = "invite"
    OPEN = "open"


class Why(enum.Enum):
    """Why an entry or a rotation was refused; each has its own status at the edge."""

    CLOSED = "entry is closed on this server"
    INVALID = "invalid"
    UNKNOWN_INVITE = "unknown or revoked invite code"
    EXHAUSTED = "this invite code has been used as often as it may be"
    EXPIRED = "this invite code has expired"
    NAME_TAKEN = "that name is taken: choose another"
    WRONG_TOKEN = "that is not this entrant's current token"
    TOO_MANY = "too many attempts"
    TROUBLE = "the server cannot admit entries now"


class Refused(Exception):
    """An entry or rotation refused, nothing written; ``retry`` seconds for :attr:`Why.TOO_MANY`."""

    def __init__(self, why: Why, text: str = "", retry: float = 0.0) -> None:
        super().__init__(text or why.value)
        self.why = why
        self.retry = retry


@dataclass(frozen=True, slots=True)
class Entered:
    """An entrant entered, or a token rotated: the token, to be shown this once."""

    name: str
    token: str


_INVITE_WHY: Final = {
    "UNKNOWN": Why.UNKNOWN_INVITE,
    "EXHAUSTED": Why.EXHAUSTED,
    "EXPIRED": Why.EXPIRED,
}


@dataclass(slots=True)
class Attempts:
    """Per address, when its recent attempts were (a sliding window of ``window`` seconds, ``limit``
    attempts): how long it must still wait.

    >>> attempts = Attempts(limit=2, window=60.0)
    >>> attempts.add("a", 0.0); attempts.add("a", 1.0)
    >>> attempts.wait("a", 30.0), attempts.wait("a", 61.0), attempts.wait("b", 30.0)
    (30.0, 0.0, 0.0)
    """

    limit: int
    window: float
    seen: dict[str, deque[float]] = field(default_factory=dict)

    def wait(self, address: str, now: float) -> float:
        times = self.seen.get(address)
        if not times:
            return 0.0
        while times and times[0] <= now - self.window:
            times.popleft()
        if not times:
            del self.seen[address]
            return 0.0
        return 0.0 if len(times) < self.limit else times[0] + self.window - now

    def add(self, address: str, now: float) -> None:
        if address not in self.seen and len(self.seen) >= ADDRESSES:
            quiet = sorted(self.seen, key=lambda key: self.seen[key][-1] if self.seen[key] else 0.0)
            for key in quiet[: ADDRESSES // 2]:
                del self.seen[key]
        self.seen.setdefault(address, deque(maxlen=self.limit)).append(now)


def check_name(name: object) -> str:
    """``name`` if it is a name an author may enter under, else :class:`Refused` (``INVALID``); the
    message never repeats what was sent.

    >>> check_name("alice-net")
    'alice-net'
    >>> check_name("<b>x</b>")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    referee.run.entry.Refused: a name is 1 to 64 letters, digits and _ . + - (ASCII), starting with a ...
    """
    if not isinstance(name, str) or NAME.fullmatch(name) is None:
        raise Refused(
            Why.INVALID,
            "a name is 1 to 64 letters, digits and _ . + - (ASCII), starting with a letter or digit",
        )
    if name.lower() == "referee":
        raise Refused(Why.INVALID, "the name 'referee' is the referee's own: choose another")
    return name


class Entry:
    """The entry of one served league file; see the module's doc. ``clock`` is the rate limits'."""

    def __init__(
        self,
        league_file: Path,
        mode: EntryMode,
        taken: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.league_file = league_file
        self.mode = mode
        self.taken = taken
        """Told (on the event loop) once an entry or a rotation is written: the server's driver takes it
        in before the author is answered (``ServeDriver.take_in``)."""
        self.clock = clock
        self.refused = Attempts(MAX_REFUSED, REFUSED_WINDOW)
        self.entered = Attempts(MAX_ENTRIES, ENTRY_WINDOW)
        self._lock = asyncio.Lock()

    @property
    def is_open(self) -> bool:
        return self.mode is not EntryMode.CLOSED

    async def enter(self, address: str, name: object, code: object) -> Entered:
        """Enters the remote entrant ``name`` for the author at ``address`` (with invite ``code`` unless
        entry is open); the token, returned once. :class:`Refused`, with nothing written, otherwise."""
        self._open()
        self._not_shut_out(address)
        wait = self.entered.wait(address, self.clock())
        if wait > 0:
            raise Refused(
                Why.TOO_MANY, f"{address} entered {MAX_ENTRIES} entrants lately: try again later", wait
            )
        try:
            checked = check_name(name)
            if self.mode is EntryMode.INVITE and (not isinstance(code, str) or CODE.fullmatch(code) is None):
                raise Refused(Why.UNKNOWN_INVITE)
            async with self._lock:
                token = await asyncio.to_thread(
                    self._enter_now, checked, code if isinstance(code, str) else "", address
                )
        except Refused as refused:
            self._count_refusal(address, "an entry", refused)
            raise
        self.entered.add(address, self.clock())
        self.taken()
        return Entered(checked, token)

    async def rotate(self, address: str, name: object, token: object) -> Entered:
        """A new token for the remote entrant ``name`` in place of ``token``, its current one; returned
        once. The old token stops working at once (a bot connected with it is dropped before its next
        match). :class:`Refused`, nothing written, if ``token`` is not ``name``'s now."""
        self._open()
        self._not_shut_out(address)
        try:
            checked = check_name(name)
            if not isinstance(token, str) or TOKEN.fullmatch(token) is None:
                raise Refused(Why.WRONG_TOKEN)
            async with self._lock:
                fresh = await asyncio.to_thread(self._rotate_now, checked, token)
        except Refused as refused:
            self._count_refusal(address, "a token rotation", refused)
            raise
        LOGGER.warning("entry: %s rotated its token (from %s)", checked, address)
        self.taken()
        return Entered(checked, fresh)

    def _open(self) -> None:
        if self.mode is EntryMode.CLOSED:
            raise Refused(Why.CLOSED, "entry is closed on this server: ask its organiser")

    def _not_shut_out(self, address: str) -> None:
        wait = self.refused.wait(address, self.clock())
        if wait > 0:
            raise Refused(
                Why.TOO_MANY,
                f"{address} was refused {MAX_REFUSED} times lately: try again in {wait:.0f}s",
                wait,
            )

    def _count_refusal(self, address: str, what: str, refused: Refused) -> None:
        if refused.why is Why.TROUBLE:  # the server's own trouble is no attempt of the author's
            return
        self.refused.add(address, self.clock())
        LOGGER.warning("entry: refused %s from %s: %s", what, address, refused.why.value)

    def _paths(self) -> tuple[TokenBook, InviteBook, set[str]]:
        """The league's token and invite books and its entrants' names (lower case) as the file says now."""
        try:
            league = load_league(self.league_file, check_commands=False, made_by=made_by)
        except LeagueError as exc:
            LOGGER.warning("entry: %s", exc)
            raise Refused(Why.TROUBLE, "the league file cannot be read now: try again later") from None
        names = {entrant.name.lower() for entrant in league.entrants}
        return TokenBook(tokens_path(league.database)), InviteBook(invites_path(league.database)), names

    def _enter_now(self, name: str, code: str, address: str) -> str:
        """The entry itself, in a thread: the invite's use taken, the token issued, the league file
        written; each undone if a later step fails."""
        tokens, invites, names = self._paths()
        if name.lower() in names:
            raise Refused(Why.NAME_TAKEN)
        invite = ""
        try:
            if self.mode is EntryMode.INVITE:
                invite = invites.take(code)
        except InviteRefused as exc:
            raise Refused(_INVITE_WHY[exc.refusal.name]) from None
        except InviteError as exc:
            LOGGER.warning("entry: %s", exc)
            raise Refused(Why.TROUBLE) from None
        issued = False
        try:
            token = tokens.issue(name)
            issued = True
            add_remote_entrant(self.league_file, name)
        except (TokenError, LeagueError) as exc:
            if issued:
                tokens.revoke(name)
            if invite:
                invites.give_back(invite)
            if isinstance(exc, LeagueError) and "already named" in str(exc):
                raise Refused(Why.NAME_TAKEN) from None
            LOGGER.warning("entry: %s", exc)
            raise Refused(Why.TROUBLE) from None
        how = f"with invite {invite}" if invite else "by open entry"
        LOGGER.warning("entry: %s entered from %s %s", name, address, how)
        return token

    def _rotate_now(self, name: str, token: str) -> str:
        tokens, _, _ = self._paths()
        try:
            fresh = tokens.rotate(name, token)
        except TokenError as exc:
            LOGGER.warning("entry: %s", exc)
            raise Refused(Why.TROUBLE) from None
        if fresh is None:
            raise Refused(Why.WRONG_TOKEN)
        return fresh
