"""Analyses kept beside a league's results: one JSON file a match in ``<database name>-analysis/``, so that
``referee report`` shows them without analysing anything (the report stays as fast as it was), and so
that ``referee analyze`` never writes to the results database, whose only writer is ``referee run``.

A file names the record it was made from (:func:`~referee.analysis.estimate.fingerprint`): after a match
is played again (a new version of a bot), its old analysis is not shown. The folder is one of the
database's companions, which no bot's sandbox shows.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path

from pyramid_sdk.record import MatchRecord
from referee.analysis.estimate import Analysis, fingerprint
from referee.files import write_atomic
from referee.league.location import analysis_dir

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
