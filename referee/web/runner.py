"""The one seam between ``referee serve`` and the league code: plan the league's missing matches, play
one, record it, tell the listeners; again, for as long as the server runs.

It is built on what ``referee run`` uses (the league file, :func:`open_store`, the
:class:`~referee.league.tournament.Tournament`'s builds, preflight, lineups and storing), so a match
played here is the match ``referee run`` would play: same seed, same seats, same record. The league file
is read again whenever it changes (a new entrant from ``referee submit``, a ``--replace``d version): the
store, the builds, the launcher and the preflight are then set up again for the league as it now is, and
the next matches are planned from it. Up to the league's ``concurrency`` matches are in play at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from referee.league.config import League, LeagueError, load_league
from referee.league.lock import LeagueBusyError
from referee.league.preflight import Broken, tail
from referee.league.ratings import Leaderboard, rate
from referee.league.schedule import ScheduledMatch
from referee.league.storage import StorageError, StoreError
from referee.league.store import Store, StoredMatch
from referee.league.tournament import (
    Progress,
    Tournament,
    log_dir_of,
    open_store,
    run_builds,
    schedule_of,
)
from referee.league.versions import fingerprint
from referee.match.launcher import Launcher, interrupted
from referee.match.outcome import MatchStatus
from referee.match.setup import open_launcher
from referee.report.disclosure import table_key
from referee.web.events import Hub
from referee.web.live import LiveMatch, watched
from referee.web.versions import VersionArchive, archive_path, summary

LOGGER = logging.getLogger(__name__)
POLL: Final = 1.0
"""Seconds between looks at the league file for changes while there is nothing to play."""


def league_text(path: Path) -> str:
    """A digest of the league file: when it changes, the league is read again."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def read_results(league: League) -> tuple[dict[str, StoredMatch], tuple[ScheduledMatch, ...], Leaderboard]:
    """The stored matches, the schedule and the leaderboard, read on a connection of the caller's own
    (any thread): what the pages and the API show."""
    store = Store(league.database, write=False)
    try:
        stored = store.matches()
    finally:
        store.close()
    schedule = schedule_of(league, stored)
    board = rate([e.name for e in league.entrants], schedule, stored, league.rating)
    return stored, schedule, board


class LeagueRunner:
    """Plays a league on and on; ``on_stored`` runs (in a thread) after each stored match, before the
    listeners hear of it, so a page that reloads on the event finds it."""

    def __init__(
        self,
        league_file: Path,
        hub: Hub,
        hidden: tuple[Path, ...] = (),
        on_stored: Callable[[League], None] = lambda league: None,
        poll: float = POLL,
    ) -> None:
        self.league_file = league_file.resolve()
        self.hub = hub
        self.hidden = hidden
        self.on_stored = on_stored
        self.poll = poll
        self.league: League | None = None
        """The league as last read, its seed settled (secret or not): what the pages show."""
        self.problem = ""
        """Why the league cannot be played now (a broken league file, a broken bot), or nothing."""
        self.live: dict[str, LiveMatch] = {}
        """The matches in play, by id."""
        self.played = 0
        self._writing = asyncio.Lock()

    async def run(self) -> None:
        """Until cancelled: each pass plays the league as the file says now, until the file changes."""
        while True:
            digest = league_text(self.league_file)
            try:
                league = load_league(self.league_file)
            except LeagueError as exc:
                self._trouble(str(exc))
                await self._until_changed(digest)
                continue
            try:
                store, league = open_store(league)
            except StoreError as exc:
                if self.league is None or isinstance(exc, LeagueBusyError | StorageError):
                    raise  # nothing to serve, or a database that cannot be trusted: serve stops, one line
                self._trouble(f"{exc}; the pages show the league as it was")  # e.g. its rules changed
                await self._until_changed(digest)
                continue
            try:
                self._new_versions(store, league)
                self.league = league
                self.hub.publish("league", name=league.name)
                await asyncio.to_thread(self.on_stored, league)
                await self._pass(league, store, digest)
            finally:
                store.close()

    def _trouble(self, problem: str) -> None:
        LOGGER.warning("%s", problem)
        self.problem = problem
        self.hub.publish("problem", text=problem)

    async def _until_changed(self, digest: str) -> None:
        while league_text(self.league_file) == digest:
            await asyncio.sleep(self.poll)

    def _new_versions(self, store: Store, league: League) -> None:
        """As ``referee run`` does: the stored matches of a changed entrant are played again. Their
        summary is kept first, as the earlier version's results (``versions.py``)."""
        prints = {entrant.name: fingerprint(entrant) for entrant in league.entrants}
        changed = store.new_versions(prints)
        archive = VersionArchive(archive_path(league))
        for name, ids in changed.items():
            LOGGER.info("new version of %s: its %d stored match(es) are played again", name, len(ids))
            label = f"before {time.strftime('%Y-%m-%d %H:%M', time.localtime())}"
            archive.add(name, summary(name, label, store.matches(ids).values(), time.time()))
        store.set_versions(prints, list(changed))

    async def _pass(self, league: League, store: Store, digest: str) -> None:
        log_dir = log_dir_of(league)
        log_dir.mkdir(parents=True, exist_ok=True)
        tournament = Tournament(league, store, log_dir, None, self.hidden, skip_broken=True)
        builds = await run_builds(league, log_dir)
        async with open_launcher(log_dir, tournament.confinement()) as launcher:
            failed = [Broken(n, r, tail(log_dir / f"{n}.build.log")) for n, r in builds.items()]
            await tournament.preflight(launcher, failed, set(builds))  # broken ones sit out
            self.problem = "; ".join(f"{b.name}: {b.reason}" for b in tournament.broken)
            stopping: set[asyncio.Task[None]] = set()
            playing: dict[str, asyncio.Task[None]] = {}
            try:
                while league_text(self.league_file) == digest:
                    for match_id, task in list(playing.items()):
                        if task.done():
                            del playing[match_id]
                            task.result()  # a failure of the referee's own stops serve, loudly
                    scheduled = None
                    if len(playing) < tournament.concurrency:
                        scheduled = self._next(tournament, set(playing))
                    if scheduled is None:
                        waits = {*playing.values(), asyncio.ensure_future(asyncio.sleep(self.poll))}
                        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                        continue
                    playing[scheduled.match_id] = asyncio.create_task(
                        self._play_one(tournament, scheduled, launcher, stopping)
                    )
                await asyncio.gather(*playing.values())  # the league changed: finish what is in play
            finally:
                for task in playing.values():
                    task.cancel()
                await asyncio.gather(*playing.values(), return_exceptions=True)
                await asyncio.gather(*stopping, return_exceptions=True)

    def _next(self, tournament: Tournament, playing: set[str]) -> ScheduledMatch | None:
        """The first missing match not in play whose entrants can all play; an ``until: settled``
        league plans its next batch once the last one is stored."""
        missing = tournament.missing()
        if not missing and not playing and tournament.league.settling is not None:
            missing = tournament.extend(Progress(total=len(tournament.schedule)))
        return next((m for m in missing if m.match_id not in playing and tournament._playable(m)), None)

    async def _play_one(
        self,
        tournament: Tournament,
        scheduled: ScheduledMatch,
        launcher: Launcher,
        stopping: set[asyncio.Task[None]],
    ) -> None:
        lineup = await tournament._lineup(scheduled, launcher)
        if lineup.failed is not None:  # counted by the tournament: three in a row disqualify
            await asyncio.gather(*(launcher.stop(p, interrupted()) for p in lineup.processes))
            await asyncio.sleep(self.poll)
            return
        live = LiveMatch(
            scheduled.match_id, scheduled.entrants, _shown(tournament, scheduled), scheduled.position + 1
        )
        live.listeners.append(lambda match: self.hub.publish("play", **match.state()))
        lineup.seats = watched(lineup.seats, live)
        self.live[scheduled.match_id] = live
        self.hub.publish("match_started", **live.summary())
        try:
            outcome = await tournament._play(scheduled, lineup, launcher, stopping)
        finally:
            self.live.pop(scheduled.match_id, None)
        self.played += 1
        async with self._writing:  # one rewrite at a time, each from the latest results
            await asyncio.to_thread(self.on_stored, tournament.league)
        self.hub.publish(
            "match_finished",
            match_id=scheduled.match_id,
            position=scheduled.position + 1,
            status=str(outcome.status),
            complete=outcome.status is MatchStatus.COMPLETE,
        )


def _shown(tournament: Tournament, scheduled: ScheduledMatch) -> bool:
    """Whether a match may be watched card by card: only when no other match of its table is still to
    come, since they replay its deals (``referee.report.disclosure``)."""
    done = tournament.store.complete_ids()
    key = table_key(scheduled)
    return all(
        m.match_id in done
        for m in tournament.schedule
        if table_key(m) == key and m.match_id != scheduled.match_id
    )
