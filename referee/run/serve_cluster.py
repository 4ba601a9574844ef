"""``referee serve --workers N`` and ``--dask ADDRESS``: the served league's matches played on a Dask
cluster by ``referee run``'s own Dask driver (``dask_driver.py``: the same plugin on every worker, the
same tasks, the same checks of the workers), so that what is stored is what a run stores.

The server keeps one cluster for its whole life (a LocalCluster started once it holds the league, or a
client of the running one), and sets the driver's plugin up on it for each pass over the league
(:meth:`~referee.run.dask_driver.DaskDriver.arena`: the league file may have changed, and with it the
entrants the workers build and start). The server still chooses each match as it can start
(``serve_driver.py``); a match goes to the cluster only when no remote entrant sits at it, since a
remote bot is connected to the door of the serving process and is played where its connection is.

Imported only when a cluster is asked for: Dask is slow to import.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from distributed import Client

from referee.league.schedule import ScheduledMatch
from referee.match.outcome import Finished, NotStarted
from referee.run.competition import Competition
from referee.run.dask_driver import DaskDriver, cluster_client, cluster_threads
from referee.run.dask_worker import Feed
from referee.run.driver import Tally
from referee.run.host import Host

if TYPE_CHECKING:
    from referee.run.serve_driver import ClusterSettings


def client(settings: ClusterSettings, say: Callable[[str], None]) -> AbstractAsyncContextManager[Client]:
    """A client of the cluster, for the server's whole life (:func:`cluster_client`)."""
    return cluster_client(settings.address, settings.workers, say)


@dataclass(frozen=True, slots=True)
class OnCluster:
    """One pass's seats on the cluster: the Dask driver of the league as it now reads, its plugin set
    up on every worker."""

    driver: DaskDriver
    client: Client
    plugin: str

    @property
    def topic(self) -> str:
        """The Dask events topic on which the workers relay this pass's live views."""
        return f"{self.plugin}-live"

    async def threads(self) -> int:
        """Matches the cluster can play at once now (workers may join or leave)."""
        return await cluster_threads(self.client)

    async def play(self, scheduled: ScheduledMatch, shown: bool) -> Finished | NotStarted:
        """Plays ``scheduled`` on a worker, its attempts stored here (:meth:`DaskDriver.play_one`), its
        live view relayed as it plays (only its deal number unless ``shown``)."""
        return await self.driver.play_one(self.client, self.plugin, scheduled, Feed(self.topic, shown))

    def tally(self) -> Tally:
        """What the workers saw of the bots this pass; asked once the pass's plugin is gone."""
        stats = self.driver.stats.values()
        return Tally(
            sum(item.started for item in stats), tuple(line for item in stats for line in item.refusals)
        )


@contextlib.asynccontextmanager
async def on_cluster(
    client: Client,
    settings: ClusterSettings,
    competition: Competition,
    host: Host,
    say: Callable[[str], None],
    relayed: Callable[[dict[str, Any]], None],
) -> AsyncIterator[OnCluster]:
    """The cluster set up for one pass over ``competition`` on ``host`` (every worker checked, as in a
    run: one that lacks an entrant's folder stops the pass with one line); interrupted, every worker
    ends its bots' streams with CANCELLED and stops them. ``relayed`` is told each live view a worker
    relays (the scheduler keeps the last thousand of a pass, ``distributed.admin.low-level-log-length``)."""
    driver = DaskDriver(competition, host, settings.address, settings.workers, say)
    async with driver.arena(client, host) as plugin:
        cluster = OnCluster(driver, client, plugin)
        client.subscribe_topic(cluster.topic, lambda event: relayed(event[1]))  # type: ignore[no-untyped-call]
        try:
            yield cluster
        finally:
            with contextlib.suppress(Exception):
                client.unsubscribe_topic(cluster.topic)  # type: ignore[no-untyped-call]
