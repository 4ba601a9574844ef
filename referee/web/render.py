"""The server's own pages (the live table, the human seat, the waiting page), rendered by Jinja2 with
autoescaping: every name and word of talk in them comes from a bot or a person."""

from __future__ import annotations

from typing import Any, Final

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.responses import HTMLResponse

TEMPLATES: Final = Environment(
    loader=PackageLoader("referee.web", "templates"), autoescape=select_autoescape(["html"]), trim_blocks=True
)


def render(name: str, status: int = 200, **values: Any) -> HTMLResponse:
    return HTMLResponse(TEMPLATES.get_template(name).render(**values), status_code=status)
