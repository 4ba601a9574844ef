"""What can go wrong with the file under a league's results: the errors of the store and their kinds.

SQLite reports a full disk, a damaged file or a read-only one as ``sqlite3`` exceptions with a long
traceback; here each becomes a :class:`StorageError` that names the file and the kind of fault, so the
command line can say in one line what happened and what is still safe. A damaged file is caught when it
is opened (SQLite's own ``quick_check``), before anything is read from it: a leaderboard computed from
whatever pages still read would look right and be wrong.

Messages never quote stored data: SQLite's own messages name no value, and a text that does not decode is
reported without its bytes (they could hold a hand of a table still in play).
"""

from __future__ import annotations

import sqlite3
from enum import StrEnum
from pathlib import Path
from typing import Final


class StoreError(RuntimeError):
    """A results file that this league cannot use; the message says why and what to do."""


class StorageFault(StrEnum):
    """Why SQLite could not read or write the file; each calls for something else from the user."""

    FULL = "full"
    DAMAGED = "damaged"
    READ_ONLY = "read-only"
    LOCKED = "locked"
    IO = "i/o"

    @property
    def advice(self) -> str:
        return ADVICE[self]


ADVICE: Final = {
    StorageFault.FULL: "free some space on its disk and run again: it resumes",
    StorageFault.DAMAGED: (
        "restore it from a copy, or move it aside (SQLite's .recover command may save part of it) and run "
        "again to play the league anew"
    ),
    StorageFault.READ_ONLY: "make it and its folder writable and run again: it resumes",
    StorageFault.LOCKED: "another program holds a write lock on it (an open sqlite3 shell?): close it and "
    "run again",
    StorageFault.IO: "check the disk (is it full? failing?), then run again: it resumes",
}


class StorageError(StoreError):
    """SQLite could not read or write the results file. ``str()`` is ``FILE: what happened``; the caller
    adds what is safely stored, which only it knows (:meth:`line`)."""

    def __init__(self, path: Path, fault: StorageFault, detail: str) -> None:
        self.path = path
        self.fault = fault
        self.detail = detail
        what = {
            StorageFault.FULL: "no space left to store results",
            StorageFault.DAMAGED: "the results database is damaged",
            StorageFault.READ_ONLY: "the results database cannot be written",
            StorageFault.LOCKED: "the results database stayed locked",
            StorageFault.IO: "the results database cannot be read or written",
        }[fault]
        super().__init__(f"{path}: {what} ({detail})")

    def line(self, safe: str) -> str:
        """The one line for the user: the fault, ``safe`` (what is stored safely, or what was not read),
        and what to do."""
        return f"{self}; {safe}; {self.fault.advice}"


def storage_error(path: Path, exc: sqlite3.Error) -> StoreError:
    """The :class:`StorageError` for an ``sqlite3`` error met on ``path``; a file that is no SQLite
    database at all is a plain :class:`StoreError` (the league points at the wrong file)."""
    name = getattr(exc, "sqlite_errorname", None)
    if name is None:  # raised by Python's sqlite3 module itself, e.g. a text that is not UTF-8
        return StorageError(path, StorageFault.DAMAGED, "a stored text does not decode")
    if name == "SQLITE_NOTADB":
        return StoreError(f"{path}: not a results database ({exc}); point database: at another file")
    fault = StorageFault.IO
    if name == "SQLITE_FULL":
        fault = StorageFault.FULL
    elif name.startswith(("SQLITE_CORRUPT", "SQLITE_CONSTRAINT")):  # rows that contradict each other
        fault = StorageFault.DAMAGED
    elif name.startswith(("SQLITE_READONLY", "SQLITE_PERM", "SQLITE_AUTH")):
        fault = StorageFault.READ_ONLY
    elif name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        fault = StorageFault.LOCKED
    return StorageError(path, fault, str(exc))


def check_integrity(db: sqlite3.Connection, path: Path) -> None:
    """Raises :class:`StorageError` unless SQLite's ``quick_check`` finds the file whole.

    ``quick_check`` reads every page and checks the structure of every b-tree and the free list; unlike
    ``integrity_check`` it does not check that each index matches its table. Measured on a league of
    10,008 stored matches (338 MB) on a busy 2-core machine: 0.8-1.5 s, against 4.8 s for
    ``integrity_check`` and 52 s to decode the matches, which every reading command does anyway; a page
    overwritten with other bytes breaks the structure it belongs to, which ``quick_check`` sees."""
    try:
        rows = db.execute("PRAGMA quick_check(1)").fetchall()
    except sqlite3.DatabaseError as exc:
        raise storage_error(path, exc) from None
    verdict = " ".join(
        line for line in (str(rows[0][0]) if rows else "no answer").splitlines() if not line.startswith("***")
    )  # "*** in database main ***" heads SQLite's report
    if verdict != "ok":
        raise StorageError(path, StorageFault.DAMAGED, f"SQLite's quick_check: {verdict}")
