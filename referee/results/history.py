"""Each version's results: what an entrant's earlier versions made before a new one replaced them.

A new version replays the entrant's matches, and the league deletes the old results (they are no longer
the entrant's, docs/LEAGUE.md "Bot versions"). :func:`replay_new_versions`, which the league's
competition calls as it opens (``referee run``, ``referee serve``) and plans again (``serve``, the file
changed), keeps a summary of them first, in ``<results database>-versions.sqlite`` beside the results,
so that the entrant's page can show how each version did, whichever command saw the change. The
league's own results and ratings are untouched by it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Final

from referee.league.config import League
from referee.league.location import versions_path
from referee.league.ratings import Leaderboard
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
    mu: float | None = None
    """Its TrueSkill μ after its last rated game (when it was replaced, or now); ``None`` if it has none,
    or for a version replaced before ratings were kept per version."""
    sigma: float | None = None
    trajectory: tuple[tuple[int, float, float], ...] = ()
    """(schedule position, μ, σ) after each of its rated games, in order, at most :data:`TRAJECTORY`
    of them (evenly spaced, the last always kept)."""


TRAJECTORY: Final = 200
"""Points of a version's rating trajectory kept and shown: enough for a chart, however long it played."""


def rating_of(
    name: str, history: Iterable[tuple[int, str, str, float, float]]
) -> tuple[float | None, float | None, tuple[tuple[int, float, float], ...]]:
    """``name``'s μ, σ and trajectory (:attr:`VersionResult.trajectory`) from a leaderboard's history.

    >>> rating_of("a", [(0, "t", "a", 26.0, 7.0), (0, "t", "b", 24.0, 7.0), (3, "u", "a", 27.5, 6.0)])
    (27.5, 6.0, ((0, 26.0, 7.0), (3, 27.5, 6.0)))
    """
    points = [
        (position, round(mu, 3), round(sigma, 3)) for position, _, who, mu, sigma in history if who == name
    ]
    if not points:
        return None, None, ()
    if len(points) > TRAJECTORY:
        step = (len(points) - 1) / (TRAJECTORY - 1)
        points = [points[round(i * step)] for i in range(TRAJECTORY)]
    return points[-1][1], points[-1][2], tuple(points)


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


def replay_new_versions(
    store: Store,
    league: League,
    rated: Callable[[Mapping[str, Summarized]], Leaderboard],
    say: Callable[[str], None],
) -> bool:
    """An entrant whose fingerprint changed since its matches were stored (docs/LEAGUE.md, "Bot
    versions"): says which matches that invalidates, keeps their summary as the earlier version's
    results, with its rating as ``rated`` finds it from every stored match (a whole fold, paid once per
    new version), and deletes them so that they are played again. Whether any entrant changed."""
    fingerprints = {entrant.name: fingerprint(entrant) for entrant in league.entrants}
    changed = store.new_versions(fingerprints)
    archive = VersionArchive(archive_path(league))
    summaries = store.summaries() if any(changed.values()) else {}
    history = rated(summaries).history if summaries else ()
    for name, ids in changed.items():
        shown = ", ".join(ids[:6]) + (f" and {len(ids) - 6} more" if len(ids) > 6 else "")
        say(
            f"new version of {name}: its {len(ids)} stored match(es) are invalid and played again"
            + (f": {shown}" if ids else "")
        )
        if ids:
            label = f"before {time.strftime('%Y-%m-%d %H:%M', time.localtime())}"
            earlier = (summaries[match_id] for match_id in ids if match_id in summaries)
            mu, sigma, trajectory = rating_of(name, history)
            result = summary(name, label, earlier, time.time())
            archive.add(name, replace(result, mu=mu, sigma=sigma, trajectory=trajectory))
    store.set_versions(fingerprints, list(changed))
    return bool(changed)


RATING_COLUMNS: Final = {"mu": "REAL", "sigma": "REAL", "trajectory": "TEXT"}
"""The columns an archive gained when ratings were kept per version: added to an older one as it is next
written."""
SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS versions (id INTEGER PRIMARY KEY, entrant TEXT, version TEXT, "
    "matches INTEGER, wins INTEGER, mean_points REAL, faults INTEGER, until REAL, mu REAL, sigma REAL, "
    "trajectory TEXT)"
)


class VersionArchive:
    """The summaries of replaced versions, one row each."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def add(self, entrant: str, result: VersionResult) -> None:
        with connected(self.path, schema=SCHEMA) as db, db:
            columns = {row[1] for row in db.execute("PRAGMA table_info(versions)")}
            for column, kind in RATING_COLUMNS.items():  # an archive made before ratings were kept
                if column not in columns:
                    db.execute(f"ALTER TABLE versions ADD COLUMN {column} {kind}")
            db.execute(
                "INSERT INTO versions (entrant, version, matches, wins, mean_points, faults, until, mu, "
                "sigma, trajectory) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    entrant,
                    result.version,
                    result.matches,
                    result.wins,
                    result.mean_points,
                    result.faults,
                    result.until or time.time(),
                    result.mu,
                    result.sigma,
                    json.dumps(result.trajectory),
                ),
            )

    def of(self, entrant: str) -> list[VersionResult]:
        """The entrant's replaced versions, the latest first."""
        if not self.path.is_file():
            return []
        with connected(self.path, write=False) as db:
            rated = {row[1] for row in db.execute("PRAGMA table_info(versions)")} >= set(RATING_COLUMNS)
            ratings = ", mu, sigma, trajectory" if rated else ", NULL, NULL, NULL"
            rows = db.execute(
                f"SELECT version, matches, wins, mean_points, faults, until{ratings} FROM versions "
                "WHERE entrant = ? ORDER BY id DESC",
                (entrant,),
            ).fetchall()
        return [
            VersionResult(
                str(v),
                int(m),
                int(w),
                p,
                int(f),
                u,
                mu,
                sigma,
                tuple(tuple(x) for x in json.loads(t or "[]")),
            )
            for v, m, w, p, f, u, mu, sigma, t in rows
        ]


def as_json(result: VersionResult) -> dict[str, Any]:
    found = asdict(result)
    found["trajectory"] = [list(point) for point in result.trajectory]
    return found
