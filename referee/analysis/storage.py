"""Analyses kept beside a league's results: one JSON file a match in ``<database name>-analysis/``, so that
``referee report`` shows them without analysing anything (the report stays as fast as it was), and so
that ``referee analyze`` never writes to the results database, whose only writer is ``referee run``.

A file names the record it was made from (:func:`~referee.analysis.estimate.fingerprint`): after a match
is played again (a new version of a bot), its old analysis is not shown. The folder is one of the
database's companions, which no bot's sandbox shows.

Which of a league's stored matches have an analysis kept, which are still to analyse and what the kept
ones sum up to per entrant are read here too, for ``referee analyze`` (:mod:`referee.cli.analysis`):
only a complete match of a table whose deals are shown (:mod:`referee.results.disclosure`) is analysed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pyramid_sdk.record import MatchRecord
from referee.analysis.estimate import Analysis, fingerprint
from referee.analysis.summary import Summary, summarise
from referee.files import write_atomic
from referee.league.location import analysis_dir
from referee.league.schedule import ScheduledMatch
from referee.match.outcome import MatchStatus
from referee.results.disclosure import disclosure
from referee.results.store import StoredMatch

LOGGER = logging.getLogger(__name__)


def analysis_path(database: Path, match_id: str) -> Path:
    """Where the analysis of ``match_id`` is kept: its id made safe for a file name, and a digest of the
    id so that two ids that read alike (``a:b``, ``a_b``) never share a file.

    >>> analysis_path(Path("/l/results.sqlite"), "r1:ann,bob").as_posix()
    '/l/results-analysis/r1_ann_bob-ce4cf806.json'
    """
    digest = hashlib.sha256(match_id.encode()).hexdigest()[:8]
    return analysis_dir(database) / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', match_id)}-{digest}.json"


def save(database: Path, match_id: str, analysis: Analysis) -> Path:
    """Writes the analysis atomically (a reader never sees half a file); returns its path."""

    path = analysis_path(database, match_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps({"match_id": match_id, **analysis.to_dict()}, separators=(",", ":")))
    return path


def load(database: Path, match_id: str, record: MatchRecord) -> Analysis | None:
    """The kept analysis of this very record, or ``None``: none kept, one of an earlier record of the
    match, or a file that is no analysis (logged, never fatal: the report goes on without it)."""
    path = analysis_path(database, match_id)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        analysis = Analysis.from_dict(data)
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        LOGGER.warning("%s: not an analysis of referee analyze, left out: %s", path, exc)
        return None
    if data.get("match_id") != match_id or analysis.fingerprint != fingerprint(record):
        return None
    return analysis


def kept(database: Path, match: StoredMatch, samples: int, seed: int) -> Analysis | None:
    """The kept analysis of ``match`` made with these ``samples`` and this ``seed``, or ``None``: one made
    otherwise is made again, so that the same options always print the same figures."""
    found = load(database, match.match_id, match.record)
    return found if found is not None and (found.samples, found.seed) == (samples, seed) else None


@dataclass(frozen=True, slots=True)
class Due:
    """What ``referee analyze --all`` has to do."""

    matches: tuple[StoredMatch, ...]
    """The shown, complete matches without a kept analysis, in schedule order."""
    hidden: int
    """The stored matches whose deals are not shown yet: analysed once their tables are complete."""


def due(database: Path, schedule: Sequence[ScheduledMatch], stored: Mapping[str, StoredMatch]) -> Due:
    """The matches of ``stored`` (whole matches) still to analyse, and how many wait for their tables."""
    shown = disclosure(schedule, stored)
    matches = tuple(
        stored[s.match_id]
        for s in schedule
        if s.match_id in stored
        and stored[s.match_id].status is MatchStatus.COMPLETE
        and shown.deals_shown(stored[s.match_id])
        and load(database, s.match_id, stored[s.match_id].record) is None
    )
    return Due(matches, sum(1 for m in stored.values() if not shown.deals_shown(m)))


@dataclass(frozen=True, slots=True)
class KeptSummary:
    """The per-entrant figures of a league's kept analyses (``referee analyze --summary``)."""

    entrants: tuple[Summary, ...]
    analysed: int
    """Matches with a kept analysis, of the shown complete ones."""
    shown: int
    """Shown complete matches."""


def kept_summary(
    database: Path, schedule: Sequence[ScheduledMatch], stored: Mapping[str, StoredMatch]
) -> KeptSummary:
    """Per entrant, over the kept analyses of shown complete matches; and how many those are, of how
    many shown complete matches."""
    shown = disclosure(schedule, stored)
    found: list[tuple[Analysis, tuple[str, ...]]] = []
    complete = 0
    for scheduled in schedule:
        match = stored.get(scheduled.match_id)
        if match is None or match.status is not MatchStatus.COMPLETE or not shown.deals_shown(match):
            continue
        complete += 1
        analysis = load(database, match.match_id, match.record)
        if analysis is not None:
            found.append((analysis, scheduled.entrants))
    return KeptSummary(tuple(summarise(found)), len(found), complete)
