"""The files a league's remote entrants add beside its results database. No bot may read them (they are
among ``referee.league.location.companions``)."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path


def tokens_path(database: Path) -> Path:
    """The league's token file (salted hashes only): ``league.sqlite`` -> ``league-tokens.json``.

    >>> tokens_path(Path("/srv/league.sqlite")).name
    'league-tokens.json'
    """
    return database.with_name(f"{database.stem}-tokens.json")


def record_path(database: Path) -> Path:
    """What the runs saw of the remote connections: ``league.sqlite`` -> ``league-remote.json``.

    >>> record_path(Path("/srv/league.sqlite")).name
    'league-remote.json'
    """
    return database.with_name(f"{database.stem}-remote.json")


def invites_path(database: Path) -> Path:
    """The league's invite codes (salted hashes only): ``league.sqlite`` -> ``league-invites.json``.

    >>> invites_path(Path("/srv/league.sqlite")).name
    'league-invites.json'
    """
    return database.with_name(f"{database.stem}-invites.json")


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """``path``'s read-change-write held against every other process doing the same (an advisory lock
    on ``PATH.lock``): ``referee token issue`` and ``referee invite issue`` may write while ``referee
    serve`` admits an entry, and neither may lose the other's change."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def locked_folder(folder: Path) -> Iterator[None]:
    """As :func:`locked`, on ``folder`` itself, for a file replaced by a rename (the league file: a lock
    on the file would stay on the replaced inode) that must leave no lock file beside it."""
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)
