"""Who made a results database, as the database itself says: the probe a league file's reader passes
to ``config.load_league`` for the old default ``results.sqlite`` (``location.default_database``)."""

from __future__ import annotations

from pathlib import Path

from referee.results.connection import connected
from referee.results.errors import StoreError


def made_by(database: Path, league_file: Path, name: str) -> bool:
    """Whether ``database`` holds the results of this league file, as far as its ``meta`` says: its
    recorded league file, if that still exists, else (a file from before that was recorded, or whose
    league file was renamed) the league's name. Reads only; an unreadable file counts as this league's,
    so that opening it says what is wrong with it rather than a new database being started beside it."""
    try:
        with connected(database, write=False) as db:
            if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
                return False  # no results were ever stored in it
            rows = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('league', 'league_file')"))
    except StoreError:
        return True
    recorded = rows.get("league_file")
    if recorded is not None:
        owner = (database.parent / recorded).resolve()
        if owner.exists():
            return bool(owner == league_file.resolve())
    return bool(rows.get("league", name) == name)
