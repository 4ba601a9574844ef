"""What the pages and the API read, as a reader process of ``referee serve`` runs it
(:mod:`referee.web.readers`): every read of the results database and every page rendered.

They run here, in processes of their own at a lower CPU priority, and not in the server's process,
because they are Python work that holds the interpreter's lock: in a thread of the process that plays,
every one of them would slow the matches (a thread that computes makes each wake-up of the event loop
wait its turn), and a flood of requests would stop play. Here a read costs the play only the bytes of
its answer.

A reader process reads requests on its standard input and writes the answers on its standard output,
each a pickle after its length (8 bytes, big-endian); it runs one at a time. Each answer is
``("ok", value)`` or ``("error", one line)``. ``python -m referee.web.reads`` is a reader process.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import sys
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO, Final

from referee.league.config import League
from referee.league.location import practice_path
from referee.league.versions import fingerprint
from referee.report.on_request import OnRequest
from referee.report.records import RecordedMatch
from referee.report.site import match_page
from referee.report.text import export_lines, leaderboard_json
from referee.results.debug import debug_lines
from referee.results.disclosure import table_key
from referee.results.errors import StoreError
from referee.results.following import Follower
from referee.results.history import VersionArchive, archive_path, as_json, rating_of, summary
from referee.results.own import OwnFault, own_faults
from referee.results.reading import Standings
from referee.web.human_store import HumanStore
from referee.web.pages import is_page_name, with_live_script
from referee.web.practice_store import PracticeStore
from referee.web.readers import LENGTH

VERSION: Final = 1
"""The API's version, in every answer of its collections."""
READ_TRIES: Final = 3
SUMMARY_DROPS: Final = ("deals",)
"""What the list of matches leaves out of each exported match: it is for one match's answer."""
PAGE: Final = 100
"""Matches on a page of ``/api/v1/matches`` when the request names no ``limit``."""
MOST_ON_A_PAGE: Final = 1000
"""The largest ``limit`` of a page; a larger one is taken as this."""

LOGGER = logging.getLogger(__name__)


_REPORTS: Final[dict[Path, OnRequest]] = {}
"""The report of each league this process renders pages of, by database: what its pages were rendered
from is kept, and only what changed is rendered again."""
_FOLLOWERS: Final[dict[Path, Follower]] = {}
"""The results this process follows, by database: each read after a change reads only what changed."""


@dataclass
class _Latest:
    """The last results this process read, by (database, seed, state): the answers after one match
    share one read."""

    key: tuple[Path, int, int] | None = None
    results: Standings | None = None


_LATEST: Final = _Latest()


def _follower(league: League) -> Follower:
    follower = _FOLLOWERS.get(league.database)
    if follower is None:
        follower = _FOLLOWERS[league.database] = Follower(league.database)
    return follower


def encoded(value: object) -> bytes:
    """JSON as the API writes it (as Starlette's ``JSONResponse`` does)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def results(league: League, seed: int, state: int) -> Standings:
    """The standings of ``state`` (the server's count of changes to the results), read once per state
    in this process."""
    key = (league.database, seed, state)
    if _LATEST.results is None or _LATEST.key != key:
        _LATEST.key, _LATEST.results = key, _follower(league).read(league, seed)
    return _LATEST.results


def leaderboard(league: League, seed: int, state: int) -> bytes:
    rows = json.loads(leaderboard_json(results(league, seed, state).board, league))
    return encoded({"version": VERSION, "league": league.name, "standings": rows})


def exported(
    league: League,
    seed: int,
    state: int,
    only: Collection[str] | None = None,
    tries: int = READ_TRIES,
) -> list[dict[str, Any]]:
    """The stored matches (or those ``only``) as ``referee export`` writes them, in schedule order; only
    those are decoded. The summaries and the records are two reads: a new version's matches deleted in
    between (the driver replays them) make the second miss one, and the whole is read again."""
    read = results(league, seed, state)
    follower = _follower(league)
    try:
        lines = export_lines(league, read.schedule, read.stored, follower.opened().stream, only=only)
        return [json.loads(line) for line in lines]
    except StoreError:
        follower.close()
        if tries <= 1:
            raise
    _LATEST.results = None
    return exported(league, seed, state, only, tries - 1)


def matches(
    league: League, seed: int, state: int, after: str | None = None, limit: int = PAGE
) -> tuple[bytes, str | None] | None:
    """A page of the stored matches in schedule order, without their deals: at most ``limit`` of them,
    from the first or from the one after the stored match ``after``, as their list in JSON and the
    cursor of the next page (the last match's id; ``None`` on the last page); ``None`` when ``after`` is
    no stored match. Only the matches of the page are decoded, so a page costs the same in a league of
    ten thousand matches as in one of a hundred. (A tuple, not a class of this module's: a reader runs
    it as ``__main__``, whose classes the server could not unpickle.)"""
    read = results(league, seed, state)
    ids = [scheduled.match_id for scheduled in read.schedule if scheduled.match_id in read.stored]
    start = 0
    if after is not None:
        if after not in read.stored:
            return None
        start = ids.index(after) + 1
    wanted = ids[start : start + max(1, min(limit, MOST_ON_A_PAGE))]
    lines = exported(league, seed, state, only=set(wanted)) if wanted else []
    listed = encoded([{k: v for k, v in line.items() if k not in SUMMARY_DROPS} for line in lines])
    more = start + len(wanted) < len(ids)
    return listed, wanted[-1] if more and wanted else None


def one_match(league: League, seed: int, state: int, match_id: str) -> bytes | None:
    found = exported(league, seed, state, only={match_id})
    return encoded(found[0]) if found else None


def standings(league: League, seed: int, state: int) -> dict[str, dict[str, Any]]:
    """Each rated entrant's rank, rating and matches."""
    return {
        s.entrant: {"rank": s.rank, "mu": s.mu, "sigma": s.sigma, "matches": s.matches}
        for s in results(league, seed, state).board.standings
    }


def entrant(league: League, seed: int, state: int, name: str) -> bytes | None:
    """One entrant and each version's results: the one playing now, then the replaced ones."""
    if name not in {e.name for e in league.entrants}:
        return None
    read = results(league, seed, state)
    found = league.entrant(name)
    mu, sigma, trajectory = rating_of(name, read.board.history)
    now = summary(name, found.version or fingerprint(found)[:8], read.stored.values())
    now = replace(now, mu=mu, sigma=sigma, trajectory=trajectory)
    earlier = VersionArchive(archive_path(league)).of(name)
    return encoded({"version": VERSION, "name": name, "versions": [as_json(v) for v in (now, *earlier)]})


OWN_LIMIT: Final = 200
"""Faults and debug lines an author's page lists at most, the latest first."""


def own(league: League, seed: int, state: int, name: str) -> bytes | None:
    """What ``name``'s author may read of its own bot (``/api/v1/me``): each version's results and
    rating, its latest faults in full and debug lines, and its practice matches. Those of a table still
    being played are held back, counted, since the table's other matches deal the same cards
    (docs/SECURITY.md): only their number is said."""
    versions = entrant(league, seed, state, name)
    if versions is None:
        return None
    read = results(league, seed, state)
    store = _follower(league).opened()
    done = store.complete_ids()
    pending = {table_key(m) for m in read.schedule if m.match_id not in done}
    faults = own_faults(store, name, OWN_LIMIT)
    lines = debug_lines(store, name, limit=OWN_LIMIT)
    seeds = {m.match_id: m.seed for m in read.schedule}
    shown_faults = [f for f in faults if f.seed not in pending]
    shown_lines = [d for d in lines if seeds.get(d.match_id) not in pending]
    practice = PracticeStore(practice_path(league.database)).of(name, OWN_LIMIT)
    return encoded(
        {
            **json.loads(versions),
            "faults": [_fault(f) for f in shown_faults],
            "faults_held_back": len(faults) - len(shown_faults),
            "debug": [{**asdict(d), "fate": str(d.fate)} for d in reversed(shown_lines)],
            "debug_held_back": len(lines) - len(shown_lines),
            "practice": [
                {
                    "key": key,
                    "finished": when,
                    "seats": line.get("seats"),
                    "totals": line.get("totals"),
                    "replay": f"/practice/{key}",
                }
                for key, when, line in practice
            ],
        }
    )


def _fault(fault: OwnFault) -> dict[str, Any]:
    """A fault as the author's page lists it: its match (and place in the schedule, from 1), deal, kind
    and detail."""
    return {
        "match_id": fault.match_id,
        "position": fault.position + 1,
        "deal": fault.deal,
        "kind": fault.kind,
        "detail": fault.detail,
    }


def page(league: League, seed: int, state: int, name: str) -> bytes | None:
    """A page of the report, rendered now from the results of ``state`` (only what changed since this
    process last rendered it: :class:`~referee.report.on_request.OnRequest`), with the live script;
    ``None`` when there is no such page (a name that could not be one, or no page of the report)."""
    if not is_page_name(name):
        return None
    follower = _follower(league)
    read = results(league, seed, state)
    report = _REPORTS.setdefault(league.database, OnRequest())
    try:
        html = report.page(league, read, (seed, state), follower.opened().stream, name)
    except StoreError:
        follower.close()
        raise
    return None if html is None else with_live_script(html).encode()


def human_lines(path: Path) -> list[tuple[int, float, dict[str, Any]]]:
    """The human matches played (:class:`referee.web.human_store.HumanStore`)."""
    return HumanStore(path).lines()


def human_line(path: Path, number: int) -> bytes | None:
    line = HumanStore(path).line(number)
    return None if line is None else encoded(line)


def human_replay(path: Path, number: int) -> bytes | None:
    """A human match's replay page; raises what makes it unshowable."""
    return _replay_page(HumanStore(path).replayable(number))


def practice_replay(path: Path, key: str) -> bytes | None:
    """A practice match's replay page, by the key its author holds; raises what makes it unshowable."""
    store = PracticeStore(path)
    number = store.number(key)
    return None if number is None else _replay_page(store.replayable(number))


def _replay_page(recorded: RecordedMatch | None) -> bytes | None:
    if recorded is None:
        return None
    assert recorded.seed is not None
    page = match_page(recorded.record, recorded.faults, recorded.status, recorded.seed, linked=True)
    return page.encode()


def ready() -> bool:
    """Answers once the process is up: the server waits for it before it serves."""
    return True


JOBS: Final[dict[str, Callable[..., Any]]] = {
    job.__name__: job
    for job in (
        leaderboard,
        matches,
        one_match,
        standings,
        entrant,
        own,
        page,
        human_lines,
        human_line,
        human_replay,
        practice_replay,
        ready,
    )
}
"""What a reader process runs, by name."""


def _read(stream: BinaryIO) -> bytes | None:
    head = stream.read(LENGTH)
    if len(head) < LENGTH:
        return None
    return stream.read(int.from_bytes(head, "big"))


def _write(stream: BinaryIO, value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(len(data).to_bytes(LENGTH, "big") + data)
    stream.flush()


def serve(requests: BinaryIO, answers: BinaryIO, niceness: int) -> None:
    """Answers requests until the server closes the pipe."""
    os.nice(niceness)
    while (request := _read(requests)) is not None:
        name, args = pickle.loads(request)
        try:
            value: object = ("ok", JOBS[name](*args))
        except Exception as exc:  # the server says it in one line (and logs it); the reader goes on
            value = ("error", f"{type(exc).__name__}: {exc}")
        try:
            _write(answers, value)
        except BrokenPipeError:  # the server is gone: nobody to answer
            return


def main() -> None:
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print goes to the log, never into the answers
    serve(sys.stdin.buffer, answers, int(sys.argv[1]) if len(sys.argv) > 1 else 0)


if __name__ == "__main__":
    main()
