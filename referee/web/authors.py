"""Who an author is, to the server: the holder of an entrant's token, sent as ``Authorization: Bearer
TOKEN`` (never in a URL, never echoed, never logged). No cookie and no session: nothing a browser sends
by itself proves anything, so no other site's page can act or read as an author (docs/SECURITY.md)."""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse

from referee.league.config import League
from referee.remote.files import tokens_path
from referee.remote.tokens import TokenBook


def bearer(request: Request) -> str:
    """The token of an ``Authorization: Bearer`` header, or ``""``."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


async def author_of(request: Request, league: League) -> str | None:
    """The remote entrant whose valid token the request carries, or ``None``."""
    token = bearer(request)
    if not token:
        return None
    entrant = await asyncio.to_thread(TokenBook(tokens_path(league.database)).holder, token)
    return entrant if entrant in league.remote_names else None


def unauthorised() -> JSONResponse:
    """The one answer to a missing, wrong, revoked or expired token: it says nothing of which."""
    return JSONResponse(
        {"error": "send an entrant's token as 'Authorization: Bearer TOKEN'"},
        status_code=401,
        headers={"www-authenticate": "Bearer", "cache-control": "no-store"},
    )
