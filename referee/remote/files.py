"""The files a league's remote entrants add beside its results database. No bot may read them (they are
among ``referee.league.location.companions``)."""

from __future__ import annotations

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
