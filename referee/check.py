"""Conformance check of one bot: it plays a 2-, a 3- and a 4-player match, in that order, each with a fresh
process in its sandbox as in a league, against seeded random opponents (the sample random bot,
in-process); the report says whether it is fit for a league.

The opponent is the sample random bot on purpose (:data:`OPPONENT`): the check plays the same reference
bot that bot authors read and measure themselves against, and ``sample_bots`` ships with the referee's
distribution for that reason (``pyproject.toml``). It is named, as ``referee compare`` names its
opponent, and loaded as any in-process bot is: the referee imports no code of the sample bots.
"""

from __future__ import annotations

import secrets
import statistics
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from pyramid_sdk import Rules
from pyramid_sdk.bot import TimeControl
from pyramid_sdk.seeds import derive_seed
from referee.match.arbiter import Arbiter, Sitting
from referee.match.bots import BotSpec, BotSpecError, default_name
from referee.match.faults import MAX_FAULTS, Fault
from referee.match.launcher import Confinement, RemoteSource
from referee.match.outcome import MatchStatus, NotStarted
from referee.match.setup import open_launcher

CHECK_TIME: Final = TimeControl()
"""The check's time control: a league's default (and its fault limit a league's: :data:`MAX_FAULTS`)."""
OPPONENT: Final = BotSpec.parse("sample_bots.random_bot:RandomBot", name="random")
"""Who fills the other seats: the sample random bot, a fresh instance in every match."""


@dataclass(slots=True)
class CheckReport:
    bot: str
    handshake: float = 0.0
    """The most seconds from starting a process to its hello being accepted (a fresh one per match)."""
    matches: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    error: str = ""
    log: Path | None = None
    """The file the bot's output went to (``referee check --logs DIR``), if any."""
    notes: list[str] = field(default_factory=list)
    """Lines about the connection (a remote bot's round trip), shown after the latency."""

    @property
    def clean(self) -> bool:
        return not self.error and not self.faults and len(self.matches) == 3

    def lines(self) -> list[str]:
        lines = [f"bot {self.bot}"]
        if self.handshake:
            lines.append(f"  handshake     ok in {self.handshake:.2f}s")
        lines += [f"  {line}" for line in self.matches]
        if self.latencies:
            ordered = sorted(self.latencies)
            p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
            lines.append(
                f"  latency       p50 {statistics.median(ordered) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms "
                f"over {len(ordered)} decisions"
            )
        lines += [f"  {note}" for note in self.notes]
        for fault in self.faults:
            lines.append(f"  fault         deal {fault.deal} {fault.kind}: {fault.detail}")
        if self.error:
            lines.append(f"  error         {self.error}")
        if self.log is not None and (self.error or self.faults):
            lines.append(f"  log           {self.log} (what the bot printed)")
        lines.append("PASS: ready for a league" if self.clean else "FAIL: fix the above before submitting")
        return lines


async def check_bot(
    command: tuple[str, ...],
    cwd: Path | None = None,
    seed: int | None = None,
    confinement: Confinement | None = None,
    paths: tuple[Path, ...] = (),
    log_dir: Path | None = None,
    remote: RemoteSource | None = None,
) -> CheckReport:
    """Plays the three matches, each with a fresh process in its sandbox, as a league would. The deals
    come from a fresh random seed unless ``seed`` is given, so a bot cannot learn them by heart. With
    ``log_dir``, the bot's output goes to a file there, as ``referee match --logs`` keeps it. With
    ``remote`` (a lobby) and no ``command``, the bot is the remote one that connects to its door."""
    if remote is not None and not command:
        spec = BotSpec(name="remote", remote=True)
    else:
        spec = BotSpec(
            name=default_name(command) if command else "bot", command=command, cwd=cwd, paths=paths
        )
    report = CheckReport(" ".join(command) or "connected to the door")
    try:
        spec.check()
    except BotSpecError as exc:
        report.error = str(exc)
        return report
    seed = secrets.randbits(63) if seed is None else seed
    async with open_launcher(log_dir, confinement, remote=remote) as launcher:
        report.log = launcher.log_of(spec)
        for players in (2, 3, 4):
            if not await _check_match(
                report, spec, Arbiter(launcher, Rules(players=players), CHECK_TIME, MAX_FAULTS), seed
            ):
                break
    return report


async def _check_match(report: CheckReport, spec: BotSpec, arbiter: Arbiter, seed: int) -> bool:
    """One match of the check, played by ``arbiter`` as a league plays it (a start tried once more, a void
    match again from scratch), the bot in seat 0; whether the check goes on."""
    players = arbiter.rules.players
    opponents = tuple(replace(OPPONENT, name=f"random{i}") for i in range(1, players))
    sitting = Sitting(f"check-{players}p", derive_seed(seed, "check", players), (spec, *opponents))
    started = time.monotonic()
    lineup = await arbiter.seat(sitting)
    if lineup.failed is None and not spec.remote:  # a remote bot's wait is its author's, not a start-up
        report.handshake = max(report.handshake, time.monotonic() - started)
    try:
        result = await arbiter.play(sitting, lineup)
    finally:  # every bot of this match stopped before the next one starts
        await arbiter.close()
    if isinstance(result, NotStarted):
        report.error = result.reason
        return False
    outcome = result.outcome
    own = [f for f in outcome.faults if f.seat == 0]
    report.faults += own
    report.latencies += outcome.latencies[0]
    record = outcome.record
    if outcome.status is MatchStatus.VOID:
        report.error = f"{players}-player match void: {outcome.void_reason}"
        return False
    result_line = f"rank {record.ranks[0]} of {players}, {record.credited_totals[0]} points"
    report.matches.append(f"{players} players     {result_line}, {len(own)} faults")
    return True
