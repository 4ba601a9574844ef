"""What a league's results belong to and which matches it plays: its settings' fingerprint and its
schedule (fixed, or chosen batch by batch until settled), under a seed and cohorts given to it.

Pure functions of the league and of stored summaries handed in, shared by the competition that runs a
league, the dry run and every command that reads results, so that all of them see one schedule. What the
database itself keeps (a secret seed, the cohorts in which the entrants joined) is read in
``referee.results.reading``: nothing here opens a store.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from referee.league.config import League
from referee.league.schedule import ScheduledMatch, build_schedule
from referee.league.summary import Summarized

if TYPE_CHECKING:
    from referee.league.adaptive import Plan


def schedule_of(
    league: League, seed: int, stored: Mapping[str, Summarized] | None = None
) -> tuple[ScheduledMatch, ...]:
    """The league's matches under its ``seed`` (:func:`known_seed`): the one schedule that every driver,
    the ratings and every report use. An ``until: settled`` league's depend on its ``stored`` results."""
    if league.settling is not None:
        if stored is None:
            raise ValueError("an until: settled schedule is chosen from the stored results: pass them")
        return plan_of(league, seed, stored).schedule
    names = tuple(entrant.name for entrant in league.entrants)
    return build_schedule(seed, names, league.players, league.rounds, league.seating, league.design)


def plan_of(league: League, seed: int, stored: Mapping[str, Summarized]) -> Plan:
    """An ``until: settled`` league's batches so far and how settled its ranking is (``adaptive.py``,
    imported here, where it is used: it rates with TrueSkill)."""
    from referee.league.adaptive import plan  # noqa: PLC0415

    if league.settling is None:
        raise ValueError(f"{league.name} plays its whole schedule, not until settled")
    names = tuple(entrant.name for entrant in league.entrants)
    return plan(seed, names, league.players, league.seating, league.rating, league.settling, stored)


def league_settings(league: League, seed: int | None) -> str:
    """What makes stored results belong to this league under ``seed``: change any of it and old results
    are invalid; empty while the league's secret seed is not drawn yet.

    Not the seating: a seating found in two modes is the same match (same id, same deals), so switching
    from ``balanced`` to ``all`` keeps the 12 matches played and adds the other 12."""
    if seed is None:
        return ""
    return json.dumps(
        {
            "seed": seed,
            "rules": league.rules.to_dict(),
            "per_action": league.time_control.per_action,
            "bank": league.time_control.bank,
            "max_faults": league.max_faults,
        },
        sort_keys=True,
    )


def with_cohorts(league: League, cohorts: tuple[tuple[str, ...], ...]) -> League:
    return replace(league, design=replace(league.design, cohorts=cohorts))
