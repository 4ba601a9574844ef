"""What the league's runs saw of each remote entrant's connection: its round trips, its lag allowance and
the latency of every decision it made, kept beside the results (``league-remote.json``) for
``referee leaderboard`` and ``referee token list``. Diagnostics, not results: a run adds to it at its end.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from referee.remote.files import record_path

KEEP: Final = 100_000
"""Decision latencies kept per entrant (the latest)."""


@dataclass(slots=True)
class Latency:
    """What a run saw of one remote entrant's connections: round trips and decision latencies."""

    round_trips: list[float] = field(default_factory=list)
    decisions: list[float] = field(default_factory=list)
    allowance: float = 0.0

    def line(self) -> str:
        """One line for people, in milliseconds.

        >>> Latency([0.012], [0.02, 0.03, 0.5], 0.012).line()
        'round trip 12.0 ms, allowance 12.0 ms; 3 decisions: median 30.0 ms, max 500.0 ms'
        """
        trip = statistics.median(self.round_trips) * 1000 if self.round_trips else 0.0
        text = f"round trip {trip:.1f} ms, allowance {self.allowance * 1000:.1f} ms"
        if not self.decisions:
            return text + "; no decisions"
        median, most = statistics.median(self.decisions) * 1000, max(self.decisions) * 1000
        return f"{text}; {len(self.decisions)} decisions: median {median:.1f} ms, max {most:.1f} ms"


def load(path: Path) -> dict[str, Latency]:
    """The stored record; ``{}`` if there is none or it cannot be read (it is diagnostics only)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {
            name: Latency(
                [ms / 1000 for ms in item["round_trips_ms"]],
                [ms / 1000 for ms in item["decisions_ms"]],
                item["allowance_ms"] / 1000,
            )
            for name, item in data["entrants"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def save(path: Path, seen: Mapping[str, Latency]) -> None:
    """Adds what a run saw to the record (written to ``.new`` and renamed)."""
    merged = load(path)
    for name, latency in seen.items():
        old = merged.setdefault(name, Latency())
        old.round_trips = (old.round_trips + latency.round_trips)[-KEEP:]
        old.decisions = (old.decisions + latency.decisions)[-KEEP:]
        old.allowance = latency.allowance
    data = {
        "format": 1,
        "entrants": {
            name: {
                "round_trips_ms": [round(t * 1000, 2) for t in item.round_trips],
                "decisions_ms": [round(t * 1000, 2) for t in item.decisions],
                "allowance_ms": round(item.allowance * 1000, 2),
            }
            for name, item in sorted(merged.items())
        },
    }
    new = path.with_name(path.name + ".new")
    new.write_text(json.dumps(data) + "\n", encoding="utf-8")
    os.replace(new, path)


def remote_lines(names: Sequence[str], database: Path) -> list[str]:
    """One line per remote entrant ``names`` of the league whose results are in ``database``: that it is
    not sandboxed, and its latency so far (``League.remote_names`` gives them)."""
    seen = load(record_path(database)) if names else {}
    lines = []
    for name in names:
        latency = seen.get(name)
        measured = latency.line() if latency is not None else "never connected"
        lines.append(f"remote: {name} (plays from its own machine, not sandboxed): {measured}")
    return lines
