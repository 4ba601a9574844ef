"""The live pages: the HTML report, each page rendered when it is asked for (by a reader process:
:func:`referee.web.reads.page`; :mod:`referee.web.site` says when they change), and served with one
more script (``static/live.js``) that keeps each page up to date without a reload.

Reusing the report's writer keeps one look and one set of disclosure rules: what ``referee report``
would show now is exactly what the server shows.
"""

from __future__ import annotations

from typing import Final

PAGE_NAME: Final = 200
"""Characters a page's name may have (an entrant's page is named for it: names are shorter)."""
LIVE_TAGS: Final = (
    '<link rel="stylesheet" href="/static/live.css">\n<script src="/static/live.js" defer></script>\n'
)


def is_page_name(name: str) -> bool:
    """Whether ``name`` could name a page of the report (a file of its folder, and no other).

    >>> is_page_name("match-0001.html"), is_page_name("../x.html"), is_page_name("a" * 300 + ".html")
    (True, False, False)
    """
    return len(name) <= PAGE_NAME and name.endswith(".html") and "/" not in name and not name.startswith(".")


def with_live_script(html: str) -> str:
    """A report page with the live script and style added to its head.

    >>> with_live_script("<html><head><title>t</title></head><body></body></html>").count("live.js")
    1
    """
    return html.replace("</head>", LIVE_TAGS + "</head>", 1)
