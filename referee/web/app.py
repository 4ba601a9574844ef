"""The web app of ``referee serve``: the live report pages, a page per match in play, the human seat's
pages and the JSON API, on Starlette.

Read-only but for the human seat, which needs no secret of the league (it only ever starts a table of
its own). Safe by default: every answer carries a content security policy that allows only this
server's own scripts, requests that name a host other than the one served are refused (a web page
elsewhere cannot reach a loopback server through DNS rebinding), and a human action must be sent as
JSON, which another site's page cannot do without this server's consent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from referee.web import api, human
from referee.web.events import Hub
from referee.web.pages import with_live_script
from referee.web.render import render
from referee.web.runner import LeagueRunner

HEADERS: Final = {
    "content-security-policy": "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}
"""On every answer. The report's only inline script is JSON data, which a policy does not run anyway."""

STATIC: Final = Path(__file__).parent / "static"
ASSETS: Final = ("style.css", "report.js", "viewer.js")
REPORT_ASSETS: Final = Path(__file__).parent.parent / "report" / "templates"


class SafetyHeaders:
    """Adds :data:`HEADERS` to every answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.encode(), v.encode()) for k, v in HEADERS.items()]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, sending)


def _waiting(request: Request) -> HTMLResponse:
    runner: LeagueRunner = request.app.state.runner
    return render("waiting.html", status=503, problem=runner.problem)


async def page(request: Request) -> Response:
    """A page of the report, with the live script; ``/`` is its index."""
    folder: Path = request.app.state.site
    name = request.path_params.get("name", "index.html")
    if name in ASSETS:  # the report's own, as the package ships them
        return FileResponse(REPORT_ASSETS / name)
    if not name.endswith(".html") or "/" in name or name.startswith("."):
        return Response("not found", status_code=404, media_type="text/plain")
    path = folder / name
    if not path.is_file():
        if name == "index.html":
            return _waiting(request)
        return Response("not found", status_code=404, media_type="text/plain")
    return HTMLResponse(with_live_script(path.read_text("utf-8")), headers={"cache-control": "no-store"})


async def live_page(request: Request) -> Response:
    runner: LeagueRunner = request.app.state.runner
    match_id = request.path_params["match_id"]
    live = runner.live.get(match_id)
    league = runner.league
    return render(
        "live.html",
        league=league.name if league is not None else "",
        match_id=match_id,
        seats=live.seats if live is not None else (),
        in_play=live is not None,
    )


def create_app(
    runner: LeagueRunner, hub: Hub, site: Path, tables: human.Tables, hosts: list[str]
) -> Starlette:
    """The app; ``site`` is the folder the runner keeps the report in, ``hosts`` the host names a
    request may name (``*`` for any)."""
    routes = [
        *api.ROUTES,
        *human.ROUTES,
        Route("/", page),
        Route("/live/{match_id:path}", live_page),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Route("/index", lambda request: RedirectResponse("/")),
        Route("/{name}", page),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=hosts), Middleware(SafetyHeaders)],
    )
    app.state.runner = runner
    app.state.hub = hub
    app.state.site = site
    app.state.tables = tables
    return app
