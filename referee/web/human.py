"""The human seat: a person plays a whole match in the browser against entrants of the league.

The person's seat is a :class:`HumanSeat`, a seat like any other to the match driver: the same referee,
rules and checks, with a generous clock (:data:`HUMAN_CLOCK` a decision). The match is played by a
:class:`~referee.match.arbiter.Arbiter` as a league match is, under the league's time control and fault
limit, the person's seat given to it in place of a started bot: the opponents are the league's entrants,
started fresh for the table, in the league's sandbox (an opponent that does not start, even once tried
again, stops the table before it is played; a void match is played again). The deals come
from a fresh secret seed, never a league's, so a human table tells nothing of the league's deals; the
seed is shown once the match is over.

Human matches are stored apart, in ``<results database>-human.sqlite`` beside the league's results,
never rated; each can be replayed like any match (``/human/ID``, or its line with ``referee replay``).
A table is reached only through the random token of its address, which gives no access to anything of
the league: the one thing a human seat can change is its own table.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from pyramid_sdk.actions import Action, Declare, InvalidActionError, Play, parse_action
from pyramid_sdk.bot import MatchInfo, MatchResult
from pyramid_sdk.observation import Observation
from pyramid_sdk.seeds import SEED_BITS
from referee.league.config import League
from referee.match.arbiter import Arbiter, Sitting
from referee.match.bots import BotSpec, BotSpecError
from referee.match.faults import Fault, FaultKind
from referee.match.outcome import NotStarted
from referee.match.playing import Answer, Seat
from referee.match.sessions import clean_name, unique_names
from referee.match.setup import open_launcher
from referee.match.watch import LiveMatch, public_view, watched
from referee.run.host import confinement_of, log_dir_of
from referee.web.human_store import HumanStore, human_database
from referee.web.readers import RETRY_AFTER, Answers, Busy, ReadFailed
from referee.web.render import render

LOGGER = logging.getLogger(__name__)
HUMAN_CLOCK: Final = 600.0
"""Seconds a person has for each decision; past it the referee plays for them (a timeout fault)."""
MAX_TABLES: Final = 2
"""Human tables at once: each starts bot processes, and the league's matches share the machine."""
HUMAN_MATCH_ID: Final = "human"
"""The id the bots of a human table are told: the same for every one, so it says nothing of the seed."""


class HumanSeat:
    """A seat whose decisions come from the browser: :meth:`decide` waits for :meth:`answer`."""

    def __init__(self, name: str, clock: float = HUMAN_CLOCK) -> None:
        self.name = name
        self.clock = clock
        self.obs: Observation | None = None
        """The last observation sent to this seat: its hand, and while asked, its legal actions."""
        self.asked = False
        self.notices: list[str] = []
        self._answer: asyncio.Future[Action] | None = None

    async def start(self, info: MatchInfo) -> str | None:
        return None

    async def decide(self, obs: Observation, time_limit: float, bank: float) -> Answer:
        self.obs = obs
        self._answer = asyncio.get_running_loop().create_future()
        self.asked = True
        try:
            return Answer(action=await asyncio.wait_for(self._answer, self.clock))
        except TimeoutError:
            return Answer(fault=FaultKind.TIMEOUT, detail=f"no move in {self.clock:g}s")
        finally:
            self.asked = False
            self._answer = None

    def answer(self, action: Action) -> str | None:
        """Hands the browser's action to the referee; why not, or ``None``. The referee still checks it
        (an illegal one is a fault, as for a bot); this only refuses what cannot be an answer now."""
        if self._answer is None or self._answer.done() or self.obs is None:
            return "it is not your turn"
        if action not in self.obs.legal_actions and not (
            isinstance(action, Play) and Play(action.card) in self.obs.legal_actions
        ):
            return f"{action} is not one of your legal moves now"
        self._answer.set_result(action)
        return None

    async def deal_end(self, obs: Observation) -> None:
        self.obs = obs

    async def end(self, result: MatchResult, forfeited: bool, faults: Sequence[Fault]) -> None:
        pass

    def violations(self) -> list[str]:
        return []

    def notify(self, text: str) -> None:
        self.notices.append(text)


@dataclass(slots=True)
class HumanMatch:
    """One person's match in play, reached by ``token``."""

    token: str
    seats: tuple[str, ...]
    human: HumanSeat
    live: LiveMatch
    seed: int
    task: asyncio.Task[None] | None = None
    stored_id: int | None = None
    problem: str = ""
    totals: tuple[int, ...] = ()
    finished: float = field(default=0.0)

    def state(self) -> dict[str, Any]:
        """What the person's page shows: the table as every seat sees it, and their own hand and moves."""
        obs = self.human.obs
        over = self.task is not None and self.task.done()
        return {
            "seats": list(self.seats),
            "seat": 0,
            "view": public_view(obs) if obs is not None else self.live.view,
            "talk_seen": [[m.seat, m.trick, m.text] for m in obs.talk] if obs is not None else [],
            "hand": [card.code for card in obs.hand] if obs is not None else [],
            "your_turn": self.human.asked,
            "legal": [str(a) for a in obs.legal_actions] if obs is not None and self.human.asked else [],
            "may_talk": obs is not None
            and self.human.asked
            and obs.declarer != 0
            and obs.rules.talk != "off",
            "notices": self.human.notices[-5:],
            "over": over,
            "problem": self.problem,
            "totals": list(self.totals),
            "seed": str(self.seed) if over else None,  # as text: 63 bits do not fit a JavaScript number
            "replay": f"/human/{self.stored_id}" if self.stored_id is not None else None,
        }


class HumanMatches:
    """The human tables in play."""

    def __init__(self) -> None:
        self.tables: dict[str, HumanMatch] = {}
        self.state = 0
        """Human matches stored since the server started: what is read of them is kept until it grows."""

    def in_play(self) -> int:
        return sum(1 for t in self.tables.values() if t.task is not None and not t.task.done())

    def open(self, league: League, opponents: Sequence[str], name: str) -> HumanMatch:
        """Starts a table of the person and ``opponents`` (entrant names); raises ``ValueError`` with
        the reason it cannot."""
        if len(opponents) != league.players - 1:
            raise ValueError(
                f"{league.name} is played by {league.players}: pick {league.players - 1} opponents"
            )
        known = {e.name for e in league.entrants if not e.spec.remote}
        unknown = [o for o in opponents if o not in known]
        if unknown:
            if unknown[0] in league.remote_names:  # its one connection is the league's, not a human's
                raise ValueError(f"{unknown[0]!r} plays from its author's machine: not at a human table")
            raise ValueError(f"no entrant {unknown[0]!r} in {league.name}")
        if self.in_play() >= MAX_TABLES:
            raise ValueError(f"{MAX_TABLES} human tables are in play already: try again when one ends")
        person = clean_name(name) or "you"
        names = unique_names([person, *opponents])
        token = secrets.token_urlsafe(16)
        seed = secrets.randbits(SEED_BITS)
        live = LiveMatch(HUMAN_MATCH_ID, tuple(names), True)
        table = HumanMatch(token, tuple(names), HumanSeat(person), live, seed)
        table.task = asyncio.create_task(self._play(league, table, list(opponents)))
        self.tables[token] = table
        return table

    async def _play(self, league: League, table: HumanMatch, opponents: list[str]) -> None:
        log_dir = log_dir_of(league)
        log_dir.mkdir(parents=True, exist_ok=True)
        specs = [
            replace(league.entrant(name).spec, name=seat)
            for name, seat in zip(opponents, table.seats[1:], strict=True)
        ]
        bots: tuple[BotSpec | Seat, ...] = (table.human, *specs)
        sitting = Sitting(HUMAN_MATCH_ID, table.seed, bots)
        try:
            async with open_launcher(log_dir, confinement_of(league, log_dir)) as launcher:
                match_table = Arbiter(launcher, league.rules, league.time_control, league.max_faults)
                try:
                    result = await match_table.play(sitting, dress=lambda seats: watched(seats, table.live))
                finally:
                    await match_table.close()
            if isinstance(result, NotStarted):
                raise BotSpecError(result.reason)
            outcome = result.outcome
            table.totals = outcome.record.credited_totals
            table.stored_id = await asyncio.to_thread(
                HumanStore(human_database(league)).save, outcome, table.seed
            )
            self.state += 1
        except Exception as exc:  # the person's page says what went wrong; the server goes on
            LOGGER.exception("human table %s failed", table.seats)
            table.problem = f"the table stopped: {type(exc).__name__}: {exc}"

    async def close(self) -> None:
        for table in self.tables.values():
            if table.task is not None:
                table.task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*(t.task for t in self.tables.values() if t.task), return_exceptions=True)


def _tables(request: Request) -> HumanMatches:
    tables: HumanMatches = request.app.state.tables
    return tables


def _league(request: Request) -> League | None:
    league: League | None = request.app.state.driver.league
    return league


async def _read(request: Request, key: tuple[Any, ...], name: str, *args: Any) -> Any:
    """A read of the human matches, by a reader process (:mod:`referee.web.readers`), kept until the
    next human match is stored."""
    tables = _tables(request)
    answers: Answers = request.app.state.answers
    return await answers.get(key, lambda: tables.state, lambda: (name, args))


def _busy(exc: Busy | ReadFailed) -> HTMLResponse:
    return HTMLResponse(
        f"the server is busy: {exc}; try again in a moment",
        status_code=503,
        headers={"retry-after": str(RETRY_AFTER)},
    )


async def play_page(request: Request) -> Response:
    league = _league(request)
    if league is None:
        return render("waiting.html", status=503, problem=request.app.state.driver.problem)
    path = human_database(league)
    try:
        played = await _read(request, ("human-lines", path), "human_lines", path)
    except (Busy, ReadFailed) as exc:
        return _busy(exc)
    return render(
        "play.html",
        league=league,
        entrants=[e.name for e in league.entrants if not e.spec.remote],
        opponents=league.players - 1,
        played=[(n, line) for n, _, line in reversed(played)],
    )


async def start_table(request: Request) -> Response:
    league = _league(request)
    if league is None:
        return JSONResponse({"error": "the league is starting"}, status_code=503)
    if request.headers.get("content-type", "").split(";")[0] != "application/json":
        return JSONResponse({"error": "send JSON"}, status_code=415)
    try:
        body = await request.json()
        opponents = [str(name) for name in body["opponents"]]
        table = _tables(request).open(league, opponents, str(body.get("name", "")))
    except (ValueError, KeyError, TypeError) as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    return JSONResponse({"table": f"/play/{table.token}"})


async def table_page(request: Request) -> Response:
    table = _tables(request).tables.get(request.path_params["token"])
    if table is None:
        return HTMLResponse("no such table", status_code=404)
    return render("table.html", seats=table.seats, token=table.token)


async def table_state(request: Request) -> Response:
    table = _tables(request).tables.get(request.path_params["token"])
    if table is None:
        return JSONResponse({"error": "no such table"}, status_code=404)
    if request.method == "GET":
        return JSONResponse(table.state(), headers={"cache-control": "no-store"})
    if request.headers.get("content-type", "").split(";")[0] != "application/json":
        return JSONResponse({"error": "send JSON"}, status_code=415)
    try:
        body = await request.json()
        action = parse_action(str(body["action"]))
    except (InvalidActionError, KeyError, TypeError, ValueError) as exc:
        return JSONResponse({"error": f"not a move: {exc}"}, status_code=400)
    talk = str(body.get("talk") or "").strip()
    if talk and isinstance(action, Play):
        action = Play(action.card, talk)
    elif talk and isinstance(action, Declare):
        return JSONResponse({"error": "the declarer does not talk"}, status_code=400)
    problem = table.human.answer(action)
    if problem is not None:
        return JSONResponse({"error": problem}, status_code=409)
    return JSONResponse({"ok": True})


async def human_replay(request: Request) -> Response:
    league = _league(request)
    if league is None:
        return HTMLResponse("the league is starting", status_code=503)
    path, number = human_database(league), int(request.path_params["number"])
    try:
        page = await _read(request, ("human-replay", path, number), "human_replay", path, number)
    except Busy as exc:
        return _busy(exc)
    except ReadFailed as exc:
        return HTMLResponse(f"this match cannot be shown: {exc}", status_code=500)
    if page is None:
        return HTMLResponse("no such human match", status_code=404)
    return HTMLResponse(page)


async def human_line(request: Request) -> Response:
    league = _league(request)
    if league is None:
        return JSONResponse({"error": "the league is starting"}, status_code=503)
    path, number = human_database(league), int(request.path_params["number"])
    try:
        line = await _read(request, ("human-line", path, number), "human_line", path, number)
    except (Busy, ReadFailed) as exc:
        return JSONResponse({"error": f"the server is busy: {exc}"}, status_code=503)
    if line is None:
        return JSONResponse({"error": "no such human match"}, status_code=404)
    return Response(line, media_type="application/json")


ROUTES: Final = [
    Route("/play", play_page),
    Route("/api/v1/human", start_table, methods=["POST"]),
    Route("/play/{token}", table_page),
    Route("/api/v1/human/{token}", table_state, methods=["GET", "POST"]),
    Route("/human/{number:int}", human_replay),
    Route("/api/v1/human-matches/{number:int}", human_line),
]
