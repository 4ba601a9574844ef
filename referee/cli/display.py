"""Live progress of the long commands: a league run (``referee run``) and a comparison (``referee
compare``). A bar on a terminal, plain lines otherwise (logs, CI). Imported inside those commands, as it
loads rich."""

from __future__ import annotations

import math
import sys
import time
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, TextColumn
from rich.progress import Progress as Bar

from referee.compare import Snapshot, progress_text
from referee.league.config import League
from referee.report.text import PROGRESS_WIDTH, progress_line
from referee.run.competition import Progress
from referee.run.preflight import Broken


class RunDisplay:
    """Live progress: a bar on a terminal, one line per match otherwise (logs, CI); 80 columns at most.
    The speed and ETA come from the matches played in this run only (see ``progress_line``)."""

    BAR = 16

    def __init__(self, league: League, workers: int = 1) -> None:
        self.league = league
        self.workers = workers
        self.live = sys.stdout.isatty()
        self.bar: Any = None
        self.durations: list[float] = []
        self.seen = 0
        self.first_start: float | None = None
        """When this run's first match started (the builds before it are no match time)."""
        self.settled = ""

    def __call__(self, progress: Progress) -> None:
        now = time.monotonic()
        if progress.played > self.seen and progress.last is not None:
            self.seen = progress.played
            self.durations.append(progress.last.elapsed)
            if self.first_start is None:
                self.first_start = now - progress.last.elapsed
        workers = max(1, min(self.workers, progress.total - progress.done))
        width = PROGRESS_WIDTH - (self.BAR + 1 if self.live else 0)
        wall = None if self.first_start is None else now - self.first_start
        text = progress_line(
            progress.done,
            progress.total,
            self.durations,
            workers,
            progress.void,
            progress.leader,
            width,
            wall,
        )
        if self.live:
            if self.bar is None:
                self.bar = Bar(BarColumn(bar_width=self.BAR), TextColumn("{task.fields[info]}"))
                self.bar.start()
                self.task = self.bar.add_task(self.league.name, total=progress.total, info="")
            self.bar.update(self.task, total=progress.total, completed=progress.done, info=text)
        elif progress.played:
            click.echo(text)
        if progress.settled != self.settled:  # an until: settled league chose its next batch
            self.settled = progress.settled
            if self.bar is not None:
                self.bar.console.print(progress.settled)
            else:
                click.echo(progress.settled)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


class CompareDisplay:
    """A running comparison on stderr (stdout stays the result's, parseable with --json): one updating
    line on a terminal, else a line per round, at most one a second (logs, CI)."""

    def __init__(self, players: int) -> None:
        self.players = players
        self.live = sys.stderr.isatty()
        self.bar: Any = None
        self.last = -math.inf

    def __call__(self, snapshot: Snapshot) -> None:
        text = progress_text(snapshot)
        if self.live:
            if self.bar is None:
                self.bar = Bar(TextColumn("{task.fields[info]}"), console=Console(stderr=True))
                self.bar.start()
                self.task = self.bar.add_task("compare", total=snapshot.total, info="")
            self.bar.update(self.task, completed=snapshot.done, info=text)
        elif snapshot.done % self.players == 0 and time.monotonic() - self.last >= 1.0:
            self.last = time.monotonic()
            click.echo(text, err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def say_broken(broken: list[Broken]) -> None:
    """Each entrant that failed the preflight, and the last lines of its output."""
    for item in broken:
        click.echo(f"preflight: {item.name}: {item.reason}", err=True)
        for line in item.output:
            click.echo(f"  | {line}", err=True)
