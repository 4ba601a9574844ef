"""A league's stored results opened for reading only: what ``leaderboard``, ``export``, ``replay``,
``report`` and ``matches`` show; the standings of stored results (:func:`standings`, the one way every
reader computes them: the commands, the report, the web API and the analysis); and what the database
keeps of the league itself (its secret seed, the cohorts in which its entrants joined), which a run reads
too.

Reading never writes: no database is created for a league that was never run, no secret seed is drawn,
no settings are bound. A league with nothing stored yet is :class:`NothingPlayedError`, which says which
command plays it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from referee.league.confidence import Fragility, fragility
from referee.league.config import League
from referee.league.planning import league_settings, plan_of, schedule_of, with_cohorts
from referee.league.ratings import Fold, Leaderboard, rate, rated_games
from referee.league.schedule import ScheduledMatch
from referee.league.summary import Summarized
from referee.results.errors import StoreError
from referee.results.store import Store

if TYPE_CHECKING:
    from referee.league.adaptive import Settlement  # loaded by plan_of, for a league that needs it


def known_seed(league: League, store: Store) -> int | None:
    """The seed of ``league``'s results: the file's own, else the secret one its database keeps (``None``
    until a run draws it). The one rule for a league's seed, for reading and running alike; the seed
    stays beside the league, never in it, so that a :class:`League` is always what its file says."""
    if league.seed is not None:
        return league.seed
    secret = store.meta("secret_seed")
    return None if secret is None else int(secret)


def joined(store: Store, league: League) -> tuple[tuple[str, ...], ...]:
    """The league's entrants in the groups in which they joined it (``Design.cohorts``): those the
    database knows, then the league's other entrants as one more group. While nothing is stored, all of
    them are one group: the sampled design is still free."""
    names = tuple(sorted(entrant.name for entrant in league.entrants))
    known = store.cohorts() if store.match_count() else ()
    seen = {name for cohort in known for name in cohort}
    newcomers = tuple(name for name in names if name not in seen)
    return (*known, newcomers) if newcomers else known


@dataclass(frozen=True, slots=True)
class Standings:
    """What the stored results of a league say: the stored matches read (summaries, or whole matches),
    its schedule (of an ``until: settled`` league, chosen from them), the leaderboard of its rated games,
    and how settled its ranking is. The matches travel with the standings made of them, so that a page
    never shows a leaderboard of one read beside the matches of another."""

    stored: Mapping[str, Summarized]
    schedule: tuple[ScheduledMatch, ...]
    board: Leaderboard
    settlement: Settlement | None
    """Of an ``until: settled`` league; ``None`` for one that plays its whole schedule."""


def standings(
    league: League,
    seed: int,
    stored: Mapping[str, Summarized],
    fixed: tuple[ScheduledMatch, ...] | None = None,
    fold: Fold | None = None,
    added: Iterable[str] | None = None,
) -> Standings:
    """The standings of ``stored`` (summaries or whole matches) under the league's ``seed``: the one place
    they are computed, so that the leaderboard, the report, the web API and ``referee analyze`` never
    disagree (``tests/test_quality.py`` checks that nothing else rates). An ``until: settled`` league is
    planned once, for both its schedule and its settlement; a fixed schedule the caller holds already
    (``fixed``: a competition's) is not planned again. ``fold``: the ratings of ``fixed`` kept by a
    reader that follows the results (:mod:`referee.results.following`), folded forward over ``added``,
    the matches stored since it last read."""
    settlement = None
    if league.settling is not None:
        plan = plan_of(league, seed, stored)
        schedule, settlement = plan.schedule, plan.settlement
    else:
        schedule = fixed if fixed is not None else schedule_of(league, seed, stored)
    if fold is not None and fixed is not None:
        board = fold.board(stored, added)
    else:
        board = rate([entrant.name for entrant in league.entrants], schedule, stored, league.rating)
    return Standings(stored, schedule, board, settlement)


def fragility_of(read: Standings) -> Fragility | None:
    """The greedy fragility of ``read``'s leader (:func:`referee.league.confidence.fragility`): for the
    commands only, since its cost grows with the rated games (a served page never computes it)."""
    board = read.board
    games = rated_games(read.schedule, read.stored, board.mode)
    return fragility(board, [standing.entrant for standing in board.standings], games)


class NothingPlayedError(StoreError):
    """No match of the league is stored yet: there is nothing to read."""


def open_results(league: League, league_file: str) -> tuple[Store, League, int]:
    """The league's results database, read-only, the league with its cohorts, and the seed its results
    were stored under (:func:`known_seed`: a secret seed comes from the database). ``league_file``
    is the league as the user named it, for the message.

    Results stored under this league's settings are read whichever league file stored them (a copy that
    ``--fresh`` kept, read through a copy of the old league file). Raises :class:`NothingPlayedError`
    when the database does not exist or holds no match, :class:`~referee.results.store.OtherLeagueError`
    when it holds another league file's results under other settings,
    :class:`~referee.results.errors.StorageError` when it is damaged (SQLite's check on opening), and
    :class:`StoreError` when it holds results of other settings or is no results file.
    """
    database = league.database
    nothing = NothingPlayedError(
        f"{league_file}: nothing played yet (no results in {database}); `referee run {league_file}` plays it"
    )
    if not database.is_file():
        raise nothing
    store = Store(database, write=False)
    try:
        if store.match_count() == 0:
            raise nothing
        seed = known_seed(league, store)
        settings = league_settings(league, seed)  # "": a secret seed gone since
        if seed is None or store.meta("settings") != settings:
            store.claim(league.path, league.name, settings)  # another league's: say whose
            raise store.other_settings()
        league = with_cohorts(league, joined(store, league))
    except BaseException:
        store.close()
        raise
    return store, league, seed
