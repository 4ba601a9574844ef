"""What changed between two readings of a league file, when the change is small enough for a league in
play to take in without stopping: only remote entrants added (an author's entry, the organiser adding
one by hand). Everything else (an entrant removed or changed, a setting) is a new league, which
``referee serve`` plays from a new pass, with builds and a preflight.
"""

from __future__ import annotations

from dataclasses import replace

from referee.league.config import League


def remote_newcomers(before: League, after: League) -> tuple[str, ...] | None:
    """The entrants of ``after`` that ``before`` lacks, when they are all remote and ``after`` is
    ``before`` otherwise (the same settings, the same entrants in the same order, each unchanged);
    ``None`` when the change is any other. A remote entrant has no build, no process and no preflight,
    so a league in play takes it in as it stands."""
    known = {entrant.name for entrant in before.entrants}
    added = tuple(entrant for entrant in after.entrants if entrant.name not in known)
    if not all(entrant.spec.remote for entrant in added):
        return None
    kept = tuple(entrant for entrant in after.entrants if entrant.name in known)
    if replace(after, entrants=kept) != before:
        return None
    return tuple(entrant.name for entrant in added)
