"""The referee's own log: Python ``logging``, one module logger per layer, as python-chess's
``chess.engine`` logs every line in and out at DEBUG.

``referee.match.playing`` logs each match's end and, with its traceback, any error of the referee's own
that makes a match void; ``referee.run.competition`` the voids of a run and why it stopped;
``referee.match.sessions`` at DEBUG every message to and from each bot, and at WARNING every hello it
refuses for a spent token or a second time on one stream. ``referee run`` writes the log to
``referee.log`` in the league's log folder, ``referee match`` to stderr (``--log-level`` sets the level).

These are the referee's records, never a bot's: a message to a seat holds that seat's observation only,
but the file is not given to any bot.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Final

LEVELS: Final = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
"""The values of ``--log-level``."""
FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"
ROOT_LOGGER: Final = "referee"


class LogFile(logging.FileHandler):
    """The referee's log file. A record it cannot write (a full disk) is dropped without Python's
    ``--- Logging error ---`` and traceback on stderr, which would bury the one line that says what
    happened; ``failed`` keeps the first reason, for the command to say once."""

    failed: str | None = None

    def handleError(self, record: logging.LogRecord) -> None:
        if self.failed is None:
            error = sys.exc_info()[1]
            self.failed = (
                getattr(error, "strerror", None) or str(error) or type(error).__name__
                if error is not None
                else "unknown error"
            )


@contextlib.contextmanager
def referee_logging(level: str, path: Path | None = None) -> Iterator[logging.Handler]:
    """Sends the ``referee`` loggers at ``level`` and above to ``path`` (appended to: a :class:`LogFile`),
    or to stderr, for the ``with`` block; then puts things back, so one process can run several commands
    (the tests do)."""
    logger = logging.getLogger(ROOT_LOGGER)
    handler: logging.Handler = (
        LogFile(path, encoding="utf-8") if path is not None else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter(FORMAT))
    saved = logger.level, logger.propagate
    logger.setLevel(LEVELS[level])
    logger.propagate = False  # the referee's records go here only, not to whatever the root logger has
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        handler.close()
        logger.setLevel(saved[0])
        logger.propagate = saved[1]
