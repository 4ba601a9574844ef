"""Results in SQLite: one file per league, WAL mode, one transaction per finished match.

A match is either stored whole (its row, seats, deals, tricks and faults together) or not at all, so a
referee killed at any moment leaves a consistent file and the next run plays only what is missing. The
full match record is kept as JSON beside the tables, so exports and replays are exact; the tables are for
queries (leaderboards, reports, your own SQL).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import secrets
import sqlite3
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Concatenate, Final, ParamSpec, TypeVar

from pyramid_sdk.record import MatchRecord, RecordError
from referee.league.location import relative_league_file
from referee.league.schedule import ScheduledMatch
from referee.league.summary import MatchSummary, summarize
from referee.match.faults import Fault, FaultKind
from referee.match.outcome import MatchOutcome, MatchStatus
from referee.results.connection import connect
from referee.results.errors import StorageError, StorageFault, StoreError, storage_error
from referee.results.lock import RunLock
from referee.results.schema import (
    DEBUG_LINES,
    DISQUALIFIED,
    JOINED,
    READABLE_VERSIONS,
    RESULT_TABLES,
    ROWS,
    SCHEMA,
    SCHEMA_VERSION,
    SUMMARIES,
    from_row,
)

P = ParamSpec("P")
R = TypeVar("R")


class OtherLeagueError(StoreError):
    """The database holds the results of another league file: no command of this one changes it."""


def _guarded(method: Callable[Concatenate[Store, P], R]) -> Callable[Concatenate[Store, P], R]:
    """Turns an ``sqlite3`` error of ``method`` (a full disk, a damaged page met while reading) into a
    :class:`StorageError` naming the file (:meth:`Store.transaction` has rolled back what it began)."""

    @functools.wraps(method)
    def guarded(store: Store, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(store, *args, **kwargs)
        except sqlite3.Error as exc:
            raise storage_error(store.path, exc) from None

    return guarded


@dataclass(frozen=True, slots=True)
class Since:
    """What :meth:`Store.summaries_since` read."""

    summaries: dict[str, MatchSummary]
    last: int
    """The largest row number of a stored match: where the next read starts."""
    count: int
    """Matches stored."""
    deletions: int
    """Times stored matches were deleted (a new version's, ``--fresh``) since the file was made."""


@dataclass(frozen=True, slots=True)
class StoredMatch:
    match_id: str
    round: int
    table: int
    rotation: int
    seed: int
    status: MatchStatus
    record: MatchRecord
    faults: tuple[Fault, ...]
    decisions: tuple[int, ...]
    think_seconds: tuple[float, ...]

    @property
    def summary(self) -> MatchSummary:
        """Its results without its deals, as the ``summaries`` table keeps them."""
        place = (self.match_id, self.round, self.table, self.rotation, self.seed)
        return summarize(place, self.status, self.record, self.faults)


@dataclass(frozen=True, slots=True)
class Owner:
    """The league whose results a database holds, as its ``meta`` table says."""

    name: str | None
    league_file: Path | None
    """The league file that last ran it (recorded relative to the database's folder), or ``None`` for a
    database made before it was recorded."""


class Store:
    """One league's results database. ``write=False`` opens it for reading only: nothing is created,
    converted or written. ``exclusive`` holds the league's :class:`RunLock` until :meth:`close`, so that
    no other run plays the league meanwhile.

    Every opening runs SQLite's ``quick_check`` first: a damaged file raises :class:`StorageError`
    before any of it is read. So does any ``sqlite3`` error later on (a full disk while storing a
    match): a failed write leaves the file as it was before it."""

    def __init__(self, path: Path, write: bool = True, exclusive: bool = False) -> None:
        self.path = path
        self.lock: RunLock | None = None
        self._db: sqlite3.Connection | None = None
        self._complete: set[str] | None = None
        """The complete matches' ids, kept by the one writer (an ``exclusive`` store) as it saves and
        deletes, so that a served league's planning after each match does not read every stored id."""
        try:
            if write:
                path.parent.mkdir(parents=True, exist_ok=True)
            if exclusive:
                self.lock = RunLock.take(path)
            self._db = connect(path, write, isolation_level=None)
            self._open(write)
        except OSError as exc:  # the lock file cannot be made
            self.close()
            fault = StorageFault.FULL if exc.errno == errno.ENOSPC else StorageFault.READ_ONLY
            raise StorageError(path, fault, f"{exc.strerror or exc} ({exc.filename or path})") from None
        except sqlite3.Error as exc:
            self.close()
            raise storage_error(path, exc) from None
        except BaseException:
            self.close()
            raise

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError(f"{self.path}: the results database was closed")
        return self._db

    def _open(self, write: bool) -> None:
        tables = {str(row[0]) for row in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if tables and "meta" not in tables:
            raise StoreError(
                f"{self.path}: an SQLite database of something else, with no results in it (its tables: "
                f"{', '.join(sorted(tables)[:5])}); point database: at another file"
            )
        self.db.execute("PRAGMA foreign_keys=ON")
        version = self._meta("schema_version")
        if version is not None and int(version) not in READABLE_VERSIONS:
            raise StoreError(
                f"{self.path}: results schema version {version}, this referee reads versions "
                f"{READABLE_VERSIONS[0]} to {READABLE_VERSIONS[-1]}; point database: at another file"
            )
        if not write:
            return
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        if version is None:
            self.db.executescript(SCHEMA)
            with self.transaction():
                self._set_meta("schema_version", str(SCHEMA_VERSION))
        else:  # added after schema version 1 was out: files made before lack them
            self.db.execute(DISQUALIFIED)
            self.db.execute(SUMMARIES)
        for statement in DEBUG_LINES:  # added within version 2: files made before lack it
            self.db.execute(statement)
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(entrants)")}
        if "fingerprint" not in columns:
            self.db.execute("ALTER TABLE entrants ADD COLUMN fingerprint TEXT NOT NULL DEFAULT ''")
        if version is not None and int(version) < 2:
            self._credit_seats()
        self._fill_summaries()

    def _credit_seats(self) -> None:
        """Version 1 to 2, in one transaction: ``seats.credited``, each stored seat's credited total (its
        total, unless it forfeited), from the stored records."""
        with self.transaction() as db:
            db.execute("ALTER TABLE seats ADD COLUMN credited INTEGER NOT NULL DEFAULT 0")
            db.execute("UPDATE seats SET credited = total")
            forfeited = [row[0] for row in db.execute("SELECT DISTINCT match_id FROM seats WHERE forfeited")]
            for match_id, match in self.matches(forfeited).items():
                db.executemany(
                    "UPDATE seats SET credited = ? WHERE match_id = ? AND seat = ?",
                    [(points, match_id, seat) for seat, points in enumerate(match.record.credited_totals)],
                )
            self._set_meta("schema_version", str(SCHEMA_VERSION))

    def _fill_summaries(self) -> None:
        """Summarizes the stored matches that have no summary (stored by a referee from before them, or
        of another summary format), one at a time so that memory stays flat, in transactions of
        :data:`FILL_BATCH`; an interrupted fill is taken up by the next opening."""
        missing = [(str(row[0]), int(row[6])) for row in self.db.execute(JOINED) if from_row(row) is None]
        for start in range(0, len(missing), FILL_BATCH):
            summaries = []
            for match_id, chars in missing[start : start + FILL_BATCH]:
                with contextlib.suppress(StorageError):  # an undecodable record: reads say so, as before
                    summaries.append((match_id, self.match(match_id).summary.to_json(chars)))
            with self.transaction() as db:
                db.executemany("INSERT OR REPLACE INTO summaries VALUES (?, ?)", summaries)

    def close(self) -> None:
        """Closes the database and lets go of the run lock; a second call does nothing."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None
        if self.lock is not None:
            self.lock.release()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``; anything that fails in between, the ``COMMIT`` itself
        included (a full disk), rolls the whole transaction back."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:  # SQLite may have rolled back already (a full disk can)
                with contextlib.suppress(sqlite3.Error):
                    self.db.execute("ROLLBACK")
            raise

    def _meta(self, key: str) -> str | None:
        exists = self.db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
        if not exists:
            return None
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    @_guarded
    def meta(self, key: str) -> str | None:
        """A value of the ``meta`` table (``settings``, ``secret_seed``, …), or ``None``; never writes."""
        return self._meta(key)

    @_guarded
    def match_count(self) -> int:
        """How many matches are stored (complete or void); 0 for a file with no results table yet."""
        if self._meta("schema_version") is None:
            return 0
        return int(self.db.execute("SELECT count(*) FROM matches").fetchone()[0])

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def _deleted(self) -> None:
        """Counts a deletion of stored matches (``meta`` key ``deletions``), in its transaction: what tells
        a reader that follows the results (:meth:`summaries_since`) to read them all again; the complete
        ids this store kept are read again too."""
        self._complete = None
        self._set_meta("deletions", str(int(self._meta("deletions") or 0) + 1))

    @_guarded
    def owner(self) -> Owner:
        recorded = self._meta("league_file")
        return Owner(
            self._meta("league"), None if recorded is None else (self.path.parent / recorded).resolve()
        )

    @_guarded
    def claim(self, league_file: Path, name: str, settings: str) -> None:
        """Raises :class:`OtherLeagueError` if this database holds another league's results: those of
        another league file that still exists, or (its recorded league file gone, or none recorded in a
        database made before it was) of a league of another name and other settings. A league whose
        file was renamed or moved keeps its database. Never writes."""
        if self._meta("settings") is None:
            return  # nothing bound yet: any league may have it
        owner = self.owner()
        league_file = league_file.resolve()
        if owner.league_file is not None and owner.league_file.exists():
            if owner.league_file == league_file:
                return
        elif owner.name == name or self._meta("settings") == settings:
            return
        made_by = f"league file {owner.league_file}" if owner.league_file is not None else "another file"
        gone = " (now gone)" if owner.league_file is not None and not owner.league_file.exists() else ""
        default = league_file.with_suffix(".sqlite")
        leave_out = f" (leave it out to use {default.name})" if self.path != default else ""
        raise OtherLeagueError(
            f"{self.path} holds the results of another league, {owner.name!r} of {made_by}{gone}, and no "
            f"command of {league_file.name} changes it (--fresh neither); set database: in {league_file} "
            f"to a file of its own{leave_out}"
        )

    @_guarded
    def bind(self, league_name: str, settings: str, league_file: Path) -> None:
        """Ties this file to a league file and its result-changing settings (seed, players, rules, time
        control, faults). A file made under other settings is refused: :meth:`forget` first."""
        with self.transaction():
            stored = self._meta("settings")
            if stored is not None and stored != settings:
                raise self.other_settings()
            self._set_meta("settings", settings)
            self._set_meta("league", league_name)
            self._set_meta("league_file", relative_league_file(self.path, league_file.resolve()))

    def other_settings(self) -> StoreError:
        return StoreError(
            f"{self.path} holds results of other league settings (seed, players, rules, time control "
            "or faults changed); run with --fresh to start over (a copy of them is kept beside it), or "
            "point database: at a new file"
        )

    @_guarded
    def forget(self, backup: Path) -> int:
        """Empties the database of its results (``--fresh``), keeping a whole copy of it at ``backup``
        first when it holds any match; returns how many matches it held. The copy is written under a
        temporary name and renamed once complete, so a failed copy (a full disk) leaves no half file and
        nothing forgotten."""
        count = self.match_count()
        if count:
            partial = backup.with_name(backup.name + ".partial")
            try:
                self.db.execute("VACUUM INTO ?", (str(partial),))
                os.replace(partial, backup)
            except OSError as exc:
                partial.unlink(missing_ok=True)
                fault = StorageFault.FULL if exc.errno == errno.ENOSPC else StorageFault.IO
                raise StorageError(
                    self.path, fault, f"cannot keep a copy at {backup}: {exc.strerror}"
                ) from None
            except BaseException:
                partial.unlink(missing_ok=True)
                raise
        with self.transaction():
            for table in (*RESULT_TABLES, "entrants", "disqualified"):
                self.db.execute(f"DELETE FROM {table}")
            self.db.execute("DELETE FROM meta WHERE key IN ('settings', 'cohorts')")
            self._deleted()
        return count

    @_guarded
    def secret_seed(self, renew: bool = False) -> int:
        """The league's secret seed, drawn on first use (or when ``renew``) and kept in ``meta``."""
        with self.transaction():
            stored = self._meta("secret_seed")
            if stored is None or renew:
                stored = str(secrets.randbits(63))
                self._set_meta("secret_seed", stored)
        return int(stored)

    @_guarded
    def cohorts(self) -> tuple[tuple[str, ...], ...]:
        """The groups in which the league's entrants joined it, in that order (``meta`` key
        ``cohorts``); never writes. A sampled schedule keeps each group's tables when another joins."""
        stored = self.meta("cohorts")
        return tuple(tuple(cohort) for cohort in json.loads(stored)) if stored else ()

    @_guarded
    def set_cohorts(self, cohorts: tuple[tuple[str, ...], ...]) -> None:
        with self.transaction():
            self._set_meta("cohorts", json.dumps([list(cohort) for cohort in cohorts]))

    @_guarded
    def set_entrants(self, entrants: list[tuple[str, str, str]]) -> None:
        with self.transaction():
            self.db.executemany(
                "INSERT INTO entrants (name, kind, source) VALUES (?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, source = excluded.source",
                entrants,
            )

    @_guarded
    def new_versions(self, fingerprints: dict[str, str]) -> dict[str, list[str]]:
        """The entrants whose stored matches were played by another version of their bot (a stored
        fingerprint that differs), each with the ids of those matches in schedule order."""
        stored = dict(self.db.execute("SELECT name, fingerprint FROM entrants WHERE fingerprint != ''"))
        changed = {}
        for name, current in fingerprints.items():
            if stored.get(name, current) != current:
                changed[name] = [
                    str(row[0])
                    for row in self.db.execute(
                        "SELECT DISTINCT m.match_id, m.position FROM matches m JOIN seats s "
                        "ON s.match_id = m.match_id WHERE s.entrant = ? ORDER BY m.position",
                        (name,),
                    )
                ]
        return changed

    @_guarded
    def set_versions(self, fingerprints: dict[str, str], invalid: list[str]) -> None:
        """Deletes the stored matches of the entrants in ``invalid`` (a later run plays them again) and
        records every entrant's fingerprint, in one transaction."""
        with self.transaction():
            for name in invalid:
                self.db.execute(
                    "DELETE FROM matches WHERE match_id IN (SELECT match_id FROM seats WHERE entrant = ?)",
                    (name,),
                )
            if invalid:
                self._deleted()
            self.db.executemany(
                "UPDATE entrants SET fingerprint = ? WHERE name = ?",
                [(value, name) for name, value in fingerprints.items()],
            )

    @_guarded
    def set_disqualified(self, disqualified: dict[str, str]) -> None:
        """Records these entrants as disqualified (others' rows stay until their bot starts)."""
        now = time.time()
        with self.transaction():
            self.db.executemany(
                "INSERT OR REPLACE INTO disqualified (name, reason, at) VALUES (?, ?, ?)",
                [(name, reason, now) for name, reason in disqualified.items()],
            )

    @_guarded
    def clear_disqualified(self, name: str) -> None:
        self.db.execute("DELETE FROM disqualified WHERE name = ?", (name,))

    @_guarded
    def disqualified(self) -> dict[str, str]:
        """The entrants disqualified by the last run that tried them, with the reason; never writes."""
        exists = self.db.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='disqualified'"
        ).fetchone()
        if not exists:
            return {}
        rows = self.db.execute("SELECT name, reason FROM disqualified ORDER BY name")
        return {str(name): str(reason) for name, reason in rows}

    @_guarded
    def match_seconds(self) -> list[float]:
        """How long each stored complete match took to play, in seconds; never writes."""
        if self.meta("schema_version") is None:
            return []
        return [row[0] for row in self.db.execute("SELECT elapsed FROM matches WHERE status = 'complete'")]

    @_guarded
    def complete_ids(self) -> AbstractSet[str]:
        """The ids of the complete stored matches. An ``exclusive`` store, which no other process writes,
        reads them once and then keeps them as it saves and deletes (:attr:`_complete`): what it returns
        is that set itself, not a copy (a copy cost each served match a pass over every stored id), and
        it follows the saves; the same set until matches are deleted, when a new one is read."""
        if self._complete is not None:
            return self._complete
        ids = {row[0] for row in self.db.execute("SELECT match_id FROM matches WHERE status = 'complete'")}
        if self.lock is not None:
            self._complete = ids
        return ids

    @_guarded
    def save(self, scheduled: ScheduledMatch, outcome: MatchOutcome, started_at: float) -> None:
        """Stores one finished (or void) match in one transaction, replacing an earlier void attempt."""
        record = outcome.record
        text = record.to_json()
        with self.transaction() as db:
            db.execute("DELETE FROM matches WHERE match_id = ?", (scheduled.match_id,))
            db.execute(
                "INSERT INTO matches VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    scheduled.match_id,
                    scheduled.position,
                    scheduled.round,
                    scheduled.table,
                    scheduled.rotation,
                    scheduled.seed,
                    str(outcome.status),
                    outcome.void_reason,
                    started_at,
                    time.time(),
                    outcome.elapsed,
                    text,
                ),
            )
            credited = record.credited_totals
            db.executemany(
                "INSERT INTO seats (match_id, seat, entrant, total, rank, forfeited, decisions, "
                "think_seconds, credited) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        scheduled.match_id,
                        seat,
                        name,
                        record.totals[seat],
                        record.ranks[seat],
                        int(seat in record.forfeits),
                        len(outcome.latencies[seat]) if outcome.latencies else 0,
                        sum(outcome.latencies[seat]) if outcome.latencies else 0.0,
                        credited[seat],
                    )
                    for seat, name in enumerate(scheduled.entrants)
                ],
            )
            db.executemany(
                "INSERT INTO deals VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        scheduled.match_id,
                        d.number,
                        d.dealer,
                        d.declarer,
                        d.declaration.tricks,
                        d.declaration.trump.code,
                        d.taken,
                        d.points,
                    )
                    for d in record.deals
                ],
            )
            db.executemany(
                "INSERT INTO tricks VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (scheduled.match_id, d.number, i, t.leader, " ".join(c.code for c in t.cards), t.winner)
                    for d in record.deals
                    for i, t in enumerate(d.tricks, start=1)
                ],
            )
            db.executemany(
                "INSERT INTO faults VALUES (?, ?, ?, ?, ?)",
                [(scheduled.match_id, f.seat, f.deal, str(f.kind), f.detail) for f in outcome.faults],
            )
            db.executemany(
                "INSERT INTO debug_lines VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        scheduled.match_id,
                        line.seat,
                        scheduled.entrants[line.seat],
                        line.deal,
                        line.step,
                        str(line.fate),
                        line.size,
                        line.text,
                    )
                    for line in outcome.debug
                ],
            )
            place = (scheduled.match_id, scheduled.round, scheduled.table, scheduled.rotation, scheduled.seed)
            summary = summarize(place, outcome.status, record, outcome.faults)
            db.execute(
                "INSERT INTO summaries VALUES (?, ?)", (scheduled.match_id, summary.to_json(len(text)))
            )
        if self._complete is not None:  # stored: the ids kept follow
            if outcome.status is MatchStatus.COMPLETE:
                self._complete.add(scheduled.match_id)
            else:
                self._complete.discard(scheduled.match_id)

    @_guarded
    def matches(self, ids: Collection[str] | None = None) -> dict[str, StoredMatch]:
        """Every stored match by id; with ``ids``, only those of them that are stored (decoding a
        record costs milliseconds: ``until: settled`` reads only each new batch's)."""
        where, args = (
            ("", ())
            if ids is None
            else (" WHERE match_id IN (SELECT value FROM json_each(?))", (json.dumps(list(ids)),))
        )
        faults: dict[str, list[Fault]] = {}
        for match_id, seat, deal, kind, detail in self.db.execute(
            f"SELECT match_id, seat, deal, kind, detail FROM faults{where} ORDER BY rowid", args
        ):
            try:
                fault = Fault(seat, deal, FaultKind(kind), detail)
            except ValueError:
                raise StorageError(
                    self.path, StorageFault.DAMAGED, f"a fault of match {match_id} does not decode"
                ) from None
            faults.setdefault(match_id, []).append(fault)
        seats: dict[str, list[tuple[int, float]]] = {}
        for match_id, decisions, think in self.db.execute(
            f"SELECT match_id, decisions, think_seconds FROM seats{where} ORDER BY match_id, seat", args
        ):
            seats.setdefault(match_id, []).append((decisions, think))
        stored = {}
        for match_id, round_number, table, rotation, seed, status, record in self.db.execute(
            f"SELECT match_id, round, table_number, rotation, seed, status, record FROM matches{where}", args
        ):
            per_seat = seats.get(match_id, [])
            try:
                decoded = _record(record, faults.get(match_id, ()))
                match_status = MatchStatus(status)
            except (RecordError, ValueError, TypeError):  # the bytes are not said: they may hold hands
                raise StorageError(
                    self.path, StorageFault.DAMAGED, f"the stored record of match {match_id} does not decode"
                ) from None
            stored[match_id] = StoredMatch(
                match_id,
                round_number,
                table,
                rotation,
                seed,
                match_status,
                decoded,
                tuple(faults.get(match_id, ())),
                tuple(d for d, _ in per_seat),
                tuple(t for _, t in per_seat),
            )
        return stored

    @_guarded
    def summaries(self) -> dict[str, MatchSummary]:
        """Every stored match's summary by id, in the order :meth:`matches` gives them, without decoding
        a deal. A match without a stored summary (a file from before them, read-only) is decoded alone
        and summarized: the result is the same either way."""
        return self._summaries("", ())

    @_guarded
    def summaries_since(self, after: int, again: Collection[str]) -> Since:
        """What a reader that follows the results (:class:`referee.results.following.Follower`) reads
        after a change: the summaries of the matches stored in a row after ``after`` (the largest row
        number it has read) and of the matches ``again`` (void ones, which a replay replaces, perhaps in
        the same row), with what tells it whether it missed a deletion. One read transaction: all of it
        is of one moment. Its cost is that of the matches read, not of those stored."""
        self.db.execute("BEGIN")
        try:
            last, count = self.db.execute("SELECT coalesce(max(rowid), 0), count(*) FROM matches").fetchone()
            marks = ",".join("?" * len(again))
            where = f" WHERE m.rowid > ? OR m.match_id IN ({marks})"
            found = self._summaries(where, (after, *again))
            return Since(found, int(last), int(count), int(self._meta("deletions") or 0))
        finally:
            self.db.execute("COMMIT")

    def _summaries(self, where: str, args: Sequence[object]) -> dict[str, MatchSummary]:
        has_table = self.db.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='summaries'"
        ).fetchone()
        rows = self.db.execute((JOINED if has_table else ROWS.format("NULL")) + where, args)
        summaries: dict[str, MatchSummary | None] = {str(row[0]): from_row(row) for row in rows}
        missing = [match_id for match_id, summary in summaries.items() if summary is None]
        for start in range(0, len(missing), FILL_BATCH):
            for match_id, match in self.matches(missing[start : start + FILL_BATCH]).items():
                summaries[match_id] = match.summary
        return {match_id: summary for match_id, summary in summaries.items() if summary is not None}

    def stream(self, ids: Sequence[str]) -> Iterator[StoredMatch]:
        """The stored matches ``ids``, decoded, in that order: what an export, a report's pages and a
        replay need. They are decoded :data:`STREAM_BATCH` at a time, so memory holds one batch however
        long the league. Raises :class:`StoreError` for one that is not stored (any more)."""
        for start in range(0, len(ids), STREAM_BATCH):
            batch = ids[start : start + STREAM_BATCH]
            decoded = self.matches(batch)
            for match_id in batch:
                if match_id not in decoded:
                    raise StoreError(f"{self.path}: no stored match {match_id!r}")
                yield decoded[match_id]

    def match(self, match_id: str) -> StoredMatch:
        """One stored match, decoded (:meth:`stream`)."""
        return next(self.stream([match_id]))

    @_guarded
    def write_ratings(self, history: list[tuple[int, str, str, float, float]]) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM ratings")
            db.executemany("INSERT INTO ratings VALUES (?, ?, ?, ?, ?)", history)


FILL_BATCH: Final = 100
"""Matches decoded at once (read) or summarized per transaction (a run's opening) when their stored
summary is missing."""
STREAM_BATCH: Final = 20
"""Matches :meth:`Store.stream` decodes at once: few enough to keep memory flat (a match decoded takes
about 0.2 MB), enough that the queries cost little beside the decoding."""


def _record(text: str, faults: Sequence[Fault]) -> MatchRecord:
    """A stored match record. One stored before records said in which deal a seat forfeited gets it
    from the seat's last fault (no fault is recorded for a seat after its forfeit), as an export of it
    read by :meth:`MatchRecord.from_dict` would."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"not a match record: {exc}") from exc
    if isinstance(data, dict) and "forfeit_deals" not in data:
        data["faults"] = [fault.to_dict() for fault in faults]
    return MatchRecord.from_dict(data)
