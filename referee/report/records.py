"""Match records in JSON Lines read back: a league's export (``referee export``) or the record of one match
(``referee match --record``), both in the format of docs/FORMATS.md, for ``referee replay FILE.jsonl``.

A line is checked as the engine would check it: its deals replay through the rules
(:meth:`pyramid_sdk.Match.replay`), so a record that was edited, cut or written by something else is
refused on one line naming the file and the line, never shown as if it had been played.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyramid_sdk import Match, MatchRecord, RecordError
from referee.match.faults import Fault, FaultKind
from referee.match.outcome import MatchStatus


class RecordsError(ValueError):
    """A file that is no match record; the message is one line naming the file and the line."""


class NoSuchRecord(RecordsError):
    """The file holds no match of that id or position, or more than one where none was named."""


@dataclass(frozen=True, slots=True)
class RecordedMatch:
    """One line of a records file: what ``referee replay`` shows of a match (as of a stored one)."""

    match_id: str
    status: MatchStatus
    seed: int | None
    """``None`` when the league hid its deals (its table was not complete when exported)."""
    record: MatchRecord
    faults: tuple[Fault, ...]

    @property
    def deals_shown(self) -> bool:
        return self.seed is not None


def find_record(path: Path, wanted: str | None = None) -> RecordedMatch:
    """The match ``wanted`` of a JSON Lines records file: by its ``match_id``, or by its place in the
    file from 1; ``None`` for the file's only match. Only that match is checked through the rules, so a
    long export costs a JSON parse a line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise RecordsError(f"{path}: cannot read the records: {reason}") from None
    lines: list[tuple[int, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                lines.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise RecordsError(f"{path}:{number}: {_NOT_A_RECORD}: not JSON ({exc.msg})") from None
    if not lines:
        raise RecordsError(f"{path}: no match in it")
    ids = [str(line.get("match_id")) if isinstance(line, dict) else "?" for _, line in lines]
    if wanted is None:
        if len(lines) > 1:
            raise NoSuchRecord(
                f"{path}: {len(lines)} matches in it: give a match id (the first is {ids[0]!r}) or a "
                f"position from 1 to {len(lines)}"
            )
        number, line = lines[0]
    elif wanted in ids:
        number, line = lines[ids.index(wanted)]
    elif wanted.isdigit() and 1 <= int(wanted) <= len(lines):
        number, line = lines[int(wanted) - 1]
    else:
        raise NoSuchRecord(
            f"{path}: no match {wanted!r} in it: give a match id (the first is {ids[0]!r}) or a position "
            f"from 1 to {len(lines)}"
        )
    try:
        return _recorded(line)
    except KeyError as exc:
        raise RecordsError(f"{path}:{number}: {_NOT_A_RECORD}: it has no {exc.args[0]!r}") from None
    except (RecordError, TypeError, ValueError) as exc:
        problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise RecordsError(f"{path}:{number}: {_NOT_A_RECORD}: {problem}") from None


_NOT_A_RECORD = "not a match record of referee export or referee match --record (docs/FORMATS.md)"


def _recorded(line: Any) -> RecordedMatch:
    if not isinstance(line, dict):
        raise TypeError("a line is one JSON object")
    hidden = bool(line["deals_hidden"])
    status = MatchStatus(line["status"])
    record = MatchRecord.from_dict(
        {
            **line,
            "seed": line["seed"] if not hidden else 0,
            "rules": {**line["rules"], "players": line["players"]},
            "complete": status is MatchStatus.COMPLETE,
        }
    )
    if not hidden:
        Match.replay(record)  # raises RecordError at the first deal that breaks the rules
    faults = tuple(
        Fault(int(f["seat"]), int(f["deal"]), FaultKind(f["kind"]), str(f["detail"])) for f in line["faults"]
    )
    return RecordedMatch(str(line["match_id"]), status, None if hidden else int(line["seed"]), record, faults)


def from_line(line: Any) -> RecordedMatch:
    """One line of ``referee export`` or ``referee match --record``, already parsed from JSON, as a match
    (checked through the rules as :func:`find_record` checks one)."""
    return _recorded(line)
