"""The JSON API, version 1 (docs/SERVER.md, "The API"): what the pages show, for other programs.

Every answer is read from the results database on a connection of its own, in a thread, so the API
never waits on a match and a match never waits on it. A match is given exactly as ``referee export``
writes it (docs/FORMATS.md), under the same disclosure rules.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from referee.league.config import Entrant, League
from referee.league.storage import StoreError
from referee.league.store import Store
from referee.league.version_history import VersionArchive, archive_path, as_json, summary
from referee.league.versions import fingerprint
from referee.report.text import export_lines, leaderboard_json
from referee.web.events import Hub
from referee.web.runner import LeagueRunner, read_results

VERSION: Final = 1
READ_TRIES: Final = 3
SUMMARY_DROPS: Final = ("deals",)
"""What the list of matches leaves out of each exported match: it is for one match's answer."""


def _league(request: Request) -> League | None:
    runner: LeagueRunner = request.app.state.runner
    return runner.league


def _not_ready(request: Request) -> JSONResponse:
    runner: LeagueRunner = request.app.state.runner
    return JSONResponse(
        {"error": runner.problem or "the league is starting: try again in a moment"}, status_code=503
    )


def exported(league: League, seed: int, tries: int = READ_TRIES) -> list[dict[str, Any]]:
    """Every stored match as ``referee export`` writes it, in schedule order. The summaries and the
    records are two reads: a new version's matches deleted in between (the runner replays them) make the
    second miss one, and the whole is read again."""
    stored, schedule, _ = read_results(league, seed)
    store = Store(league.database, write=False)
    try:
        return [json.loads(line) for line in export_lines(league, schedule, stored, store.stream)]
    except StoreError:
        if tries <= 1:
            raise
    finally:
        store.close()
    return exported(league, seed, tries - 1)


def _seed(request: Request) -> int:
    runner: LeagueRunner = request.app.state.runner
    return runner.seed


async def leaderboard(request: Request) -> Response:
    league = _league(request)
    if league is None:
        return _not_ready(request)
    _, _, board = await asyncio.to_thread(read_results, league, _seed(request))
    rows = json.loads(leaderboard_json(board, league))
    return JSONResponse({"version": VERSION, "league": league.name, "standings": rows})


async def matches(request: Request) -> Response:
    league = _league(request)
    if league is None:
        return _not_ready(request)
    runner: LeagueRunner = request.app.state.runner
    lines = await asyncio.to_thread(exported, league, _seed(request))
    summaries = [{k: v for k, v in line.items() if k not in SUMMARY_DROPS} for line in lines]
    in_play = [live.summary() for live in runner.live.values()]
    return JSONResponse({"version": VERSION, "matches": summaries, "in_play": in_play})


async def one_match(request: Request) -> Response:
    league = _league(request)
    if league is None:
        return _not_ready(request)
    wanted = request.path_params["match_id"]
    for line in await asyncio.to_thread(exported, league, _seed(request)):
        if line["match_id"] == wanted:
            return JSONResponse(line)
    return JSONResponse({"error": f"no stored match {wanted!r}"}, status_code=404)


async def entrants(request: Request) -> Response:
    league = _league(request)
    if league is None:
        return _not_ready(request)
    _, _, board = await asyncio.to_thread(read_results, league, _seed(request))
    standings = {s.entrant: s for s in board.standings}
    runner: LeagueRunner = request.app.state.runner
    rows = []
    for entrant in league.entrants:
        standing = standings.get(entrant.name)
        rows.append(
            {
                "name": entrant.name,
                "kind": _kind(entrant),
                "connected": runner.connected(entrant.name) if entrant.spec.remote else None,
                "rank": standing.rank if standing is not None else None,
                "mu": standing.mu if standing is not None else None,
                "sigma": standing.sigma if standing is not None else None,
                "matches": standing.matches if standing is not None else 0,
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
    league = _league(request)
    if league is None:
        return _not_ready(request)
    name = request.path_params["name"]
    if name not in {e.name for e in league.entrants}:
        return JSONResponse({"error": f"no entrant {name!r}"}, status_code=404)
    stored, _, _ = await asyncio.to_thread(read_results, league, _seed(request))
    found = league.entrant(name)
    now = summary(name, found.version or fingerprint(found)[:8], stored.values())
    earlier = await asyncio.to_thread(VersionArchive(archive_path(league)).of, name)
    return JSONResponse({"version": VERSION, "name": name, "versions": [as_json(v) for v in (now, *earlier)]})


async def live_list(request: Request) -> Response:
    runner: LeagueRunner = request.app.state.runner
    return JSONResponse({"version": VERSION, "in_play": [m.summary() for m in runner.live.values()]})


async def live_one(request: Request) -> Response:
    runner: LeagueRunner = request.app.state.runner
    live = runner.live.get(request.path_params["match_id"])
    if live is None:
        return JSONResponse({"error": "not in play", "in_play": False}, status_code=404)
    return JSONResponse(live.state())


async def events(request: Request) -> Response:
    hub: Hub = request.app.state.hub
    return StreamingResponse(
        hub.stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
    )


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
