"""The one way the referee opens an SQLite file: the results database, the archive of replaced versions,
the human seat's matches, and the probe of who made a database all come through :func:`connect`.

Opened in one place, every file gets the same busy timeout (a reader beside a running league waits for
its write rather than failing), the same check that it is whole before anything is read from it, and the
same one-line :class:`~referee.results.errors.StorageError` for a full disk, a damaged or a read-only
file, instead of a traceback from whichever module met it first.
"""

from __future__ import annotations

import contextlib
import errno
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Final, Literal

from referee.results.errors import StorageError, StorageFault, check_integrity, storage_error

BUSY_TIMEOUT: Final = 30.0
"""Seconds a connection waits for another's write lock before it reports the file locked."""


def connect(
    path: Path,
    write: bool = True,
    schema: str | None = None,
    isolation_level: Literal["DEFERRED", "EXCLUSIVE", "IMMEDIATE"] | None = "DEFERRED",
) -> sqlite3.Connection:
    """An open connection to ``path``, checked whole. ``write=False`` makes no folder and runs no schema
    (the callers that read look for the file first); ``schema`` is run once opened (``CREATE TABLE IF NOT
    EXISTS`` of a small file of its own). ``isolation_level`` is ``sqlite3``'s: ``None`` for a caller that
    writes its transactions itself."""
    db: sqlite3.Connection | None = None
    try:
        if write:
            path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=isolation_level)
        check_integrity(db, path)
        if schema is not None:
            db.execute(schema)
        return db
    except OSError as exc:  # the folder cannot be made
        if db is not None:
            db.close()
        fault = StorageFault.FULL if exc.errno == errno.ENOSPC else StorageFault.READ_ONLY
        raise StorageError(path, fault, f"{exc.strerror or exc} ({exc.filename or path})") from None
    except sqlite3.Error as exc:
        if db is not None:
            db.close()
        raise storage_error(path, exc) from None
    except BaseException:
        if db is not None:
            db.close()
        raise


@contextlib.contextmanager
def connected(path: Path, write: bool = True, schema: str | None = None) -> Iterator[sqlite3.Connection]:
    """:func:`connect` for one short piece of work: closed at the end of the block, and an ``sqlite3``
    error met inside it (a full disk while writing) raised as a
    :class:`~referee.results.errors.StorageError` too."""
    db = connect(path, write, schema)
    try:
        yield db
    except sqlite3.Error as exc:
        raise storage_error(path, exc) from None
    finally:
        db.close()
