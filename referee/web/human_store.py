"""The human matches of a league, in ``<results database>-human.sqlite`` beside the league's results:
never rated, never mixed with the league's; each can be replayed like any match (``/human/ID``, or its
line with ``referee replay``). The human seat (:mod:`referee.web.human`) stores them, the reader
processes (:mod:`referee.web.reads`) read them.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, Final

from pyramid_sdk.record import MatchRecord
from referee.league.config import League
from referee.league.location import human_path
from referee.match.outcome import MatchOutcome
from referee.report.records import RecordedMatch, from_line
from referee.report.text import ONE_MATCH, match_line
from referee.results.connection import connected

SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS human_matches (id INTEGER PRIMARY KEY, finished REAL, line TEXT, record TEXT)"
)


class HumanStore:
    """The human matches of a league, in a SQLite file of their own: never rated, never mixed with the
    league's results. :data:`KIND` names the table and the matches' ids (``human-3``): the practice
    matches (:class:`referee.web.practice_store.PracticeStore`) are kept the same way, in a file of
    their own."""

    KIND: ClassVar[str] = "human"
    SCHEMA: ClassVar[str] = SCHEMA

    def __init__(self, path: Path) -> None:
        self.path = path

    def _connected(self, write: bool = True) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        return connected(self.path, write, self.SCHEMA if write else None)

    def save(self, outcome: MatchOutcome, seed: int) -> int:
        with self._connected() as db, db:
            return self._save(db, outcome, seed)

    def _save(self, db: sqlite3.Connection, outcome: MatchOutcome, seed: int) -> int:
        """Stores the match in ``db``'s open transaction; its number."""
        table = f"{self.KIND}_matches"
        cursor = db.execute(f"INSERT INTO {table} (finished, line) VALUES (?, '')", (time.time(),))
        number = int(cursor.lastrowid or 0)
        line = match_line(
            f"{self.KIND}-{number}", ONE_MATCH, seed, outcome.status, outcome.record, outcome.faults
        )
        record = json.dumps(outcome.record.to_dict(), ensure_ascii=False)  # with its talk
        db.execute(f"UPDATE {table} SET line = ?, record = ? WHERE id = ?", (line, record, number))
        return number

    def lines(self) -> list[tuple[int, float, dict[str, Any]]]:
        if not self.path.is_file():
            return []
        with self._connected(write=False) as db:
            rows = db.execute(f"SELECT id, finished, line FROM {self.KIND}_matches ORDER BY id").fetchall()
        return [(int(n), float(f), json.loads(line)) for n, f, line in rows]

    def line(self, number: int) -> dict[str, Any] | None:
        return next((line for n, _, line in self.lines() if n == number), None)

    def replayable(self, number: int) -> RecordedMatch | None:
        """The match as its replay page shows it: the whole record, its talk too (an export line has
        none), with its faults and status from its line."""
        if not self.path.is_file():
            return None
        with self._connected(write=False) as db:
            row = db.execute(
                f"SELECT line, record FROM {self.KIND}_matches WHERE id = ?", (number,)
            ).fetchone()
        if row is None:
            return None
        recorded = from_line(json.loads(row[0]))
        return replace(recorded, record=MatchRecord.from_dict(json.loads(row[1])))


def human_database(league: League) -> Path:
    return human_path(league.database)
