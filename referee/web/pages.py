"""The live pages: the HTML report, rewritten into the server's own folder after the results change
(by a reader process: :mod:`referee.web.site`), and served with one more script (``static/live.js``)
that keeps each page up to date without a reload.

Reusing the report's writer keeps one look and one set of disclosure rules: what ``referee report``
would show now is exactly what the server shows.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Final

from referee.league.config import League
from referee.league.storage import StoreError
from referee.league.store import Store
from referee.report.site import write_report
from referee.web.runner import read_results

LOGGER = logging.getLogger(__name__)

PAGE_NAME: Final = 200
"""Characters a page's name may have (an entrant's page is named for it: names are shorter)."""
LIVE_TAGS: Final = (
    '<link rel="stylesheet" href="/static/live.css">\n<script src="/static/live.js" defer></script>\n'
)


def write_site(league: League, seed: int, folder: Path) -> None:
    """Rewrites the report in ``folder`` from the stored results (their summaries, each match page
    decoded as it is written); a failure is logged, and the pages keep what they showed (the next match
    rewrites them)."""
    try:
        stored, schedule, board = read_results(league, seed)
        store = Store(league.database, write=False)
        try:
            write_report(league, list(schedule), stored, board, folder, load=store.stream)
        finally:
            store.close()
    except (OSError, StoreError) as exc:
        LOGGER.warning("the live pages in %s were not rewritten: %s", folder, exc)


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
