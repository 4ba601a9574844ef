"""League files, and the leagues that a test session plays once and shares.

:func:`write_league` is how a test writes a league file. The leagues more than one test module plays are
here as texts with a function that writes each; the two that several modules only read are played once
per session by the fixtures :func:`finished` and :func:`quitter_league` (registered by the repository's
conftest.py). Under ``pytest -n 2 --dist loadfile`` each worker process plays its own once.

A shared league must stay as it was played: its tests only read it. A test that writes to it (runs it
again, edits its database) works on a copy made by :func:`copy_league`."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from support import ROOT
from support.cli import export, referee

PROCESS_BOTS = f"""\
  - name: random
    command: python sample_bots/random_bot.py
    cwd: {ROOT}
  - name: heuristic
    command: python sample_bots/heuristic.py
    cwd: {ROOT}
"""
"""The two sample bots as bot processes run from the checkout (a fresh process a match): the start of
an ``entrants:`` list."""

MODULE_BOTS = f"""\
  - name: heuristic
    module: sample_bots.heuristic:HeuristicBot
    cwd: {ROOT}
  - name: random
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
"""
"""The two sample bots in the referee's own process (a few milliseconds a match): the start of an
``entrants:`` list."""


def remote_entrants(names: list[str]) -> str:
    """The remote entrants ``names`` (their bots connect to the referee) as lines of ``entrants:``."""
    return "".join(f"  - name: {name}\n    remote: true\n" for name in names)


SMALL = f"""\
# a small test league
name: Small League
seed: 11
players: 2
schedule: {{format: round-robin, rounds: 1, seating: balanced}}
rules: {{trick_winner: led-suit, talk: open}}
time_control: {{per_action: 2s, bank: 20s}}
concurrency: {{concurrency}}
database: results.sqlite
entrants:
  - name: random
    command: python sample_bots/random_bot.py
    cwd: {ROOT}
  - name: heuristic
    command: python sample_bots/heuristic.py   # kept on submit
    cwd: {ROOT}
  - name: random-inproc
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
"""
"""Three entrants, two of them bot processes: 6 matches of two players (test_tournament_e2e.py)."""

SAMPLED = f"""\
name: Sampled League
seed: 23
players: 2
schedule: {{format: sampled, tables_per_entrant: 2}}
time_control: {{per_action: 2s, bank: 20s}}
concurrency: 2
entrants:
{PROCESS_BOTS}  - name: r1
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
  - name: r2
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
  - name: h1
    module: sample_bots.heuristic:HeuristicBot
    cwd: {ROOT}
"""
"""Five entrants in a sampled design of two tables each: 5 tables, 10 matches."""

QUITTER = f"""\
name: Quitter League
seed: 24
players: 2
schedule: {{format: round-robin, rounds: 2, seating: balanced}}
time_control: {{per_action: 2s, bank: 20s}}
faults: {{max: 20}}   # floaty's 16 declarations a match are faults, never enough to forfeit it
entrants:
  - name: quitter
    command: python tests/bots/misbehaving.py exit-10th   # exits on its 10th decision: forfeits
    cwd: {ROOT}
  - name: floaty
    module: tests.bots.badtypes:FloatDeclarer   # declares a float: a fault at each declaration
    cwd: {ROOT}
  - name: random
    command: python sample_bots/random_bot.py
    cwd: {ROOT}
  - name: heuristic
    module: sample_bots.heuristic:HeuristicBot
    cwd: {ROOT}
"""
"""One bot process that forfeits every match it plays (it exits on its 10th move), one in-process bot
that faults in every deal it declares, two honest ones: 24 matches of two players, 12 with the quitter.
test_forfeit_scoring.py and test_summaries.py read it."""


class Played(NamedTuple):
    """A league played to its end by ``referee run``, and what the run and ``referee export`` printed."""

    path: Path
    run: subprocess.CompletedProcess[str]
    lines: list[dict[str, Any]]


def write_league(folder: Path, text: str, name: str = "league.yaml") -> Path:
    """The league file ``name`` in ``folder`` (made if need be), holding ``text``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def copy_league(path: Path, folder: Path) -> Path:
    """A copy in ``folder`` of the league file ``path`` and of its database (by its default name, beside
    it), for a test that writes to a league it shares; the copy's league file."""
    copy = Path(shutil.copy(path, folder / path.name))
    shutil.copy(path.with_suffix(".sqlite"), copy.with_suffix(".sqlite"))
    return copy


def complete_matches(database: Path) -> int:
    """How many complete matches the results database holds; 0 before it has any table, or any file."""
    if not database.exists():
        return 0
    with contextlib.closing(sqlite3.connect(database)) as db:
        try:
            return int(db.execute("SELECT count(*) FROM matches WHERE status = 'complete'").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def dump(database: Path) -> list[str]:
    """The results database as SQL statements: equal dumps, equal contents."""
    with contextlib.closing(sqlite3.connect(database)) as db:
        return list(db.iterdump())


def small_league(folder: Path, concurrency: int = 1) -> Path:
    return write_league(folder, SMALL.replace("{concurrency}", str(concurrency)))


def sampled_league(folder: Path) -> Path:
    return write_league(folder, SAMPLED)


@pytest.fixture(scope="session")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Played:
    """One uninterrupted run of :data:`SMALL` at concurrency 1: the reference that test_tournament_e2e's
    tests and the Dask driver's compare with."""
    path = small_league(tmp_path_factory.mktemp("reference"))
    run = referee("run", path, check=True)
    return Played(path, run, export(path))


@pytest.fixture(scope="session")
def quitter_league(tmp_path_factory: pytest.TempPathFactory) -> Played:
    """:data:`QUITTER` played to its end: the run exits with 7, as the quitter forfeited every match."""
    path = write_league(tmp_path_factory.mktemp("quitter"), QUITTER)
    run = referee("run", path, timeout=600)
    assert run.returncode == 7, run.stdout + run.stderr
    return Played(path, run, export(path))
