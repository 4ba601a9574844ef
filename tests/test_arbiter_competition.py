"""The table, the competition and the in-process driver, through their own interfaces: in-process bots
only (``module:`` entrants), so no process starts, but real matches on the real engine and a real SQLite
results database."""

import asyncio
import time
from dataclasses import replace
from pathlib import Path

import pytest

from pyramid_sdk import Rules
from pyramid_sdk.bot import TimeControl
from referee.league.config import load_league
from referee.league.schedule import ScheduledMatch
from referee.match.arbiter import Arbiter, Sitting
from referee.match.bots import BotSpec
from referee.match.faults import RefereeInternalError
from referee.match.launcher import Confinement, Launcher
from referee.match.outcome import VOIDS_IN_A_ROW, Attempt, Finished, MatchStatus, NotStarted, VoidStreak
from referee.match.sandbox import SandboxMode
from referee.match.sessions import SessionRegistry
from referee.remote.lobby import Lobby
from referee.run.competition import START_FAILURES, Competition
from referee.run.host import Host
from referee.run.local_driver import LocalDriver
from referee.run.pending import LOOK_AGAIN, REISSUE_GRACE, Pending
from support import ROOT

RANDOM = "sample_bots.random_bot:RandomBot"


def league_file(folder: Path, seed: int | None = None, names: str = "abc") -> Path:
    lines = [
        "name: Values",
        *([f"seed: {seed}"] if seed is not None else []),
        "players: 2",
        "schedule: {format: round-robin, rounds: 1, seating: balanced}",
        "time_control: {per_action: 60s, bank: 600s}",
        "database: results.sqlite",
        "entrants:",
    ]
    for name in names:
        lines += [f"  - name: {name}", f"    module: {RANDOM}", f"    cwd: {ROOT}"]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "league.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def table() -> Arbiter:
    return Arbiter(None, Rules(players=2), TimeControl(), max_faults=3)


def bots(*texts: str) -> tuple[BotSpec, ...]:
    return tuple(BotSpec.parse(text, name=name) for text, name in zip(texts, "xyz", strict=False))


def test_a_table_plays_a_match_and_tells_of_each_attempt_as_it_ends():
    heard: list[Attempt] = []
    sitting = Sitting("m1", 7, bots(RANDOM, RANDOM))
    first = asyncio.run(table().play(sitting, on_attempt=heard.append))
    again = asyncio.run(table().play(sitting))
    assert isinstance(first, Finished)
    assert first.complete
    assert [attempt.outcome for attempt in heard] == [first.outcome]
    assert first.outcome.status is MatchStatus.COMPLETE
    assert first.outcome.record.seats == ("x", "y")
    assert isinstance(again, Finished)
    assert again.outcome.record.totals == first.outcome.record.totals  # the seed fixes every deal


def test_a_bot_that_does_not_load_leaves_the_match_not_started_not_forfeited():
    result = asyncio.run(table().play(Sitting("m1", 7, bots(RANDOM, "sample_bots.random_bot:NoSuchBot"))))
    assert isinstance(result, NotStarted)
    assert (result.entrant, result.lasting, result.started, result.attempts) == ("y", True, ("x",), ())


def test_the_competition_holds_the_secret_seed_its_database_keeps(tmp_path):
    path = league_file(tmp_path)
    first = Competition.open(load_league(path))
    seed, schedule = first.seed, first.schedule
    first.close()
    again = Competition.open(load_league(path))
    try:
        assert again.seed == seed
        assert again.schedule == schedule
        assert load_league(path).seed is None  # the file's seed stays the file's
        assert again.league.seed is None  # the league stays what its file says: the seed is beside it
        assert Host.of(again.league).league.seed is None  # nothing secret goes to the machines that play
    finally:
        again.close()


def test_a_public_seed_is_the_files_own(tmp_path):
    competition = Competition.open(load_league(league_file(tmp_path, seed=42)))
    try:
        assert competition.seed == competition.league.seed == 42
    finally:
        competition.close()


def test_failed_starts_in_a_row_disqualify_an_entrant_and_leave_its_match_unplayed(tmp_path):
    competition = Competition.open(load_league(league_file(tmp_path, seed=1)))
    try:
        match = next(m for m in competition.schedule if "a" in m.entrants)
        tries = [
            competition.not_started(match, NotStarted("a", "did not connect"), tries)
            for tries in range(1, START_FAILURES + 1)
        ]
        assert tries == [True] * (START_FAILURES - 1) + [False]
        assert competition.disqualified["a"].startswith(f"did not start {START_FAILURES} times in a row")
        assert competition.skipped == 1
        assert not competition.playable(match)
        assert "a" in competition.store.disqualified()
        assert competition.store.complete_ids() == set()  # a start failure is no result
    finally:
        competition.close()


def test_a_bot_that_never_loads_is_disqualified_at_once(tmp_path):
    competition = Competition.open(load_league(league_file(tmp_path, seed=1)))
    try:
        match = next(m for m in competition.schedule if "b" in m.entrants)
        assert not competition.not_started(match, NotStarted("b", "no such class", lasting=True), tries=1)
        assert set(competition.disqualified) == {"b"}
    finally:
        competition.close()


def test_voids_in_a_row_stop_a_run_and_a_complete_match_resets_the_count():
    streak = VoidStreak()
    for _ in range(VOIDS_IN_A_ROW - 1):
        streak.add(True, "referee error")
    streak.add(False)
    for _ in range(VOIDS_IN_A_ROW - 1):
        streak.add(True, "referee error")
    with pytest.raises(RefereeInternalError, match=f"{VOIDS_IN_A_ROW} matches in a row were void"):
        streak.add(True, "referee error")


@pytest.mark.slow  # the launcher probes the sandbox (bwrap), though no bot process starts
def test_the_local_driver_plays_every_match_and_the_next_run_finds_none_left(tmp_path):
    path = league_file(tmp_path)
    competition = Competition.open(load_league(path))
    host = Host.of(competition.league, log_dir=tmp_path / "logs")
    seen: list[int] = []
    try:
        report = asyncio.run(LocalDriver(competition, host, concurrency=2).run(lambda p: seen.append(p.done)))
        assert report.scheduled == len(competition.schedule) == 6
        assert report.progress.done == report.progress.played == 6
        assert report.progress.void == 0
        assert report.processes_started == 0
        assert report.skipped == 0
        assert report.disqualified == ()
        assert seen[0] == 0
        assert seen[-1] == 6
        assert competition.store.complete_ids() == {m.match_id for m in competition.schedule}
    finally:
        competition.close()
    again = Competition.open(load_league(path))
    try:
        assert again.begin() == []
        assert again.progress.done == 6
    finally:
        again.close()


def test_a_competition_plans_again_when_an_entrant_joins_and_keeps_its_seed(tmp_path):
    path = league_file(tmp_path)
    competition = Competition.open(load_league(path))
    try:
        seed, before = competition.seed, {m.match_id for m in competition.schedule}
        competition.disqualify("a", "did not start 3 times in a row")
        assert not all(competition.playable(m) for m in competition.schedule)
        missing = competition.replan(load_league(league_file(tmp_path, names="abcd")))
        assert competition.disqualified == {}  # a new version may start: the preflight says again
        assert all(competition.playable(m) for m in missing)
        assert competition.seed == seed
        assert len(competition.schedule) == len(missing) == 12  # 6 pairs, 2 seatings each
        assert before <= {m.match_id for m in competition.schedule}  # the old tables keep their ids
        assert competition.store.cohorts() == (("a", "b", "c", "d"),)  # nothing stored yet: one group
        with pytest.raises(ValueError, match="its seed changed"):
            competition.replan(load_league(league_file(tmp_path, seed=seed + 1)))
    finally:
        competition.close()


def test_a_tables_remote_seats_are_claimed_together_and_only_the_unconnected_are_charged(tmp_path):
    """A match with remote entrants claims them all at once from the lobby (a real one, nobody
    connected, a short wait): none connected, none of the match's other bots is started, and the start
    failure counts for each remote entrant that was missing; a claim that failed only because an
    entrant was busy elsewhere (``charged=()``) counts against no one."""
    lobby = Lobby(wait=0.05)
    launcher = Launcher(SessionRegistry(), tmp_path / "none.sock", confinement=Confinement(SandboxMode.NONE))
    launcher.remote = lobby
    sitting = Sitting("m1", 7, (BotSpec("a", remote=True), BotSpec("b", remote=True)))
    result = asyncio.run(Arbiter(launcher, Rules(players=2), TimeControl(), max_faults=3).play(sitting))
    assert isinstance(result, NotStarted)
    assert result.charged == ("a", "b")
    assert result.started == ()
    assert "was not connected within 0.05s" in result.reason
    assert launcher.processes == set()

    competition = Competition.open(load_league(league_file(tmp_path, seed=1)))
    try:
        match = next(m for m in competition.schedule if m.entrants == ("a", "b"))
        assert competition.not_started(match, replace(result, entrant="a"), tries=1)
        assert competition.start_failures == {"a": 1, "b": 1}
        busy = NotStarted("a", "still playing", charged=())
        assert competition.not_started(match, busy, tries=1)
        assert competition.start_failures == {"a": 1, "b": 1}
    finally:
        competition.close()


def remote_league(folder: Path, wait: str) -> Path:
    """Three in-process entrants and a remote one, ``r``: 12 matches of two players, 6 of them with r."""
    path = league_file(folder, seed=3)
    text = path.read_text(encoding="utf-8").replace("entrants:\n", f"remote: {{wait: {wait}}}\nentrants:\n")
    path.write_text(text + "  - name: r\n    remote: true\n", encoding="utf-8")
    return path


class CountedLooks(Pending):
    looks = 0

    def take(self) -> ScheduledMatch | None:
        self.looks += 1
        return super().take()


def test_matches_waiting_for_an_away_remote_entrant_hold_nothing_and_cost_its_wait_once(tmp_path):
    """The in-process driver's pending matches with a real lobby nobody connects to: the local matches
    are taken first, the remote entrant's wait; after the league's wait, once, its missed starts
    disqualify it and its other matches are left unplayed; meanwhile the driver looked a few times,
    not in a loop."""
    competition = Competition.open(load_league(remote_league(tmp_path, "0.3s")))
    try:
        pending = CountedLooks(competition, Lobby(wait=0.3))
        pending.put(competition.missing())
        taken = []
        while (scheduled := pending.take()) is not None:
            taken.append(scheduled)
            pending.done(scheduled)
        assert len(taken) == 6
        assert all("r" not in scheduled.entrants for scheduled in taken)
        assert len(pending.matches) == 6  # r's, waiting
        began = time.monotonic()
        assert asyncio.run(pending.next()) is None  # none left once r is out
        assert 0.3 <= time.monotonic() - began < 0.3 + LOOK_AGAIN
        assert pending.looks <= 6 + 1 + 3  # the 6 taken, the first miss, a look or two while waiting
        assert competition.disqualified == {
            "r": f"did not start {START_FAILURES} times in a row: remote entrant 'r' was not connected "
            "within 0.3s (docs/REMOTE.md: its author starts the bot with its token)"
        }
        assert competition.skipped == 6
    finally:
        competition.close()


def test_a_remote_entrant_without_a_valid_token_is_left_out_after_the_reissue_grace(tmp_path):
    competition = Competition.open(load_league(remote_league(tmp_path, "600s")))
    now = [100.0]
    try:
        pending = Pending(competition, Lobby(wait=600), lambda name: "its token was revoked", lambda: now[0])
        pending.put(m for m in competition.missing() if "r" in m.entrants)
        assert pending.take() is None  # it may be a reissue: its matches wait
        assert pending.deadline() == REISSUE_GRACE
        now[0] += REISSUE_GRACE
        assert pending.take() is None
        assert competition.disqualified == {"r": "its token was revoked"}
        assert pending.matches == []
        assert competition.skipped == 6
    finally:
        competition.close()
