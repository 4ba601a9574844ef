"""The JSON API, version 1 (docs/SERVER.md, "The API"): what the pages show, for other programs.

Every answer that reads the results is read by a reader process (:mod:`referee.web.readers`) and kept
for as long as the results it was read from are the latest, so the API never waits on a match and a
match never waits on it; what is in play is the server's own, answered at once. A match is given
exactly as ``referee export`` writes it (docs/FORMATS.md), under the same disclosure rules.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Hashable
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from referee.league.config import Entrant
from referee.run.serve_driver import ServeDriver
from referee.web.events import SEND_DEADLINE, Hub, Listener, ListenerRefused
from referee.web.limits import Connections, client_address
from referee.web.readers import RETRY_AFTER, Answers, Busy, ReadFailed
from referee.web.reads import MOST_ON_A_PAGE, PAGE, VERSION


def _driver(request: Request) -> ServeDriver:
    driver: ServeDriver = request.app.state.driver
    return driver


def _not_ready(request: Request) -> JSONResponse:
    return JSONResponse(
        {"error": _driver(request).problem or "the league is starting: try again in a moment"},
        status_code=503,
        headers={"retry-after": str(RETRY_AFTER)},
    )


def unavailable(exc: Busy | ReadFailed) -> JSONResponse:
    """What a request is told when its read is refused (every reader busy) or failed."""
    return JSONResponse(
        {"error": f"the server is busy: {exc}; try again in a moment"},
        status_code=503,
        headers={"retry-after": str(RETRY_AFTER)},
    )


async def read(request: Request, key: Hashable, name: str, *args: Any) -> Any:
    """The answer ``key``: the results' read ``name`` on the league, its seed and the results' state,
    then ``args``; kept while those results are the latest."""
    driver = _driver(request)
    answers: Answers = request.app.state.answers

    def job() -> tuple[str, tuple[Any, ...]]:
        return name, (driver.league, driver.seed, driver.state, *args)

    return await answers.get(key, lambda: driver.state, job)


def _json(body: bytes, status: int = 200) -> Response:
    return Response(body, status_code=status, media_type="application/json")


async def leaderboard(request: Request) -> Response:
    if _driver(request).league is None:
        return _not_ready(request)
    try:
        return _json(await read(request, ("leaderboard",), "leaderboard"))
    except (Busy, ReadFailed) as exc:
        return unavailable(exc)


async def matches(request: Request) -> Response:
    """A page of the stored matches (``?after=MATCH_ID&limit=N``, docs/SERVER.md), and the matches in
    play."""
    driver = _driver(request)
    if driver.league is None:
        return _not_ready(request)
    after = request.query_params.get("after")
    raw = request.query_params.get("limit", str(PAGE))
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 9 and int(raw) >= 1):
        return JSONResponse(
            {"error": f"limit must be a whole number from 1 (at most {MOST_ON_A_PAGE} are given)"},
            status_code=400,
        )
    limit = min(int(raw), MOST_ON_A_PAGE)
    try:
        page: tuple[bytes, str | None] | None = await read(
            request, ("matches", after, limit), "matches", after, limit
        )
    except (Busy, ReadFailed) as exc:
        return unavailable(exc)
    if page is None:
        named = (after or "")[:80]
        return JSONResponse(
            {"error": f"after: no stored match {named!r}; a page starts after a stored match's id"},
            status_code=400,
        )
    in_play = json.dumps([live.summary() for live in driver.live.values()], ensure_ascii=False)
    listed, following = page
    cursor = json.dumps(following, ensure_ascii=False)
    return _json(
        b'{"version":%d,"matches":%b,"next":%b,"in_play":%b}'
        % (VERSION, listed, cursor.encode(), in_play.encode())
    )


async def one_match(request: Request) -> Response:
    if _driver(request).league is None:
        return _not_ready(request)
    wanted = request.path_params["match_id"]
    try:
        line: bytes | None = await read(request, ("match", wanted), "one_match", wanted)
    except (Busy, ReadFailed) as exc:
        return unavailable(exc)
    if line is None:
        return JSONResponse({"error": f"no stored match {wanted!r}"}, status_code=404)
    return _json(line)


async def entrants(request: Request) -> Response:
    driver = _driver(request)
    league = driver.league
    if league is None:
        return _not_ready(request)
    try:
        standings: dict[str, dict[str, Any]] = await read(request, ("standings",), "standings")
    except (Busy, ReadFailed) as exc:
        return unavailable(exc)
    rows = []
    for entrant in league.entrants:
        standing = standings.get(entrant.name, {"rank": None, "mu": None, "sigma": None, "matches": 0})
        rows.append(
            {
                "name": entrant.name,
                "kind": _kind(entrant),
                "connected": driver.connected(entrant.name) if entrant.spec.remote else None,
                **standing,
            }
        )
    return JSONResponse({"version": VERSION, "entrants": rows})


def _kind(entrant: Entrant) -> str:
    """How the entrant's bot runs: in the referee's process, as a process of its own, or ``remote`` (from
    its author's machine, not sandboxed)."""
    if entrant.spec.remote:
        return "remote"
    return "module" if entrant.in_process else "command"


async def entrant(request: Request) -> Response:
    """One entrant and each version's results: the one playing now, then the replaced ones."""
    if _driver(request).league is None:
        return _not_ready(request)
    name = request.path_params["name"]
    try:
        body: bytes | None = await read(request, ("entrant", name), "entrant", name)
    except (Busy, ReadFailed) as exc:
        return unavailable(exc)
    if body is None:
        return JSONResponse({"error": f"no entrant {name!r}"}, status_code=404)
    return _json(body)


async def live_list(request: Request) -> Response:
    driver = _driver(request)
    return JSONResponse({"version": VERSION, "in_play": [m.summary() for m in driver.live.values()]})


async def live_one(request: Request) -> Response:
    live = _driver(request).live.get(request.path_params["match_id"])
    if live is None:
        return JSONResponse({"error": "not in play", "in_play": False}, status_code=404)
    return JSONResponse(live.state())


class EventStream:
    """The answer of ``/api/v1/events``: the hub's events as they come, until the listener is dropped
    (its connection is then cut: :mod:`referee.web.events`), the client goes or the server stops."""

    def __init__(self, hub: Hub, listener: Listener) -> None:
        self.hub = hub
        self.listener = listener

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"text/event-stream; charset=utf-8"),
                        (b"cache-control", b"no-store"),
                    ],
                }
            )
            pumping = asyncio.ensure_future(self._pump(send))
            leaving = asyncio.ensure_future(_disconnected(receive))
            try:
                await asyncio.wait({pumping, leaving}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (pumping, leaving):
                    task.cancel()
                await asyncio.gather(pumping, leaving, return_exceptions=True)
        finally:
            self.hub.forget(self.listener)

    async def _pump(self, send: Send) -> None:
        async for chunk in self.listener.chunks():
            try:
                await asyncio.wait_for(
                    send({"type": "http.response.body", "body": chunk, "more_body": True}), SEND_DEADLINE
                )
            except TimeoutError:  # its socket took nothing for that long: a gone or stalled client
                self.hub.drop(self.listener)
                return
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def events(request: Request) -> Response | EventStream:
    hub: Hub = request.app.state.hub
    connections: Connections = request.app.state.connections
    try:
        listener = hub.listen(client_address(request.scope), connections.cutter(request.scope))
    except ListenerRefused as exc:
        return JSONResponse(
            {"error": str(exc)}, status_code=exc.status, headers={"retry-after": str(RETRY_AFTER)}
        )
    connections.narrow(request.scope)
    return EventStream(hub, listener)


ROUTES: Final = [
    Route("/api/v1/leaderboard", leaderboard),
    Route("/api/v1/matches", matches),
    Route("/api/v1/matches/{match_id:path}", one_match),
    Route("/api/v1/entrants", entrants),
    Route("/api/v1/entrants/{name}", entrant),
    Route("/api/v1/live", live_list),
    Route("/api/v1/live/{match_id:path}", live_one),
    Route("/api/v1/events", events),
]
