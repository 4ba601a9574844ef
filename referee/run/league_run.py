"""One ``referee run``: the league's competition opened on its results database, the machine that plays
it (its host: logs, sandbox), and the driver that plays it (in this process, or on Dask workers), with
what the run says at its end and its exit status. The CLI parses, calls this, and prints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

from referee.league.config import League
from referee.match.sandbox import SandboxError
from referee.remote.settings import RemoteSettings, RemoteSettingsError
from referee.results.lock import check_free
from referee.results.store import Store
from referee.run.competition import Competition, Progress, RunReport
from referee.run.dry_run import EXIT_PREFLIGHT, cpu_count
from referee.run.host import Host, log_dir_of
from referee.run.local_driver import LocalDriver
from referee.run.remote_entrants import LobbyDriver, door_settings, with_door

__all__ = ["EXIT_PREFLIGHT", "FolderError", "LeagueRun"]

EXIT_DISQUALIFIED: Final = 3
"""`referee run`'s exit status when an entrant was disqualified or a match left unplayed (docs/LEAGUE.md)."""
EXIT_FORFEITED: Final = 7
"""`referee run`'s exit status when an entrant forfeited every match of it that is stored: its bot is
broken, not beaten, and a run that ends "successfully" would hide it (3 wins when both apply)."""


class Driver(Protocol):
    """What every driver is: it plays a competition's missing matches and sums the run up."""

    async def run(self, on_progress: Callable[[Progress], None]) -> RunReport: ...


class FolderError(OSError):
    """A folder the run needs cannot be made; the message says which and what to do."""


@dataclass(frozen=True, slots=True)
class LeagueRun:
    """A run ready to play: ``driver`` plays ``competition`` on ``host``."""

    competition: Competition
    host: Host
    driver: Driver
    concurrency: int
    failures: tuple[type[Exception], ...]
    """The errors of the driver that end a run with one line (the sandbox's, the cluster's)."""

    @property
    def league(self) -> League:
        return self.competition.league

    @property
    def store(self) -> Store:
        return self.competition.store

    @property
    def log_file(self) -> Path:
        return self.host.log_dir / "referee.log"

    @classmethod
    def open(
        cls,
        league: League,
        fresh: bool = False,
        report_dir: Path | None = None,
        concurrency: int | None = None,
        workers: int | None = None,
        dask_address: str | None = None,
        skip_broken: bool = False,
        say: Callable[[str], None] = lambda line: None,
        door: RemoteSettings | None = None,
    ) -> LeagueRun:
        """Opens the league's competition (:meth:`Competition.open`: its errors, and the matches of
        entrants with a new version played again), makes the log and report folders (:class:`FolderError`)
        and picks the driver: Dask with ``workers`` or ``dask_address``, else this process. A league with
        remote entrants plays them through the door (``door``: ``referee run``'s options over the league
        file's ``remote:``); settings that cannot work are :class:`RemoteSettingsError`, before any play.
        A league that another process holds is :class:`~referee.results.lock.LeagueBusyError` before any
        of that is checked: while it is held, nothing else matters."""
        check_free(league.database)  # another run or serve of it is the first thing to hear of
        settings = door_settings(league, door or RemoteSettings())
        competition = Competition.open(league, fresh, say, skip_broken)
        try:
            host = Host.of(competition.league, _folders(competition.league, report_dir))
            at_once = concurrency or competition.league.concurrency
            driver, failures = _driver(competition, host, at_once, workers, dask_address, say)
            if settings is None:
                return cls(competition, host, driver, at_once, failures)
            # Remote entrants: the door opens around the run, here; their matches are played in this
            # process (on Dask too: the others go to the workers).
            with_remote = with_door(competition.league, driver, settings)
            return cls(competition, host, with_remote, at_once, (*failures, RemoteSettingsError))
        except BaseException:
            competition.close()
            raise

    def warnings(self) -> list[str]:
        """What the organiser should know before the run starts."""
        cpus = cpu_count()
        if self.concurrency <= cpus:
            return []
        return [
            f"warning: concurrency {self.concurrency} is more than the {cpus} CPU(s) of this machine; "
            "bots that wait for a CPU run out of time, and their timeouts are charged to them"
        ]

    async def play(self, on_progress: Callable[[Progress], None]) -> RunReport:
        return await self.driver.run(on_progress)

    def summary(self, report: RunReport) -> list[str]:
        """The lines a finished run says about its entrants and its void matches (to stderr)."""
        lines = []
        for item in report.broken:
            if item.output:
                lines.append(f"preflight: {item.name} failed; its last output:")
            lines.extend(f"  | {line}" for line in item.output)
        lines.extend(f"disqualified: {name}: {reason}" for name, reason in report.disqualified)
        lines.extend(f"refused: {refusal}" for refusal in report.refusals)
        if report.progress.void:
            lines.append(
                f"{report.progress.void} match(es) void after retries (the referee's errors are in "
                f"{self.log_file}); run again to retry them"
            )
        return lines


def _driver(
    competition: Competition,
    host: Host,
    at_once: int,
    workers: int | None,
    dask_address: str | None,
    say: Callable[[str], None],
) -> tuple[LobbyDriver, tuple[type[Exception], ...]]:
    """The driver that plays the run, and the errors of it that end a run with one line: Dask with
    ``workers`` or ``dask_address``, else this process."""
    if workers is None and dask_address is None:
        return LocalDriver(competition, host, at_once), (SandboxError,)
    # Dask is imported only when it is used.
    from referee.run.dask_driver import ClusterError, DaskDriver  # noqa: PLC0415

    return DaskDriver(competition, host, dask_address, workers, say, at_once), (SandboxError, ClusterError)


def unplayed(report: RunReport) -> str | None:
    """The line of a run that left matches unplayed or disqualified an entrant (exit 3), if it did."""
    if not report.disqualified and not report.skipped:
        return None
    return (
        f"{report.skipped} match(es) not played: an entrant of theirs was disqualified or did not "
        f"start (nothing stored for them); run again to retry them (exit {EXIT_DISQUALIFIED})"
    )


def _folders(league: League, report_dir: Path | None) -> tuple[Path, ...]:
    """Makes the report's folder and the logs' before any bot starts, so that its sandbox masks them;
    returns what the bots must not see besides the league's own files."""
    for folder in (report_dir, log_dir_of(league)):
        try:
            if folder is not None:
                folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise FolderError(
                f"{folder}: cannot make this folder ({exc.strerror or exc}); nothing was played; free some "
                "space or make its parent writable, and run again"
            ) from None
    return (report_dir.resolve(),) if report_dir is not None else ()
