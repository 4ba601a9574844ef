"""A league file and its stored results, opened for a command, and the one line when they cannot be:
the league commands' shared reading path. Imported inside the commands (it loads the league), never at
the top of a command module."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Final

import click

from referee.cli.common import InputError
from referee.league.config import League, LeagueError, load_league
from referee.league.summary import MatchSummary
from referee.results.errors import StorageError, StorageFault, StoreError
from referee.results.lock import LeagueBusyError
from referee.results.owner import made_by
from referee.results.reading import Standings, open_results
from referee.results.store import Store, StoredMatch

EXIT_BUSY: Final = 5
"""`referee run`'s exit status when another live run holds the league's results database."""
EXIT_STORAGE: Final = 6
"""Every league command's exit status when its results database is damaged, or (``referee run``) cannot
be written: a full disk, a read-only file. The line says what is stored safely."""


class StoreFailure(click.ClickException):
    """A results database this command cannot use: one line, exit code 1."""


class Busy(StoreFailure):
    exit_code = EXIT_BUSY


class StorageFailure(StoreFailure):
    exit_code = EXIT_STORAGE


def league_of(path: str, check_commands: bool = True) -> League:
    """The league file at ``path``, or the one line that says what is wrong in it (exit code 2)."""
    try:
        return load_league(path, check_commands, made_by)
    except LeagueError as exc:
        raise InputError(str(exc)) from None


def failure(exc: StoreError, safe: str) -> StoreFailure:
    """The one line for ``exc``; ``safe`` says what is stored safely, or what was not read, after a
    storage fault."""
    if isinstance(exc, StorageError):
        return StorageFailure(exc.line(safe))
    return Busy(str(exc)) if isinstance(exc, LeagueBusyError) else StoreFailure(str(exc))


def unread(exc: StoreError) -> str:
    damaged = isinstance(exc, StorageError) and exc.fault is StorageFault.DAMAGED
    return "nothing was read from it" if damaged else "nothing was shown"


def results(league_file: str) -> tuple[Store, League, int]:
    """For the commands that read a league's results: its stored results, opened read-only, the league
    and the seed they were stored under (``referee.results.reading.known_seed``). Its bots
    are not checked (results stay readable when a bot has moved), and nothing is written: a league
    never run gets no database, only one line saying that ``referee run`` plays it (exit code 1)."""
    league = league_of(league_file, check_commands=False)
    try:
        return open_results(league, league_file)
    except StoreError as exc:
        raise failure(exc, unread(exc)) from None


def stored_matches(store: Store) -> dict[str, MatchSummary]:
    """Every stored match's summary (no deal decoded), or one line if one of them does not decode:
    never a partial result."""
    try:
        return store.summaries()
    except StoreError as exc:
        raise failure(exc, unread(exc)) from None


def loader(store: Store) -> Callable[[Sequence[str]], Iterator[StoredMatch]]:
    """Decodes stored matches a few at a time (replay, export, report), or says in one line why not."""

    def load(ids: Sequence[str]) -> Iterator[StoredMatch]:
        try:
            yield from store.stream(ids)
        except StoreError as exc:
            raise failure(exc, unread(exc)) from None

    return load


def say_settlement(read: Standings, err: bool = False) -> None:
    """For an ``until: settled`` league: whether its ranking is settled, and its weakest adjacent pair."""
    if read.settlement is not None:
        click.echo(read.settlement.line(), err=err)
