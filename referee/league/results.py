"""A league's stored results opened for reading only: what ``leaderboard``, ``export``, ``replay``,
``report`` and ``matches`` show.

Reading never writes: no database is created for a league that was never run, no secret seed is drawn,
no settings are bound. A league with nothing stored yet is :class:`NothingPlayedError`, which says which
command plays it.
"""

from __future__ import annotations

from referee.league.config import League
from referee.league.planning import joined, known_seed, league_settings, with_cohorts
from referee.league.storage import StoreError
from referee.league.store import Store


class NothingPlayedError(StoreError):
    """No match of the league is stored yet: there is nothing to read."""


def open_results(league: League, league_file: str) -> tuple[Store, League, int]:
    """The league's results database, read-only, the league with its cohorts, and the seed its results
    were stored under (``planning.known_seed``: a secret seed comes from the database). ``league_file``
    is the league as the user named it, for the message.

    Results stored under this league's settings are read whichever league file stored them (a copy that
    ``--fresh`` kept, read through a copy of the old league file). Raises :class:`NothingPlayedError`
    when the database does not exist or holds no match, :class:`~referee.league.store.OtherLeagueError`
    when it holds another league file's results under other settings,
    :class:`~referee.league.storage.StorageError` when it is damaged (SQLite's check on opening), and
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
