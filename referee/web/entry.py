"""The entry page (``/enter``) and its API: an author enters a remote entrant and sees its token once;
an entrant rotates its token (docs/REMOTE.md, "Entering by yourself"). The work is
:class:`referee.run.entry.Entry`'s; here, the edge: JSON bodies only, each refusal a status.

No session and no cookie: nothing a browser sends by itself authorises a write, since the invite code or
the current token is in the body, and a body is taken only as ``application/json``, which another site's
page cannot send here without this server's consent (no CORS is answered); a request whose ``Origin``
names another host is refused too. The token is in the answer to the write alone (``no-store``), set
into the page by its script as text: it is never in a URL, a page's source, a log or a read of the API.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from referee.run.entry import Entry, EntryMode, Refused, Why
from referee.web.limits import client_address
from referee.web.render import render

STATUS: Final = {
    Why.CLOSED: 403,
    Why.INVALID: 400,
    Why.UNKNOWN_INVITE: 403,
    Why.EXHAUSTED: 410,
    Why.EXPIRED: 410,
    Why.NAME_TAKEN: 409,
    Why.WRONG_TOKEN: 403,
    Why.TOO_MANY: 429,
    Why.TROUBLE: 503,
}
"""The status of each refusal: 403 a code or token that admits nothing, 410 a real invite spent or
expired, 409 a name taken, 429 too many attempts, 503 the server's own trouble."""
NO_STORE: Final = {"cache-control": "no-store"}


def _entry(request: Request) -> Entry:
    entry: Entry = request.app.state.entry
    return entry


def _error(status: int, text: str, retry: float = 0.0) -> JSONResponse:
    headers = dict(NO_STORE)
    if retry > 0:
        headers["retry-after"] = str(max(1, math.ceil(retry)))
    return JSONResponse({"error": text}, status_code=status, headers=headers)


async def _body(request: Request, keys: frozenset[str]) -> dict[str, Any] | JSONResponse:
    """The request's JSON object, with no key but ``keys``; or the answer that refuses it."""
    origin = request.headers.get("origin")
    if origin is not None and urlsplit(origin).netloc.lower() != request.headers.get("host", "").lower():
        return _error(403, "a write from another site's page is refused")
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return _error(415, "send JSON (content-type: application/json)")
    try:
        body = json.loads(await request.body())
    except (ValueError, UnicodeDecodeError):
        return _error(400, "the body is not JSON")
    if not isinstance(body, dict) or not set(body) <= keys:
        return _error(400, f"send a JSON object with the keys {', '.join(sorted(keys))}")
    return body


def _refused(refused: Refused) -> JSONResponse:
    return _error(STATUS[refused.why], str(refused), refused.retry)


def _door(request: Request) -> dict[str, Any]:
    """Where the entrant's bot connects: the door's address (its host as this page was reached, when
    the door listens on every address) and whether it speaks TLS."""
    door = request.app.state.driver.door
    if door is None:
        return {"address": None, "tls": False}
    host, _, port = (door.settings.listen or "").rpartition(":")
    if host.strip("[]") in ("0.0.0.0", "::", ""):
        host = request.url.hostname or "localhost"
    return {"address": f"{host}:{port}", "tls": door.settings.tls}


async def enter_page(request: Request) -> Response:
    entry = _entry(request)
    league = request.app.state.driver.league
    return render(
        "enter.html",
        status=200 if entry.is_open else 403,
        open=entry.is_open,
        invite=entry.mode is EntryMode.INVITE,
        league=league.name if league is not None else "",
        door=_door(request),
    )


async def enter(request: Request) -> Response:
    """``POST /api/v1/entries`` ``{"name", "invite"}``: ``{"name", "token", "address", "tls"}``, once."""
    body = await _body(request, frozenset({"name", "invite"}))
    if isinstance(body, JSONResponse):
        return body
    try:
        entered = await _entry(request).enter(
            client_address(request.scope), body.get("name"), body.get("invite")
        )
    except Refused as refused:
        return _refused(refused)
    door = _door(request)
    return JSONResponse(
        {"name": entered.name, "token": entered.token, **door}, status_code=201, headers=NO_STORE
    )


async def rotate(request: Request) -> Response:
    """``POST /api/v1/entrants/NAME/token`` ``{"token"}``: ``{"name", "token"}``, the new token, once."""
    body = await _body(request, frozenset({"token"}))
    if isinstance(body, JSONResponse):
        return body
    name = request.path_params["name"]
    try:
        entered = await _entry(request).rotate(client_address(request.scope), name, body.get("token"))
    except Refused as refused:
        return _refused(refused)
    return JSONResponse({"name": entered.name, "token": entered.token}, headers=NO_STORE)


ROUTES: Final = [
    Route("/enter", enter_page),
    Route("/api/v1/entries", enter, methods=["POST"]),
    Route("/api/v1/entrants/{name}/token", rotate, methods=["POST"]),
]
