"""Practice on demand: a remote entrant's author asks for a match now, against entrants they pick or
the sample bots, at any table size the rules allow (docs/SERVER.md, "Practice matches").

The author proves who they are with the entrant's token, sent as ``Authorization: Bearer TOKEN`` (never
in a URL, never echoed, never logged). The match is played in the server's process as the league's
matches with a remote seat are: the entrant's bot is claimed from the door's lobby once it has a free
connection (so it is played between its league matches, which go on meanwhile), the opponents are
started fresh in the league's sandbox, under the league's time control and fault limit. Its deals come
from a fresh secret seed, never the league's (ARCHITECTURE principle 8), shown once it is over. It is
unrated and stored apart (:class:`~referee.web.practice_store.PracticeStore`), reached by the random
key its author was given: its status at ``/api/v1/practice/KEY``, its replay at ``/practice/KEY``.

A quota keeps practice from crowding the league: :data:`AT_ONCE` table of an entrant at a time,
:data:`PER_DAY` a day, :data:`MAX_TABLES` on the server at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from dataclasses import dataclass, replace
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from pyramid_sdk.rules import Rules, RulesError
from pyramid_sdk.seeds import SEED_BITS
from referee.league.config import League
from referee.league.location import practice_path
from referee.match.arbiter import Arbiter, Sitting
from referee.match.bots import BotSpec
from referee.match.outcome import NotStarted
from referee.match.sessions import unique_names
from referee.match.setup import open_launcher
from referee.remote.lobby import Lobby
from referee.run.host import confinement_of, log_dir_of
from referee.web.authors import author_of, unauthorised
from referee.web.practice_store import PracticeStore
from referee.web.readers import Answers, Busy, ReadFailed

LOGGER = logging.getLogger(__name__)
AT_ONCE: Final = 1
"""Practice tables of one entrant in play (or waiting for its bot) at once."""
PER_DAY: Final = 20
"""Practice matches one entrant may ask for in 24 hours (those stored count, across restarts)."""
MAX_TABLES: Final = 2
"""Practice tables on the server at once, whoever asked: each starts bot processes beside the league's."""
WAIT: Final = 300.0
"""Seconds a practice table waits for the entrant's bot to have a free connection before it gives up."""
SAMPLES: Final = {
    "sample:random": "sample_bots.random_bot:RandomBot",
    "sample:heuristic": "sample_bots.heuristic:HeuristicBot",
}
"""The sample bots an author may pick as opponents besides the league's entrants, in-process."""
PRACTICE_MATCH_ID: Final = "practice"
"""The id the bots of a practice table are told: the same for every one."""


class Refused(Exception):
    """Why a practice match is not started: ``status`` is the HTTP status that says so."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


@dataclass(slots=True)
class PracticeTable:
    """One practice match asked for, reached by ``key``."""

    key: str
    entrant: str
    seats: tuple[str, ...]
    seed: int
    asked: float
    state: str = "waiting"
    """``waiting`` (for a free connection of the entrant's bot), ``playing``, ``over`` or ``failed``."""
    problem: str = ""
    totals: tuple[int, ...] = ()
    stored: int | None = None
    task: asyncio.Task[None] | None = None

    def answer(self) -> dict[str, Any]:
        over = self.state == "over"
        return {
            "key": self.key,
            "entrant": self.entrant,
            "seats": list(self.seats),
            "state": self.state,
            "problem": self.problem,
            "totals": list(self.totals),
            "seed": str(self.seed) if over else None,  # as text: 63 bits do not fit a JavaScript number
            "replay": f"/practice/{self.key}" if self.stored is not None else None,
        }


class Practice:
    """The practice tables asked for since the server started."""

    def __init__(self) -> None:
        self.tables: dict[str, PracticeTable] = {}
        self.state = 0
        """Practice matches stored since the server started: what is read of them is kept until it grows."""

    def in_play(self, entrant: str | None = None) -> int:
        return sum(
            1
            for t in self.tables.values()
            if t.state in ("waiting", "playing") and (entrant is None or t.entrant == entrant)
        )

    def open(self, league: League, lobby: Lobby, entrant: str, opponents: list[str]) -> PracticeTable:
        """Starts ``entrant``'s practice table against ``opponents``; raises :class:`Refused`."""
        known = {e.name for e in league.entrants if not e.spec.remote}
        for opponent in opponents:
            if opponent not in known and opponent not in SAMPLES:
                if opponent in league.remote_names:
                    raise Refused(
                        400, f"{opponent!r} plays from its author's machine: not at a practice table"
                    )
                choices = ", ".join(sorted(SAMPLES))
                raise Refused(400, f"no entrant {opponent!r} in {league.name} (or a sample bot: {choices})")
        try:
            rules = replace(league.rules, players=len(opponents) + 1)  # checked as any rules are
        except (RulesError, ValueError) as exc:
            raise Refused(400, f"{len(opponents) + 1} players: {exc}") from None
        if self.in_play(entrant) >= AT_ONCE:
            raise Refused(429, f"{entrant} has {AT_ONCE} practice match under way: wait for it to end")
        store = PracticeStore(practice_path(league.database))
        if store.asked_since(entrant, time.time() - 86400) + self.in_play(entrant) >= PER_DAY:
            raise Refused(429, f"{entrant} asked for {PER_DAY} practice matches in the last 24 hours")
        if self.in_play() >= MAX_TABLES:
            raise Refused(503, f"{MAX_TABLES} practice matches are under way already: try again soon")
        names = unique_names([entrant, *(opponent.removeprefix("sample:") for opponent in opponents)])
        key = secrets.token_urlsafe(16)
        table = PracticeTable(key, entrant, tuple(names), secrets.randbits(SEED_BITS), time.time())
        table.task = asyncio.create_task(self._play(league, lobby, rules, table, opponents))
        self.tables[key] = table
        return table

    async def _play(
        self, league: League, lobby: Lobby, rules: Rules, table: PracticeTable, opponents: list[str]
    ) -> None:
        try:
            deadline = time.monotonic() + WAIT
            while not lobby.ready([table.entrant]):  # between its league matches
                if time.monotonic() > deadline:
                    table.state, table.problem = "failed", f"your bot had no free connection for {WAIT:g}s"
                    return
                await asyncio.sleep(0.2)
            table.state = "playing"
            log_dir = log_dir_of(league)
            log_dir.mkdir(parents=True, exist_ok=True)
            specs = [
                BotSpec(seat, module=SAMPLES[name])
                if name in SAMPLES
                else replace(league.entrant(name).spec, name=seat)
                for name, seat in zip(opponents, table.seats[1:], strict=True)
            ]
            sitting = Sitting(PRACTICE_MATCH_ID, table.seed, (league.entrant(table.entrant).spec, *specs))
            async with open_launcher(log_dir, confinement_of(league, log_dir), remote=lobby) as launcher:
                arbiter = Arbiter(launcher, rules, league.time_control, league.max_faults)
                try:
                    result = await arbiter.play(sitting)
                finally:
                    await arbiter.close()
            if isinstance(result, NotStarted):
                table.state, table.problem = "failed", f"the table did not start: {result.reason}"
                return
            outcome = result.outcome
            table.totals = outcome.record.credited_totals
            store = PracticeStore(practice_path(league.database))
            table.stored = await asyncio.to_thread(
                store.save_keyed, outcome, table.seed, table.key, table.entrant, table.asked
            )
            table.state = "over"
            self.state += 1
        except Exception as exc:  # the author's answer says what went wrong; the server goes on
            LOGGER.exception("practice table %s failed", table.seats)
            table.state, table.problem = "failed", f"the table stopped: {type(exc).__name__}: {exc}"

    async def close(self) -> None:
        tasks = [t.task for t in self.tables.values() if t.task is not None]
        for task in tasks:
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*tasks, return_exceptions=True)


def _practice(request: Request) -> Practice:
    practice: Practice = request.app.state.practice
    return practice


async def ask(request: Request) -> Response:
    """``POST /api/v1/practice``: a practice match for the entrant whose token comes with it."""
    driver = request.app.state.driver
    league: League | None = driver.league
    if league is None:
        return JSONResponse({"error": "the league is starting"}, status_code=503)
    if driver.door is None:
        return JSONResponse(
            {"error": "practice matches need the door (referee serve --listen)"}, status_code=503
        )
    entrant = await author_of(request, league)
    if entrant is None:
        return unauthorised()
    if request.headers.get("content-type", "").split(";")[0] != "application/json":
        return JSONResponse({"error": "send JSON"}, status_code=415)
    try:
        body = await request.json()
        opponents = body["opponents"]
        if not isinstance(opponents, list) or not all(isinstance(o, str) for o in opponents):
            raise TypeError("opponents: a list of names")
        table = _practice(request).open(league, driver.door.lobby, entrant, opponents)
    except Refused as exc:
        return JSONResponse({"error": str(exc)}, status_code=exc.status)
    except (ValueError, KeyError, TypeError) as exc:
        return JSONResponse({"error": f"not a practice request: {exc}"}, status_code=400)
    return JSONResponse(table.answer(), status_code=202)


async def status(request: Request) -> Response:
    table = _practice(request).tables.get(request.path_params["key"])
    if table is None:
        return JSONResponse({"error": "no such practice match"}, status_code=404)
    return JSONResponse(table.answer(), headers={"cache-control": "no-store"})


async def replay(request: Request) -> Response:
    """A stored practice match's replay page, read by a reader process."""
    league: League | None = request.app.state.driver.league
    if league is None:
        return HTMLResponse("the league is starting", status_code=503)
    path, key = practice_path(league.database), request.path_params["key"]
    answers: Answers = request.app.state.answers
    try:
        page = await answers.get(
            ("practice-replay", path, key),
            lambda: _practice(request).state,
            lambda: ("practice_replay", (path, key)),
        )
    except Busy as exc:
        return HTMLResponse(f"the server is busy: {exc}; try again in a moment", status_code=503)
    except ReadFailed as exc:
        return HTMLResponse(f"this match cannot be shown: {exc}", status_code=500)
    if page is None:
        return HTMLResponse("no such practice match", status_code=404)
    return HTMLResponse(page)


ROUTES: Final = [
    Route("/api/v1/practice", ask, methods=["POST"]),
    Route("/api/v1/practice/{key}", status),
    Route("/practice/{key}", replay),
]
