"""Where a league's results database is, and the files kept beside it: paths only, nothing is opened.

A league file without ``database:`` keeps its results in ``<league file's stem>.sqlite`` beside it
(``spring.yaml``: ``spring.sqlite``), so two league files in one folder never share one by default. The
default used to be ``results.sqlite`` for every league file; such a file is still this league's database
when it was made by this league file (or, if it predates the record of its league file, by a league of
this name) and there is no ``<stem>.sqlite`` yet. Nothing is moved or renamed. Who made a database is
read from the database itself, which is the results' business: the reader of a league file passes that
probe in (:class:`MadeBy`), so that nothing here opens a database.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final, Protocol

from referee.remote.files import invites_path, record_path, tokens_path

LEGACY_DATABASE: Final = "results.sqlite"
"""The default ``database:`` before it was named after the league file."""
SQLITE_FILES: Final = ("-wal", "-shm", "-journal")
"""SQLite's own files beside a database in WAL (or rollback) mode."""
BACKUP_MARK: Final = ".before-fresh-"
"""In the name of the copy ``--fresh`` keeps: ``<stem>.before-fresh-<date>-<time>.sqlite``."""


class MadeBy(Protocol):
    """Whether ``database`` holds the results of the league file ``league_file`` named ``name``
    (``referee.results.owner.made_by`` reads it from the database)."""

    def __call__(self, database: Path, league_file: Path, name: str) -> bool: ...


def default_database(league_file: Path, name: str, made_by: MadeBy | None) -> Path:
    """The results database of a league file that names none (see the module's docstring); without
    ``made_by`` an old ``results.sqlite`` beside it is never taken for this league's."""
    own = league_file.with_suffix(".sqlite")
    if own == league_file:  # a league file that is itself named *.sqlite
        own = league_file.with_name(league_file.name + ".sqlite")
    legacy = league_file.with_name(LEGACY_DATABASE)
    if made_by is None or own.exists() or not legacy.is_file():
        return own
    return legacy if made_by(legacy, league_file, name) else own


def relative_league_file(database: Path, league_file: Path) -> str:
    """The league file as the database records it: relative to the database's folder, so that moving
    the two together keeps the record right."""
    return Path(os.path.relpath(league_file, database.parent)).as_posix()


def companions(database: Path) -> tuple[Path, ...]:
    """The files kept beside ``database`` that hold its results or its state, whether they exist now or
    not (the copies of earlier ``--fresh`` runs only if they do): no bot may read any of them."""
    backups = sorted(database.parent.glob(f"{database.stem}{BACKUP_MARK}*{database.suffix}"))
    return (
        database,
        *(database.with_name(database.name + suffix) for suffix in SQLITE_FILES),
        lock_path(database),
        tokens_path(database),
        tokens_path(database).with_name(tokens_path(database).name + ".lock"),
        invites_path(database),
        invites_path(database).with_name(invites_path(database).name + ".lock"),
        record_path(database),
        analysis_dir(database),
        versions_path(database),
        human_path(database),
        practice_path(database),
        *backups,
    )


def lock_path(database: Path) -> Path:
    """The lock file of one run at a time beside ``database`` (``referee.results.lock``)."""
    return database.with_name(database.name + ".lock")


def versions_path(database: Path) -> Path:
    """The summaries of the entrants' replaced versions beside ``database``: ``<name>-versions.sqlite``
    (``referee.results.history``)."""
    return database.parent / f"{database.stem}-versions.sqlite"


def practice_path(database: Path) -> Path:
    """The practice matches beside ``database`` (``referee serve``): ``<name>-practice.sqlite``, apart
    from the league's results and ratings, and from the human seat's."""
    return database.parent / f"{database.stem}-practice.sqlite"


def human_path(database: Path) -> Path:
    """The human seat's matches beside ``database`` (``referee serve``): ``<name>-human.sqlite``, apart
    from the league's results and ratings."""
    return database.parent / f"{database.stem}-human.sqlite"


def analysis_dir(database: Path) -> Path:
    """The folder of ``referee analyze``'s results beside ``database``: ``<database name>-analysis``."""
    return database.parent / f"{database.stem}-analysis"


def backup_path(database: Path, stamp: str) -> Path:
    """A free name for the copy that ``--fresh`` keeps: ``league.before-fresh-20260301-141500.sqlite``
    (``-2``, ``-3``… after the time if two runs start over within a second)."""
    base = f"{database.stem}{BACKUP_MARK}{stamp}"
    path, number = database.with_name(base + database.suffix), 1
    while path.exists():
        number += 1
        path = database.with_name(f"{base}-{number}{database.suffix}")
    return path
