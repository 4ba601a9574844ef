"""``referee run --dry-run``: the schedule's size, what is stored of it, and how long the rest would take.

It only reads: no database is created, no seed drawn or stored. The stored results are read by the rules
a run opens them by (``planning.py``: the league's seed, its settings, its cohorts), without claiming the
database; with no stored match to time, it times the bots of the matches to play as the preflight tries
them (``timing.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from referee.league.config import Entrant, League
from referee.league.planning import league_settings, schedule_of, with_cohorts
from referee.league.schedule import ScheduledMatch
from referee.league.summary import MatchSummary
from referee.league.versions import fingerprint
from referee.match.outcome import MatchStatus
from referee.match.sandbox import SandboxError
from referee.match.setup import open_launcher
from referee.results.errors import StoreError
from referee.results.reading import joined, known_seed
from referee.results.store import Store
from referee.run import timing
from referee.run.host import confinement_of, log_dir_of, run_build
from referee.run.timing import eta_text

COPY_LIMIT: Final = 64 * 2**20
"""Bytes of an entrant's folder a dry run copies, at most, to run its ``build:`` in the copy."""
EXIT_PREFLIGHT: Final = 4
"""`referee run`'s exit status when entrants failed the preflight and the run stopped, storing nothing."""


@dataclass(slots=True)
class _Stored:
    """What a dry run reads of the league's results database: the league with its cohorts, its seed (if
    known: a secret one is drawn by the first run), the results that a run would keep, and one phrase
    saying so."""

    league: League
    seed: int | None
    state: str
    stored: dict[str, MatchSummary] = field(default_factory=dict)
    seconds: list[float] = field(default_factory=list)
    invalid: set[str] = field(default_factory=set)


def dry_run(league: League, fresh: bool, at_once: int, on_dask: bool) -> list[str]:
    """What ``referee run --dry-run`` prints (see the module's doc); raises
    :class:`~referee.results.errors.StoreError` when the database cannot be read."""
    found = _read(league, fresh)
    league = found.league
    stored, seconds, invalid, state = found.stored, found.seconds, found.invalid, found.state
    # a secret seed not drawn yet: any seed gives a schedule of the same size
    schedule = schedule_of(league, found.seed if found.seed is not None else 0, stored)
    complete = {i for i, m in stored.items() if m.status is MatchStatus.COMPLETE} - invalid
    played = sum(1 for match in schedule if match.match_id in complete)
    missing = len(schedule) - played
    tables = len({match.table_id for match in schedule})
    timed: list[str] = []
    at = f"at {at_once} match{'es' if at_once > 1 else ''} at once"
    if seconds:  # timed at the concurrency they were played at: at_once of them share the machine
        each = sum(seconds) / len(seconds)
        basis = f"{each:.1f}s a match, the mean of {len(seconds)} stored match(es)"
        share = float(at_once)
    else:
        pending = [m for m in schedule if m.match_id not in complete]
        each, basis, timed = timed_estimate(league, pending or list(schedule), at_once)
        share, cores = parallel(at_once)
        if share < at_once:
            at += f" (on {cores}: as {share:.0f})"
    estimate = (
        f"{eta_text(missing * each)} of match time, shared by the Dask cluster's workers"
        if on_dask
        else f"{eta_text(missing * each / share)} {at}"
    )
    if league.settling is not None:  # later batches depend on results not played yet: bound them
        cap = league.settling.max_matches
        estimate += f"; at most {eta_text(max(cap - played, 0) * each / (1 if on_dask else share))} " + (
            f"if it plays on to max_matches ({cap})"
        )
    return [
        f"dry run of {league.name}: {league.schedule_label}; nothing is played or written",
        f"schedule{' so far (the batches chosen from the results stored)' if league.settling else ''}: "
        f"{tables} tables, {len(schedule)} matches ({league.players} players, seating {league.seating})",
        f"{state}; {played} played, {missing} to play",
        *timed,
        f"estimate: {estimate} ({basis})",
    ]


def timed_estimate(
    league: League, pending: list[ScheduledMatch], at_once: int
) -> tuple[float, str, list[str]]:
    """The mean seconds of work a match of ``pending`` should take, why, and the lines that say what
    was timed: samples of the schedule's lineups, ``at_once`` at a time (``referee.run.timing``).
    A bot that could not be timed is named, since the run's preflight would stop there too. One with a
    ``build:`` step that did not start is built first, as the run builds it, but in a throwaway copy of
    its folder (a dry run writes nothing of the league's), and timed there: a fresh ``referee init``
    league's Node.js bot, before its ``npm install``, is then timed as the run will play it."""
    lineups = timing.samples(pending, at_once)
    with tempfile.TemporaryDirectory(prefix="referee-dry-run-") as scratch:
        os.chmod(scratch, 0o755)  # a sandboxed bot runs as a uid of its own, and must reach its copy
        timed = _time(league, lineups, at_once)
        unbuilt = [
            e
            for e in league.entrants
            if e.name in timed.failures and e.build is not None and not e.spec.remote
        ]
        built: dict[str, str] = {}  # entrant: how its build in a copy went
        if unbuilt:
            copies, built = asyncio.run(_build_copies(unbuilt, Path(scratch)))
            if copies:
                entrants = tuple(copies.get(e.name, e) for e in league.entrants)
                timed = _time(replace(league, entrants=entrants), lineups, at_once)
    lines = []
    if timed.speeds:
        lines.append(
            f"timed on {len(lineups)} sample(s) of {timing.TIMING_DEALS} deals (start, decision): "
            + ", ".join(
                f"{name} {speed.start:.2f}s {1000 * speed.decision:.2f}ms"
                for name, speed in sorted(timed.speeds.items())
            )
        )
    lines += [f"{name}: {how}" for name, how in sorted(built.items())]
    for name, reason in sorted(timed.failures.items()):
        rough = f"counted as {timing.ROUGH_START:g}s a start, {1000 * timing.ROUGH_DECISION:g}ms a decision"
        if league.entrant(name).spec.remote:  # it plays from its own machine (docs/REMOTE.md)
            lines.append(f"not timed: {name}: a remote entrant ({rough})")
        else:
            lines.append(
                f"not timed: {name}: {reason} "
                f"(the run's preflight would stop there, exit {EXIT_PREFLIGHT}; {rough})"
            )
    each = timed.match_seconds(league.rules, [match.entrants for match in pending])
    decisions = timing.decisions_per_seat(league.rules)
    return each, f"{each:.1f}s a match: each seat's start and {decisions} decisions, as timed", lines


def _time(league: League, lineups: list[tuple[str, ...]], at_once: int) -> timing.Timings:
    async def measure() -> timing.Timings:
        async with open_launcher(None, confinement_of(league, log_dir_of(league))) as launcher:
            return await timing.time_bots(league, lineups, at_once, launcher)

    try:
        return asyncio.run(measure())
    except SandboxError as exc:
        return timing.Timings({}, {name: str(exc) for lineup in lineups for name in lineup})


async def _build_copies(entrants: list[Entrant], scratch: Path) -> tuple[dict[str, Entrant], dict[str, str]]:
    """Each of ``entrants`` (a ``build:`` and a bot that did not start) copied into ``scratch`` and built
    there as the run builds it: the entrants pointed at the copies that built, and one phrase per entrant
    saying how its build went. A folder over :data:`COPY_LIMIT` is not copied (a dry run should not
    spend minutes on it): its bot is then not timed, and the phrase says why."""
    copies: dict[str, Entrant] = {}
    said: dict[str, str] = {}
    for entrant in entrants:
        build = f"its build step ({entrant.build})"
        folder = entrant.spec.cwd
        if folder is None or not folder.is_dir():
            continue
        size = _size(folder)
        if size > COPY_LIMIT:
            said[entrant.name] = (
                f"{build} was not run: its folder holds over {COPY_LIMIT // 2**20} MiB, too much to copy "
                "for a dry run; the run builds it first"
            )
            continue
        copy = scratch / entrant.name
        shutil.copytree(folder, copy, symlinks=True)
        built = replace(entrant, spec=replace(entrant.spec, cwd=copy))
        logs = scratch / f"{entrant.name}-logs"
        logs.mkdir()
        problem = await run_build(built, logs)
        if problem is None:
            copies[entrant.name] = built
            said[entrant.name] = (
                f"{build} run in a throwaway copy of {folder}, as the run builds it first; timed there"
            )
        else:
            said[entrant.name] = (
                f"{build} failed in a throwaway copy of {folder}: "
                f"{problem.split(', see ')[0]} (the run would disqualify it)"
            )
    return copies, said


def _size(folder: Path) -> int:
    """Bytes in ``folder``'s files, counted up to just over :data:`COPY_LIMIT`."""
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
            if total > COPY_LIMIT:
                return total
    return total


def parallel(at_once: int) -> tuple[float, str]:
    """How many matches at once the machine can play at full speed, and its CPUs in words: a match keeps
    about one CPU busy (one of its bots thinks at a time), so no more than the CPUs. (A machine busy with
    other work has less to give, but the samples were timed on it as it is now, as many at once.)"""
    cpus = cpu_count()
    return float(min(at_once, cpus)), f"{cpus} CPU{'s' if cpus > 1 else ''}"


def cpu_count() -> int:
    """CPUs this process may run on (its affinity, where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _read(league: League, fresh: bool) -> _Stored:
    """The league's stored results as a run would find them, read only."""
    database = league.database
    if not database.is_file():
        return _Stored(league, league.seed, f"no results database yet ({database}): nothing played")
    if not database.stat().st_size:  # opened, SQLite would write its header
        return _Stored(league, league.seed, f"nothing stored yet in {database}")
    store = Store(database, write=False)
    try:
        return _state(store, league, fresh)
    finally:
        store.close()


def _state(store: Store, league: League, fresh: bool) -> _Stored:
    database = league.database
    count, known = store.match_count(), known_seed(league, store)
    seed = league.seed if fresh else known  # --fresh draws a new secret seed
    try:
        store.claim(league.path, league.name, league_settings(league, known))
    except StoreError:
        owner = store.owner().name
        return _Stored(
            league, seed, f"{database} holds the results of another league, {owner!r}: the run would refuse"
        )
    if not count:
        return _Stored(league, seed, f"nothing stored yet in {database}")
    if fresh:
        return _Stored(
            league,
            seed,
            f"--fresh: the {count} match(es) stored in {database} would be forgotten, a copy of them "
            "kept beside it",
        )
    if seed is None or store.meta("settings") != league_settings(league, seed):
        return _Stored(
            league,
            seed,
            f"{database} holds results of other league settings: the run would refuse, see --fresh",
        )
    league = with_cohorts(league, joined(store, league))
    changed = store.new_versions({e.name: fingerprint(e) for e in league.entrants})
    invalid = {match_id for ids in changed.values() for match_id in ids}
    state = f"results in {database}" + (
        f"; {len(invalid)} of them by an older version of {', '.join(changed)}, played again"
        if invalid
        else ""
    )
    return _Stored(league, seed, state, store.summaries(), store.match_seconds(), invalid)
