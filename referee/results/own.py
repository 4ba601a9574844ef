"""What an entrant's author may read of its own matches (``referee serve``'s ``/me``): its faults in full,
by an index lookup of its seats, never a scan of every record. Shown to the author alone (docs/SECURITY.md);
the caller holds back those of tables still being played (:mod:`referee.results.disclosure`)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from referee.results.errors import storage_error
from referee.results.store import Store


@dataclass(frozen=True, slots=True)
class OwnFault:
    """One fault of the entrant's bot: its match (and the table's deals, ``seed``), deal, kind, detail."""

    match_id: str
    position: int
    seed: int
    seat: int
    deal: int
    kind: str
    detail: str


def own_faults(store: Store, entrant: str, limit: int) -> list[OwnFault]:
    """``entrant``'s latest ``limit`` faults, the latest match first."""
    try:
        rows = store.db.execute(
            "SELECT f.match_id, m.position, m.seed, f.seat, f.deal, f.kind, f.detail FROM faults f "
            "JOIN seats s ON s.match_id = f.match_id AND s.seat = f.seat "
            "JOIN matches m ON m.match_id = f.match_id WHERE s.entrant = ? "
            "ORDER BY m.position DESC, f.deal DESC, f.rowid DESC LIMIT ?",
            (entrant, limit),
        ).fetchall()
    except sqlite3.Error as exc:
        raise storage_error(store.path, exc) from None
    return [OwnFault(str(a), int(b), int(c), int(d), int(e), str(f), str(g)) for a, b, c, d, e, f, g in rows]
