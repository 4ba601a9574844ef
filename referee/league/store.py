"""Results in SQLite: one file per league, WAL mode, one transaction per finished match.

A match is either stored whole (its row, seats, deals, tricks and faults together) or not at all, so a
referee killed at any moment leaves a consistent file and the next run plays only what is missing. The
full match record is kept as JSON beside the tables, so exports and replays are exact; the tables are for
queries (leaderboards, reports, your own SQL).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pyramid_sdk.record import MatchRecord, RecordError
from referee.league.schedule import ScheduledMatch
from referee.match.faults import Fault, FaultKind
from referee.match.outcome import MatchOutcome, MatchStatus

SCHEMA_VERSION: Final = 2
"""2 added ``seats.credited`` (docs/RULES.md, "Forfeits"). A version 1 file is read as it is and brought
to version 2 when a run opens it for writing; an older referee refuses a version 2 file in one line
instead of writing rows it does not know."""
READABLE_VERSIONS: Final = (1, 2)

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entrants (name TEXT PRIMARY KEY, kind TEXT NOT NULL, source TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
    match_id TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    round INTEGER NOT NULL,
    table_number INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('complete', 'void')),
    void_reason TEXT NOT NULL DEFAULT '',
    started_at REAL NOT NULL,
    finished_at REAL NOT NULL,
    elapsed REAL NOT NULL,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS seats (
    match_id TEXT NOT NULL REFERENCES matches ON DELETE CASCADE,
    seat INTEGER NOT NULL,
    entrant TEXT NOT NULL,
    total INTEGER NOT NULL,
    rank INTEGER NOT NULL,
    forfeited INTEGER NOT NULL,
    decisions INTEGER NOT NULL,
    think_seconds REAL NOT NULL,
    credited INTEGER NOT NULL,
    PRIMARY KEY (match_id, seat)
);
CREATE TABLE IF NOT EXISTS deals (
    match_id TEXT NOT NULL REFERENCES matches ON DELETE CASCADE,
    number INTEGER NOT NULL,
    dealer INTEGER NOT NULL,
    declarer INTEGER NOT NULL,
    declared INTEGER NOT NULL,
    trump TEXT NOT NULL,
    taken INTEGER NOT NULL,
    points INTEGER NOT NULL,
    PRIMARY KEY (match_id, number)
);
CREATE TABLE IF NOT EXISTS tricks (
    match_id TEXT NOT NULL REFERENCES matches ON DELETE CASCADE,
    deal INTEGER NOT NULL,
    number INTEGER NOT NULL,
    leader INTEGER NOT NULL,
    cards TEXT NOT NULL,
    winner INTEGER NOT NULL,
    PRIMARY KEY (match_id, deal, number)
);
CREATE TABLE IF NOT EXISTS faults (
    match_id TEXT NOT NULL REFERENCES matches ON DELETE CASCADE,
    seat INTEGER NOT NULL,
    deal INTEGER NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS disqualified (name TEXT PRIMARY KEY, reason TEXT NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS ratings (
    position INTEGER NOT NULL,
    match_id TEXT NOT NULL,
    entrant TEXT NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    PRIMARY KEY (position, entrant)
);
"""


DISQUALIFIED: Final = (
    "CREATE TABLE IF NOT EXISTS disqualified (name TEXT PRIMARY KEY, reason TEXT NOT NULL, at REAL NOT NULL)"
)
"""Entrants disqualified by the last run that tried them (their bot did not build or start), with the
reason; an entrant's row goes when a later run starts its bot. No match is stored for a disqualification."""


RESULT_TABLES: Final = ("faults", "tricks", "deals", "seats", "ratings", "matches")


class StoreError(RuntimeError):
    """A results file that this league cannot use; the message says why and what to do."""


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


class Store:
    def __init__(self, path: Path, write: bool = True) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(path, isolation_level=None, timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            version = self._meta("schema_version")
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{path}: not a results database ({exc}); point database: at another file"
            ) from None
        if version is not None and int(version) not in READABLE_VERSIONS:
            raise StoreError(
                f"{path}: results schema version {version}, this referee reads versions "
                f"{READABLE_VERSIONS[0]} to {READABLE_VERSIONS[-1]}; point database: at another file"
            )
        if version is None and write:
            self.db.executescript(SCHEMA)
            with self.transaction():
                self._set_meta("schema_version", str(SCHEMA_VERSION))
        elif write:  # added after schema version 1 was out: files made before lack them
            self.db.execute(DISQUALIFIED)
        if write:
            columns = {row[1] for row in self.db.execute("PRAGMA table_info(entrants)")}
            if "fingerprint" not in columns:
                self.db.execute("ALTER TABLE entrants ADD COLUMN fingerprint TEXT NOT NULL DEFAULT ''")
            if version is not None and int(version) < 2:
                self._credit_seats()

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

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def _meta(self, key: str) -> str | None:
        exists = self.db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
        if not exists:
            return None
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def meta(self, key: str) -> str | None:
        """A value of the ``meta`` table (``settings``, ``secret_seed``, …), or ``None``; never writes."""
        return self._meta(key)

    def match_count(self) -> int:
        """How many matches are stored (complete or void); 0 for a file with no results table yet."""
        if self.meta("schema_version") is None:
            return 0
        return int(self.db.execute("SELECT count(*) FROM matches").fetchone()[0])

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def bind(self, league_name: str, settings: str, fresh: bool) -> None:
        """Ties this file to a league's result-changing settings (seed, players, rules, time control,
        faults). A file made under other settings is refused, or emptied with ``fresh``."""
        with self.transaction():
            stored = self._meta("settings")
            if stored is not None and stored != settings and not fresh:
                raise self.other_settings()
            if fresh:
                for table in (*RESULT_TABLES, "entrants", "disqualified"):
                    self.db.execute(f"DELETE FROM {table}")
            self._set_meta("settings", settings)
            self._set_meta("league", league_name)

    def other_settings(self) -> StoreError:
        return StoreError(
            f"{self.path} holds results of other league settings (seed, players, rules, time control "
            "or faults changed); run with --fresh to start over, or point database: at a new file"
        )

    def secret_seed(self, renew: bool = False) -> int:
        """The league's secret seed, drawn on first use (or when ``renew``) and kept in ``meta``."""
        with self.transaction():
            stored = self._meta("secret_seed")
            if stored is None or renew:
                stored = str(secrets.randbits(63))
                self._set_meta("secret_seed", stored)
        return int(stored)

    def cohorts(self) -> tuple[tuple[str, ...], ...]:
        """The groups in which the league's entrants joined it, in that order (``meta`` key
        ``cohorts``); never writes. A sampled schedule keeps each group's tables when another joins."""
        stored = self.meta("cohorts")
        return tuple(tuple(cohort) for cohort in json.loads(stored)) if stored else ()

    def set_cohorts(self, cohorts: tuple[tuple[str, ...], ...]) -> None:
        with self.transaction():
            self._set_meta("cohorts", json.dumps([list(cohort) for cohort in cohorts]))

    def set_entrants(self, entrants: list[tuple[str, str, str]]) -> None:
        with self.transaction():
            self.db.executemany(
                "INSERT INTO entrants (name, kind, source) VALUES (?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, source = excluded.source",
                entrants,
            )

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

    def set_versions(self, fingerprints: dict[str, str], invalid: list[str]) -> None:
        """Deletes the stored matches of the entrants in ``invalid`` (a later run plays them again) and
        records every entrant's fingerprint, in one transaction."""
        with self.transaction():
            for name in invalid:
                self.db.execute(
                    "DELETE FROM matches WHERE match_id IN (SELECT match_id FROM seats WHERE entrant = ?)",
                    (name,),
                )
            self.db.executemany(
                "UPDATE entrants SET fingerprint = ? WHERE name = ?",
                [(value, name) for name, value in fingerprints.items()],
            )

    def set_disqualified(self, disqualified: dict[str, str]) -> None:
        """Records these entrants as disqualified (others' rows stay until their bot starts)."""
        now = time.time()
        with self.transaction():
            self.db.executemany(
                "INSERT OR REPLACE INTO disqualified (name, reason, at) VALUES (?, ?, ?)",
                [(name, reason, now) for name, reason in disqualified.items()],
            )

    def clear_disqualified(self, name: str) -> None:
        self.db.execute("DELETE FROM disqualified WHERE name = ?", (name,))

    def disqualified(self) -> dict[str, str]:
        """The entrants disqualified by the last run that tried them, with the reason; never writes."""
        exists = self.db.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='disqualified'"
        ).fetchone()
        if not exists:
            return {}
        rows = self.db.execute("SELECT name, reason FROM disqualified ORDER BY name")
        return {str(name): str(reason) for name, reason in rows}

    def match_seconds(self) -> list[float]:
        """How long each stored complete match took to play, in seconds; never writes."""
        if self.meta("schema_version") is None:
            return []
        return [row[0] for row in self.db.execute("SELECT elapsed FROM matches WHERE status = 'complete'")]

    def complete_ids(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT match_id FROM matches WHERE status = 'complete'")}

    def save(self, scheduled: ScheduledMatch, outcome: MatchOutcome, started_at: float) -> None:
        """Stores one finished (or void) match in one transaction, replacing an earlier void attempt."""
        record = outcome.record
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
                    record.to_json(),
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
            faults.setdefault(match_id, []).append(Fault(seat, deal, FaultKind(kind), detail))
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
            stored[match_id] = StoredMatch(
                match_id,
                round_number,
                table,
                rotation,
                seed,
                MatchStatus(status),
                _record(record, faults.get(match_id, ())),
                tuple(faults.get(match_id, ())),
                tuple(d for d, _ in per_seat),
                tuple(t for _, t in per_seat),
            )
        return stored

    def write_ratings(self, history: list[tuple[int, str, str, float, float]]) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM ratings")
            db.executemany("INSERT INTO ratings VALUES (?, ?, ?, ?, ?)", history)


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


def settings_fingerprint(data: dict[str, object]) -> str:
    return json.dumps(data, sort_keys=True)
