"""The practice matches of a league, in ``<results database>-practice.sqlite`` beside the league's
results: never rated, never mixed with the league's or the human seat's; each reached by the random key
its author was given (:mod:`referee.web.practice`), and counted per entrant for its quota.
"""

from __future__ import annotations

import json
import time
from typing import Any, ClassVar, Final

from referee.match.outcome import MatchOutcome
from referee.web.human_store import HumanStore

SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS practice_matches (id INTEGER PRIMARY KEY, finished REAL, line TEXT, "
    "record TEXT, key TEXT UNIQUE, entrant TEXT, asked REAL)"
)


class PracticeStore(HumanStore):
    """The practice matches, each under the key its author holds."""

    KIND: ClassVar[str] = "practice"
    SCHEMA: ClassVar[str] = SCHEMA

    def save_keyed(self, outcome: MatchOutcome, seed: int, key: str, entrant: str, asked: float) -> int:
        """Stores the match with its key and the entrant that asked for it, in one transaction."""
        with self._connected() as db:
            with db:
                number = self._save(db, outcome, seed)
                db.execute(
                    "UPDATE practice_matches SET key = ?, entrant = ?, asked = ? WHERE id = ?",
                    (key, entrant, asked, number),
                )
            return number

    def number(self, key: str) -> int | None:
        """The stored match under ``key``, or ``None``."""
        if not self.path.is_file():
            return None
        with self._connected(write=False) as db:
            row = db.execute("SELECT id FROM practice_matches WHERE key = ?", (key,)).fetchone()
        return None if row is None else int(row[0])

    def of(self, entrant: str, limit: int) -> list[tuple[str, float, dict[str, Any]]]:
        """``entrant``'s latest ``limit`` practice matches, the latest first: (key, when, export line)."""
        if not self.path.is_file():
            return []
        with self._connected(write=False) as db:
            rows = db.execute(
                "SELECT key, finished, line FROM practice_matches WHERE entrant = ? ORDER BY id DESC LIMIT ?",
                (entrant, limit),
            ).fetchall()
        return [(str(key), float(when), json.loads(line)) for key, when, line in rows]

    def asked_since(self, entrant: str, since: float) -> int:
        """How many of ``entrant``'s practice matches were asked for since ``since`` and stored."""
        if not self.path.is_file():
            return 0
        with self._connected(write=False) as db:
            row = db.execute(
                "SELECT COUNT(*) FROM practice_matches WHERE entrant = ? AND asked >= ?", (entrant, since)
            ).fetchone()
        return int(row[0])


def day_ago() -> float:
    return time.time() - 86400
