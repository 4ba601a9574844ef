"""Reading the bots' debug lines back, for the organiser (``referee logs``) and, later, an author's own
page: the only reader of the ``debug_lines`` table. Nothing public reads it (docs/SECURITY.md, "Debug
lines"), and its texts are the bots' own: whoever shows one escapes it (:func:`escaped`)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from referee.match.debug import DebugFate
from referee.results.errors import StorageError, StorageFault, storage_error
from referee.results.store import Store


@dataclass(frozen=True, slots=True)
class StoredDebugLine:
    """One answer's debug line as stored: its match, seat, deal, step, fate, size (bytes sent) and text
    (empty unless kept)."""

    match_id: str
    seat: int
    deal: int
    step: int
    fate: DebugFate
    size: int
    text: str


def debug_lines(
    store: Store, entrant: str, match_id: str | None = None, limit: int | None = None
) -> list[StoredDebugLine]:
    """``entrant``'s debug lines, in schedule order, then by deal and step; only those of ``match_id``
    if given; only the last ``limit`` if given. An index lookup: it reads the entrant's lines only. A
    file from before the table has none."""
    try:
        if not store.db.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='debug_lines'"
        ).fetchone():
            return []
        where, args = "d.entrant = ?", [entrant]
        if match_id is not None:
            where += " AND d.match_id = ?"
            args.append(match_id)
        rows = store.db.execute(
            "SELECT d.match_id, d.seat, d.deal, d.step, d.fate, d.size, d.text FROM debug_lines d "
            f"JOIN matches m ON m.match_id = d.match_id WHERE {where} "
            "ORDER BY m.position DESC, d.deal DESC, d.step DESC LIMIT ?",
            (*args, -1 if limit is None else limit),
        ).fetchall()
    except sqlite3.Error as exc:
        raise storage_error(store.path, exc) from None
    lines = []
    for found, seat, deal, step, fate, size, text in reversed(rows):
        try:
            lines.append(StoredDebugLine(found, seat, deal, step, DebugFate(fate), size, text))
        except ValueError:
            raise StorageError(
                store.path, StorageFault.DAMAGED, f"a debug line of match {found} does not decode"
            ) from None
    return lines


def escaped(text: str) -> str:
    """A bot's text made safe for one line of a terminal: line breaks, tabs and every other unprintable
    character (an escape sequence's ``ESC``) written as a Python escape, all else as it is.

    >>> escaped("eval 0.4\\n\\tbest QS \\x1b[2J é")
    'eval 0.4\\\\n\\\\tbest QS \\\\x1b[2J é'
    """
    return "".join(char if char.isprintable() else _escape(char) for char in text)


def _escape(char: str) -> str:
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def has_played(store: Store, entrant: str) -> bool:
    """Whether any stored match seats ``entrant``: the query stops at its first row."""
    try:
        return (
            store.db.execute("SELECT 1 FROM seats WHERE entrant = ? LIMIT 1", (entrant,)).fetchone()
            is not None
        )
    except sqlite3.Error as exc:
        raise storage_error(store.path, exc) from None


def seats_of(store: Store, match_id: str) -> tuple[str, ...] | None:
    """The entrants of the stored match ``match_id`` by seat, or ``None`` if it is not stored."""
    try:
        rows = store.db.execute(
            "SELECT entrant FROM seats WHERE match_id = ? ORDER BY seat", (match_id,)
        ).fetchall()
    except sqlite3.Error as exc:
        raise storage_error(store.path, exc) from None
    return tuple(str(row[0]) for row in rows) or None
