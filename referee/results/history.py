"""Each version's results: what an entrant's earlier versions made before a new one replaced them.

A new version replays the entrant's matches, and the league deletes the old results (they are no longer
the entrant's, docs/LEAGUE.md "Bot versions"). :func:`replay_new_versions`, which ``referee run`` and
``referee serve`` both call when they open the league, keeps a summary of them first, in
``<results database>-versions.sqlite`` beside the results, so that the entrant's page can show how each
version did, whichever command saw the change. The league's own results and ratings are untouched by it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from referee.league.config import League
from referee.league.location import versions_path
from referee.league.summary import Summarized
from referee.league.versions import fingerprint
from referee.match.outcome import MatchStatus
from referee.results.connection import connected
from referee.results.store import Store


@dataclass(frozen=True, slots=True)
class VersionResult:
    """How one version of an entrant did in its complete matches."""

    version: str
    matches: int
    wins: int
    mean_points: float | None
    faults: int
    until: float | None = None
    """When it was replaced (seconds since the epoch); ``None`` for the version playing now."""


def summary(
    name: str, version: str, stored: Iterable[Summarized], until: float | None = None
) -> VersionResult:
    """``name``'s results in the complete matches of ``stored``, credited as every leaderboard credits.

    >>> summary("a", "1", []).matches
    0
    """
    points: list[int] = []
    wins = faults = 0
    for match in (found.summary for found in stored):
        if match.status is not MatchStatus.COMPLETE or name not in match.seats:
            continue
        seat = match.seats.index(name)
        points.append(match.credited[seat])
        wins += match.ranks[seat] == 1
        faults += match.fault_seats.count(seat)
    mean = round(sum(points) / len(points), 1) if points else None
    return VersionResult(version, len(points), wins, mean, faults, until)


def archive_path(league: League) -> Path:
    return versions_path(league.database)


def replay_new_versions(store: Store, league: League, say: Callable[[str], None]) -> bool:
    """An entrant whose fingerprint changed since its matches were stored (docs/LEAGUE.md, "Bot
    versions"): says which matches that invalidates, keeps their summary as the earlier version's
    results, and deletes them so that they are played again. Whether any entrant changed."""
    fingerprints = {entrant.name: fingerprint(entrant) for entrant in league.entrants}
    changed = store.new_versions(fingerprints)
    archive = VersionArchive(archive_path(league))
    summaries = store.summaries() if any(changed.values()) else {}
    for name, ids in changed.items():
        shown = ", ".join(ids[:6]) + (f" and {len(ids) - 6} more" if len(ids) > 6 else "")
        say(
            f"new version of {name}: its {len(ids)} stored match(es) are invalid and played again"
            + (f": {shown}" if ids else "")
        )
        if ids:
            label = f"before {time.strftime('%Y-%m-%d %H:%M', time.localtime())}"
            earlier = (summaries[match_id] for match_id in ids if match_id in summaries)
            archive.add(name, summary(name, label, earlier, time.time()))
    store.set_versions(fingerprints, list(changed))
    return bool(changed)


SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS versions (id INTEGER PRIMARY KEY, entrant TEXT, version TEXT, "
    "matches INTEGER, wins INTEGER, mean_points REAL, faults INTEGER, until REAL)"
)


class VersionArchive:
    """The summaries of replaced versions, one row each."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def add(self, entrant: str, result: VersionResult) -> None:
        with connected(self.path, schema=SCHEMA) as db, db:
            db.execute(
                "INSERT INTO versions (entrant, version, matches, wins, mean_points, faults, until) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    entrant,
                    result.version,
                    result.matches,
                    result.wins,
                    result.mean_points,
                    result.faults,
                    result.until or time.time(),
                ),
            )

    def of(self, entrant: str) -> list[VersionResult]:
        """The entrant's replaced versions, the latest first."""
        if not self.path.is_file():
            return []
        with connected(self.path, write=False) as db:
            rows = db.execute(
                "SELECT version, matches, wins, mean_points, faults, until FROM versions "
                "WHERE entrant = ? ORDER BY id DESC",
                (entrant,),
            ).fetchall()
        return [VersionResult(str(v), int(m), int(w), p, int(f), u) for v, m, w, p, f, u in rows]


def as_json(result: VersionResult) -> dict[str, Any]:
    return asdict(result)
