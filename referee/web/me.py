"""The author's own page: ``/me`` and ``/api/v1/me``, reached with the entrant's token alone
(:mod:`referee.web.authors`), never a page another author can read (docs/SERVER.md, "Your own page").

What the server's process knows of the entrant (connected now, its latest connections and departures,
its round trip and decision latencies) is joined to what a reader process reads from the results
(:func:`referee.web.reads.own`: each version's results and rating, its faults in full, its debug lines,
its practice matches), so the play never waits on the read.
"""

from __future__ import annotations

import json
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from referee.league.config import League
from referee.web.authors import author_of, unauthorised
from referee.web.practice import Practice
from referee.web.readers import Answers, Busy, ReadFailed
from referee.web.render import render


async def me_page(request: Request) -> Response:
    return render("me.html")


async def me_api(request: Request) -> Response:
    driver = request.app.state.driver
    league: League | None = driver.league
    if league is None:
        return JSONResponse({"error": "the league is starting"}, status_code=503)
    name = await author_of(request, league)
    if name is None:
        return unauthorised()
    answers: Answers = request.app.state.answers
    practice: Practice = request.app.state.practice

    def state() -> int:  # both only grow: a new match or a new practice match reads it again
        return int(driver.state) + practice.state

    def job() -> tuple[str, tuple[Any, ...]]:
        return "own", (league, driver.seed, driver.state, name)

    try:
        body: bytes | None = await answers.get(("own", name), state, job)
    except (Busy, ReadFailed) as exc:
        return JSONResponse({"error": f"the server is busy: {exc}"}, status_code=503)
    if body is None:
        return unauthorised()
    lobby = driver.door.lobby if driver.door is not None else None
    latency = lobby.latency.get(name) if lobby is not None else None
    extra: dict[str, Any] = {
        "connected": driver.connected(name),
        "presence": [[round(when, 3), up] for when, up in driver.presence.get(name, ())],
        "connection": latency.line() if latency is not None else None,
    }
    merged = {**json.loads(body), **extra}
    return JSONResponse(merged, headers={"cache-control": "no-store"})


ROUTES: Final = [
    Route("/me", me_page),
    Route("/api/v1/me", me_api),
]
