"""What a machine needs to play a league's planned matches, whichever driver sends them: the league as
its file says (each match carries its own seed; a secret league seed is never in a :class:`League`, the
competition holds it, so it never leaves the competition's process), the folder of the bots' logs, the
sandbox every bot runs in, and each entrant's ``build:`` step.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from referee.league.config import Entrant, League
from referee.league.location import companions
from referee.match.arbiter import Arbiter
from referee.match.bots import BotSpecError
from referee.match.launcher import Confinement, Launcher
from referee.run.preflight import Broken, tail

BUILD_TIMEOUT: Final = 600.0


@dataclass(frozen=True, slots=True)
class Host:
    """A league's matches as one machine plays them (see the module's doc)."""

    league: League
    log_dir: Path
    confinement: Confinement

    @classmethod
    def of(cls, league: League, hidden: tuple[Path, ...] = (), log_dir: Path | None = None) -> Host:
        """The host of ``league``: its logs in ``log_dir``, by default beside its results database, its
        bots unable to read the league, its results or logs, nor ``hidden`` (a live report's folder)."""
        log_dir = log_dir or log_dir_of(league)
        return cls(league, log_dir, confinement_of(league, log_dir, hidden))

    def arbiter(self, launcher: Launcher | None) -> Arbiter:
        """An arbiter that plays this league's matches on ``launcher``."""
        league = self.league
        return Arbiter(launcher, league.rules, league.time_control, league.max_faults)


def log_dir_of(league: League) -> Path:
    """The folder of a league's logs, beside its results database: ``<database name>-logs``."""
    return league.database.parent / f"{league.database.stem}-logs"


def confinement_of(league: League, log_dir: Path, hidden: tuple[Path, ...] = ()) -> Confinement:
    """The sandbox of every bot of ``league``: the league's settings, and what it must not see (the
    league, its results and their companions, its logs, and ``hidden``)."""
    masked = (league.path, league.path.parent, *companions(league.database), log_dir, *hidden)
    folders = tuple(
        {e.spec.cwd.resolve() for e in league.entrants if e.spec.cwd is not None and not e.in_process}
    )
    return Confinement(league.sandbox, league.limits, masked, folders)


async def run_builds(league: League, log_dir: Path) -> list[Broken]:
    """Runs every ``build:`` once; returns the entrants it disqualified, each with the reason and the
    end of its build's log, as the preflight reports a broken bot."""
    failed = []
    for entrant in league.entrants:
        problem = await run_build(entrant, log_dir)
        if problem is not None:
            failed.append(Broken(entrant.name, problem, tail(log_dir / f"{entrant.name}.build.log")))
    return failed


async def run_build(entrant: Entrant, log_dir: Path) -> str | None:
    """Runs the entrant's ``build:``, if it has one, and checks that its bot can then be found; returns
    why it cannot play, or ``None``. The build runs in its own process group, killed whole on a timeout
    or when the run is interrupted; its output goes to ``log_dir/NAME.build.log``. As for the bots, the
    referee's interpreter comes first on its ``PATH``: ``python`` and ``pip`` in a build are the ones the
    entrant's ``python`` will run on (``python -m sample_bots.node_heuristic --install``, say), whichever
    ``PATH`` the organiser started the referee with."""
    if entrant.build is None:
        return None
    log = log_dir / f"{entrant.name}.build.log"
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", os.defpath)])
    with log.open("wb") as out:
        process = await asyncio.create_subprocess_shell(
            entrant.build,
            cwd=entrant.spec.cwd,
            env={**os.environ, "PATH": path},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            code = await asyncio.wait_for(process.wait(), BUILD_TIMEOUT)
        except TimeoutError:
            return f"build {entrant.build!r} took over {BUILD_TIMEOUT:g}s"
        finally:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()
    if code != 0:
        return f"build {entrant.build!r} failed with code {code}, see {log}"
    try:
        entrant.spec.check()
    except BotSpecError as exc:
        return str(exc)
    return None
