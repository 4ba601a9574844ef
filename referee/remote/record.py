"""What the league's runs saw of each remote entrant's connection: its round trips, its lag allowance and
the latency of its decisions, kept beside the results (``league-remote.json``) for ``referee leaderboard``
and ``referee token list``. Diagnostics, not results.

The record is written as it comes (:class:`RecordFile`): when a bot connects and after each of its
matches, at most once every :data:`WRITE_EVERY` seconds, so the commands that read it beside a running
``referee run`` or ``referee serve`` see what has been played. Its size is bounded (the latest
:data:`KEEP` decisions and :data:`KEEP_TRIPS` round trips per entrant, with the count and the slowest
of all), so each write costs the same however long the league has run.
"""

from __future__ import annotations

import asyncio
import json
import logging
import statistics
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from referee.files import write_atomic
from referee.remote.files import record_path

LOGGER = logging.getLogger(__name__)

KEEP: Final = 5_000
"""Decision latencies kept per entrant (the latest): the median is theirs; the count and the slowest are
of every decision."""
KEEP_TRIPS: Final = 100
"""Round trips kept per entrant (the latest), one per connection."""
WRITE_EVERY: Final = 1.0
"""Seconds between two writes of the record, at least: a burst of matches costs one write."""
FORMAT: Final = 2


@dataclass(slots=True)
class Latency:
    """What the runs saw of one remote entrant's connections: round trips and decision latencies."""

    round_trips: list[float] = field(default_factory=list)
    decisions: list[float] = field(default_factory=list)
    """The latest :data:`KEEP` decisions' latencies, seconds."""
    allowance: float = 0.0
    count: int = 0
    """Decisions ever recorded (at least ``len(decisions)``)."""
    slowest: float = 0.0
    """The slowest decision ever recorded, seconds."""
    matches: int = 0
    """Matches its connections were handed and gave back."""

    def __post_init__(self) -> None:
        self.count = max(self.count, len(self.decisions))
        self.slowest = max(self.slowest, max(self.decisions, default=0.0))

    def add_decisions(self, latencies: Iterable[float]) -> None:
        added = list(latencies)
        if not added:
            return
        self.count += len(added)
        self.slowest = max(self.slowest, *added)
        self.decisions = (self.decisions + added)[-KEEP:]

    def add_round_trip(self, seconds: float) -> None:
        self.round_trips = [*self.round_trips, seconds][-KEEP_TRIPS:]

    def line(self) -> str:
        """One line for people, in milliseconds.

        >>> Latency([0.012], [0.02, 0.03, 0.5], 0.012).line()
        'round trip 12.0 ms, allowance 12.0 ms; 3 decisions: median 30.0 ms, max 500.0 ms'
        """
        trip = statistics.median(self.round_trips) * 1000 if self.round_trips else 0.0
        text = f"round trip {trip:.1f} ms, allowance {self.allowance * 1000:.1f} ms"
        if not self.decisions:
            return text + "; no decisions"
        median, most = statistics.median(self.decisions) * 1000, self.slowest * 1000
        return f"{text}; {self.count} decisions: median {median:.1f} ms, max {most:.1f} ms"


def load(path: Path) -> dict[str, Latency]:
    """The stored record (of format 1 or 2); ``{}`` if there is none or it cannot be read (it is
    diagnostics only)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {
            name: Latency(
                [ms / 1000 for ms in item["round_trips_ms"]][-KEEP_TRIPS:],
                [ms / 1000 for ms in item["decisions_ms"]][-KEEP:],
                item["allowance_ms"] / 1000,
                int(item.get("decisions", 0)),
                item.get("slowest_ms", 0) / 1000,
                int(item.get("matches", 0)),
            )
            for name, item in data["entrants"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def save(path: Path, seen: Mapping[str, Latency]) -> None:
    """Writes ``seen`` as the record (a reader sees the old record or the new one, never half of one)."""
    data: dict[str, Any] = {
        "format": FORMAT,
        "entrants": {
            name: {
                "round_trips_ms": [round(t * 1000, 2) for t in item.round_trips],
                "decisions_ms": [round(t * 1000, 2) for t in item.decisions],
                "allowance_ms": round(item.allowance * 1000, 2),
                "decisions": item.count,
                "slowest_ms": round(item.slowest * 1000, 2),
                "matches": item.matches,
            }
            for name, item in sorted(seen.items())
        },
    }
    write_atomic(path, json.dumps(data) + "\n")


class RecordFile:
    """One league's record while a door is open: :attr:`seen` starts as the stored record, the lobby adds
    to it, and :meth:`changed` has it written within :data:`WRITE_EVERY` seconds (:meth:`close` writes
    what is left). A write that fails is said once, on the referee's log; play goes on."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seen = load(path)
        self._timer: asyncio.TimerHandle | None = None
        self._dirty = False
        self._written = float("-inf")
        self._failed = False

    def changed(self) -> None:
        """Something was added to :attr:`seen`: it is written soon, by the running event loop."""
        self._dirty = True
        if self._timer is None:
            delay = max(0.0, self._written + WRITE_EVERY - time.monotonic())
            self._timer = asyncio.get_running_loop().call_later(delay, self.write)

    def write(self) -> None:
        """Writes :attr:`seen` now, if anything changed since the last write."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._dirty:
            return
        self._dirty = False
        self._written = time.monotonic()
        try:
            save(self.path, self.seen)
        except OSError as exc:
            if not self._failed:
                self._failed = True
                LOGGER.warning("the remote latency record %s was not written: %s", self.path, exc)

    def close(self) -> None:
        self.write()


def remote_lines(names: Sequence[str], database: Path, played: Mapping[str, int] | None = None) -> list[str]:
    """One line per remote entrant ``names`` of the league whose results are in ``database``: that it is
    not sandboxed, and its latency so far (``League.remote_names`` gives them). ``played``: matches
    stored per entrant, if the caller has them, so that an entrant that played but has no record (it
    could not be written) is not called "never connected"."""
    seen = load(record_path(database)) if names else {}
    lines = []
    for name in names:
        latency = seen.get(name)
        if latency is not None:
            measured = latency.line()
        elif played and played.get(name):
            measured = f"{played[name]} matches stored; no latency record ({record_path(database).name})"
        else:
            measured = "never connected"
        lines.append(f"remote: {name} (plays from its own machine, not sandboxed): {measured}")
    return lines
