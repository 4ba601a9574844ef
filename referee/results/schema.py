"""The results database's tables, and which versions of them this referee reads.

The tables are for queries (leaderboards, reports, your own SQL); ``matches.record`` keeps each match
whole as JSON, so exports and replays are exact. docs/FORMATS.md describes them.
"""

from __future__ import annotations

from typing import Final

from referee.league.summary import MatchSummary, from_json
from referee.match.outcome import MatchStatus

SCHEMA_VERSION: Final = 2
"""2 added ``seats.credited`` (docs/RULES.md, "Forfeits"). A version 1 file is read as it is and brought
to version 2 when a run opens it for writing; an older referee refuses a version 2 file in one line
instead of writing rows it does not know."""
READABLE_VERSIONS: Final = (1, 2)

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entrants (name TEXT PRIMARY KEY, kind TEXT NOT NULL, source TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
    match_id TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    round INTEGER NOT NULL,
    table_number INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('complete', 'void')),
    void_reason TEXT NOT NULL DEFAULT '',
    started_at REAL NOT NULL,
    finished_at REAL NOT NULL,
    elapsed REAL NOT NULL,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS seats (
    match_id TEXT NOT NULL REFERENCES matches ON DELETE CASCADE,
    seat INTEGER NOT NULL,
    entrant TEXT NOT NULL,
    total INTEGER NOT NULL,
    rank INTEGER NOT NULL,
    forfeited INTEGER NOT NULL,
    decisions INTEGER NOT NULL,
    think_seconds REAL NOT NULL,
    credited INTEGER NOT NULL,
    PRIMARY KEY (match_id, seat)
);
CREATE TABLE IF NOT EXISTS deals (
    match_id TEXT NOT NULL REFERENCES matches ON DELETE CASCADE,
    number INTEGER NOT NULL,
    dealer INTEGER NOT NULL,
    declarer INTEGER NOT NULL,
    declared INTEGER NOT NULL,
    trump TEXT NOT NULL,
    taken INTEGER NOT NULL,
    points INTEGER NOT NULL,
    PRIMARY KEY (match_id, number)
);
CREATE TABLE IF NOT EXISTS tricks (
    match_id TEXT NOT NULL REFERENCES matches ON DELETE CASCADE,
    deal INTEGER NOT NULL,
    number INTEGER NOT NULL,
    leader INTEGER NOT NULL,
    cards TEXT NOT NULL,
    winner INTEGER NOT NULL,
    PRIMARY KEY (match_id, deal, number)
);
CREATE TABLE IF NOT EXISTS faults (
    match_id TEXT NOT NULL REFERENCES matches ON DELETE CASCADE,
    seat INTEGER NOT NULL,
    deal INTEGER NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS disqualified (name TEXT PRIMARY KEY, reason TEXT NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS summaries (
    match_id TEXT PRIMARY KEY REFERENCES matches ON DELETE CASCADE,
    summary TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ratings (
    position INTEGER NOT NULL,
    match_id TEXT NOT NULL,
    entrant TEXT NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    PRIMARY KEY (position, entrant)
);
"""


DISQUALIFIED: Final = (
    "CREATE TABLE IF NOT EXISTS disqualified (name TEXT PRIMARY KEY, reason TEXT NOT NULL, at REAL NOT NULL)"
)
"""Entrants disqualified by the last run that tried them (their bot did not build or start), with the
reason; an entrant's row goes when a later run starts its bot. No match is stored for a disqualification."""


SUMMARIES: Final = """
CREATE TABLE IF NOT EXISTS summaries (
    match_id TEXT PRIMARY KEY REFERENCES matches ON DELETE CASCADE,
    summary TEXT NOT NULL
)
"""
"""Each stored match's results without its deals (``referee.league.summary``), written with the match.
Added within schema version 2: a file without the table reads as before (its summaries are computed
from the records), a run adds it and fills it in, and a referee from before it, which knows nothing of
the table, leaves matches without a summary and deletes none it should not (the rows go with their
match, ``ON DELETE CASCADE``)."""


DEBUG_LINES: Final = (
    """
CREATE TABLE IF NOT EXISTS debug_lines (
    match_id TEXT NOT NULL REFERENCES matches ON DELETE CASCADE,
    seat INTEGER NOT NULL,
    entrant TEXT NOT NULL,
    deal INTEGER NOT NULL,
    step INTEGER NOT NULL,
    fate TEXT NOT NULL CHECK (fate IN ('kept', 'too-long', 'match-full')),
    size INTEGER NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (match_id, deal, step)
)
""",
    "CREATE INDEX IF NOT EXISTS debug_lines_by_entrant ON debug_lines (entrant, match_id)",
)
"""The bots' debug lines (``referee.match.debug``), one row per answer that carried one, written with
its match: for the organiser and the bot's author only, so no export, report or page reads this table.
Added within schema version 2, as ``summaries`` was: a run adds it to an older file, a reader of a file
without it finds no lines, and a referee from before it deletes the rows with their match (``ON DELETE
CASCADE``)."""


RESULT_TABLES: Final = (
    "debug_lines",
    "faults",
    "tricks",
    "deals",
    "seats",
    "summaries",
    "ratings",
    "matches",
)


ROWS: Final = (
    "SELECT m.match_id, m.round, m.table_number, m.rotation, m.seed, m.status, length(m.record), {} "
    "FROM matches m"
)
"""Every stored match's row for :func:`from_row`: format it with ``s.summary`` and a join of the
``summaries`` table as ``s``, or with ``NULL`` for a file without that table."""
JOINED: Final = ROWS.format("s.summary") + " LEFT JOIN summaries s ON s.match_id = m.match_id"


def from_row(row: tuple[object, ...]) -> MatchSummary | None:
    """The summary of a row of :data:`ROWS`, ``None`` if it has none that reads (a status that does not
    decode is for :meth:`referee.results.store.Store.matches` to report)."""
    match_id, round_number, table, rotation, seed, status, record_chars, text = row
    if not isinstance(text, str):
        return None
    try:
        match_status = MatchStatus(str(status))
    except ValueError:
        return None
    place = (str(match_id), int(str(round_number)), int(str(table)), int(str(rotation)), int(str(seed)))
    return from_json(place, match_status, text, int(str(record_chars)))
