"""The web app of ``referee serve``: the live report pages, a page per match in play, the human seat's
pages and the JSON API, on Starlette.

Read-only but for the human seat, which needs no secret of the league (it only ever starts a table of
its own). Safe by default: every answer carries a content security policy that allows only this
server's own scripts, requests that name a host other than the server's own are refused (a web page
elsewhere cannot reach a loopback server through DNS rebinding: :mod:`referee.web.hosts`), each address
is held to a request rate (:mod:`referee.web.limits`), and a human action must be sent as JSON, which
another site's page cannot do without this server's consent. Every page and answer that reads the
results is read by a reader process (:mod:`referee.web.readers`), never by the process that plays.
"""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from referee.report.site import OTHER_COLOUR, entrant_colours, script_json
from referee.run.entry import Entry, EntryMode
from referee.run.serve_driver import ServeDriver
from referee.web import api, entry, human
from referee.web.events import Hub
from referee.web.hosts import HostGuard, Hosts
from referee.web.limits import Connections, Limits, RequestRate
from referee.web.me import ROUTES as ME_ROUTES
from referee.web.pages import is_page_name
from referee.web.practice import ROUTES as PRACTICE_ROUTES
from referee.web.practice import Practice
from referee.web.readers import Answers, Busy, ReadFailed
from referee.web.render import render
from referee.web.site import LiveSite

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


@dataclass(frozen=True, slots=True)
class Asset:
    """A file the pages load, read once when the server starts and answered from memory."""

    body: bytes
    media_type: str
    etag: str

    @classmethod
    def of(cls, path: Path) -> Asset:
        body = path.read_bytes()
        media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if media_type.startswith("text/") or media_type.endswith("javascript"):
            media_type += "; charset=utf-8"
        return cls(body, media_type, '"' + hashlib.sha256(body).hexdigest()[:16] + '"')

    def response(self, request: Request) -> Response:
        headers = {"etag": self.etag, "cache-control": "no-cache"}
        if request.headers.get("if-none-match") == self.etag:
            return Response(status_code=304, headers=headers)
        return Response(self.body, media_type=self.media_type, headers=headers)


def assets() -> dict[str, Asset]:
    """The report's shared files (``/style.css``, ...) and the server's own (``/static/...``)."""
    found = {f"/{name}": Asset.of(REPORT_ASSETS / name) for name in ASSETS}
    found |= {f"/static/{path.name}": Asset.of(path) for path in sorted(STATIC.iterdir()) if path.is_file()}
    return found


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
    driver: ServeDriver = request.app.state.driver
    return render("waiting.html", status=503, problem=driver.problem)


def _not_found() -> Response:
    return Response("not found", status_code=404, media_type="text/plain")


async def page(request: Request) -> Response:
    """A page of the report, with the live script; ``/`` is its index."""
    name = request.path_params.get("name", "index.html")
    asset = request.app.state.assets.get(f"/{name}")
    if asset is not None:  # the report's own, as the package ships them
        return asset.response(request)  # type: ignore[no-any-return]
    if not is_page_name(name):
        return _not_found()
    driver: ServeDriver = request.app.state.driver
    if driver.league is None:  # no report yet
        return _waiting(request) if name == "index.html" else _not_found()
    site: LiveSite = request.app.state.site
    answers: Answers = request.app.state.answers
    try:
        body = await answers.get(("page", name), lambda: site.state, lambda: _page_job(driver, name))
    except (Busy, ReadFailed) as exc:
        return Response(
            f"the server is busy: {exc}; try again in a moment",
            status_code=503,
            media_type="text/plain",
            headers={"retry-after": "2"},
        )
    if body is None:
        return _waiting(request) if name == "index.html" else _not_found()
    return HTMLResponse(body, headers={"cache-control": "no-store"})


def _page_job(driver: ServeDriver, name: str) -> tuple[str, tuple[Any, ...]]:
    """The reader's job that renders page ``name`` from the latest results (not only those the pages
    were last told of: a page asked for is as new as it can be)."""
    return "page", (driver.league, driver.seed, driver.state, name)


async def static(request: Request) -> Response:
    asset = request.app.state.assets.get(request.url.path)
    return _not_found() if asset is None else asset.response(request)


async def live_page(request: Request) -> Response:
    """A match in play drawn by the report's viewer (``/viewer.js``) from the event stream; ``/live``, with
    no match, follows whatever is in play (``/static/watch.js``). The page carries the entrants' colours
    only, as the report gives them: its table comes from the API and the events, never a hand."""
    driver: ServeDriver = request.app.state.driver
    match_id = request.path_params.get("match_id", "")
    live = driver.live.get(match_id)
    league = driver.league
    names = [entrant.name for entrant in league.entrants] if league is not None else []
    data = {"colours": entrant_colours(names), "other": OTHER_COLOUR, "follow": not match_id}
    return render(
        "live.html",
        league=league.name if league is not None else "",
        match_id=match_id,
        seats=live.seats if live is not None else (),
        in_play=live is not None,
        on_worker=live is not None and live.on_worker,
        data=script_json(data),
    )


def create_app(
    driver: ServeDriver,
    hub: Hub,
    site: LiveSite,
    answers: Answers,
    tables: human.HumanMatches,
    hosts: Hosts,
    connections: Connections | None = None,
    rate: RequestRate | None = None,
    practice: Practice | None = None,
    entrance: Entry | None = None,
) -> Starlette:
    """The app; ``site`` is the report's folder the server keeps, ``hosts`` the hosts a request may
    name, ``connections`` the server's connections (each one's transport, so that an event stream can be
    cut), ``rate`` the request rate per address, ``entrance`` the authors' entry (closed by default)."""
    routes = [
        *entry.ROUTES,
        *api.ROUTES,
        *human.ROUTES,
        *PRACTICE_ROUTES,
        *ME_ROUTES,
        Route("/", page),
        Route("/live", live_page),
        Route("/live/{match_id:path}", live_page),
        Route("/static/{name:path}", static),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Route("/index", lambda request: RedirectResponse("/")),
        Route("/{name}", page),
    ]
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(SafetyHeaders),
            Middleware(Limits, rate=rate),
            Middleware(HostGuard, hosts=hosts),
        ],
    )
    app.state.driver = driver
    app.state.hub = hub
    app.state.site = site
    app.state.answers = answers
    app.state.tables = tables
    app.state.practice = practice or Practice()
    app.state.connections = connections or Connections()
    app.state.assets = assets()
    app.state.entry = entrance or Entry(driver.league_file, EntryMode.CLOSED)
    return app
