"""How sure the leaderboard is of its order: each entrant's probability of each rank, the groups whose
order is not decided, and the league's fragility (docs/LEAGUE.md, "Rank confidence").

**Rank probabilities** come from the TrueSkill posterior the leaderboard holds already: each entrant's
skill is believed N(μ, σ²), independently. A fixed number of joint draws (:data:`DRAWS`) of every skill,
each ranked, count how often each entrant lands at each rank. The draws come from a ``random.Random``
seeded from the board itself (names, μ, σ), not from the clock or a global generator: the same board
gives the same figures in every process, so ``referee report``'s files and the served pages stay byte
for byte the same, and no seed (secret or not) is needed or shown. The cost is ``DRAWS`` × entrants,
whatever the number of stored matches, and nothing here runs on the play path.

**Tied groups** need no draws: two entrants next to each other on the board are *undecided* when
P(the higher one's skill > the lower one's) = Φ((μ₁ − μ₂) / √(σ₁² + σ₂²)) is under
:data:`TIE_CONFIDENCE` (the separation ``until: settled`` uses, :mod:`referee.league.adaptive`), and
undecided neighbours chain into one group.

**Fragility** is the fewest rated games (tables, in duplicate mode) whose removal gives the board
another leader. Finding the fewest is a search over subsets; :func:`fragility` is greedy and so gives an
upper bound: it removes, one at a time, the games that helped the leader most against the runner-up,
re-rating after each, and gives up past :data:`FRAGILITY_CAP`. Its cost grows with the league (each step
re-rates the games after the first one removed), so only the commands compute it, never a served page.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Final

import trueskill

from referee.league.ratings import (
    ENVIRONMENT,
    Game,
    Leaderboard,
    RatingMode,
    Standing,
    game_ranks,
    game_result,
    rate_game,
)

DRAWS: Final = 2000
"""Joint draws of the skills per board: a probability's Monte Carlo standard error is at most
√(0.25 / 2000) ≈ 0.011."""
TIE_CONFIDENCE: Final = 0.95
"""Neighbours whose separation is under this are tied (their order is not decided)."""
FRAGILITY_CAP: Final = 10
"""The greedy search for the fragility gives up after removing this many games."""

_NORMAL: Final = NormalDist()


@dataclass(frozen=True, slots=True)
class Confidence:
    """What the posterior says of the board's order."""

    names: tuple[str, ...]
    """The entrants in the board's order."""
    probabilities: tuple[tuple[float, ...], ...]
    """Per entrant (in :attr:`names`' order): P(rank 1), P(rank 2), …, P(rank N). Each row sums to 1,
    and so does each column."""
    groups: tuple[tuple[str, ...], ...]
    """The tied groups (two entrants or more each), top first, each in the board's order."""
    draws: int

    def of(self, name: str) -> tuple[float, ...]:
        """``name``'s probability of each rank, from rank 1."""
        return self.probabilities[self.names.index(name)]

    def own(self, name: str) -> float:
        """The probability that ``name`` holds the rank the board gives it."""
        place = self.names.index(name)
        return self.probabilities[place][place]

    def tied_with(self, name: str) -> tuple[str, ...]:
        """The others of ``name``'s tied group; none when its place is decided."""
        group = next((group for group in self.groups if name in group), ())
        return tuple(other for other in group if other != name)

    def lines(self) -> list[str]:
        """The tied groups as lines under a leaderboard.

        >>> Confidence(("a", "b", "c"), (), (("a", "b"),), 10).lines()
        ['tied (order not decided): a = b']
        >>> Confidence(("a", "b"), (), (), 10).lines()
        ['every neighbour decided (P(higher is better) ≥ 95%)']
        """
        if not self.groups:
            return [f"every neighbour decided (P(higher is better) ≥ {TIE_CONFIDENCE:.0%})"]
        return [f"tied (order not decided): {' = '.join(group)}" for group in self.groups]


def separation(higher: Standing, lower: Standing) -> float:
    """P(``higher``'s skill > ``lower``'s) under their N(μ, σ²) beliefs.

    >>> separation(Standing("a", 30.0, 1.0), Standing("b", 25.0, 1.0)) > 0.99
    True
    >>> separation(Standing("a", 25.0, 2.0), Standing("b", 25.0, 2.0))
    0.5
    """
    spread = math.hypot(higher.sigma, lower.sigma)
    if spread == 0:
        return 1.0 if higher.mu > lower.mu else 0.5 if higher.mu == lower.mu else 0.0
    return _NORMAL.cdf((higher.mu - lower.mu) / spread)


def tied_groups(standings: Sequence[Standing]) -> tuple[tuple[str, ...], ...]:
    """Runs of neighbours each under :data:`TIE_CONFIDENCE` of separation, in the board's order.

    >>> s = [Standing("a", 40.0, 1.0), Standing("b", 30.0, 3.0), Standing("c", 30.0, 3.0)]
    >>> tied_groups([*s, Standing("d", 29.0, 3.0)])
    (('b', 'c', 'd'),)
    """
    groups: list[list[str]] = []
    for higher, lower in itertools.pairwise(standings):
        if separation(higher, lower) >= TIE_CONFIDENCE:
            continue
        if groups and groups[-1][-1] == higher.entrant:
            groups[-1].append(lower.entrant)
        else:
            groups.append([higher.entrant, lower.entrant])
    return tuple(tuple(group) for group in groups)


def confidence(board: Leaderboard, draws: int = DRAWS) -> Confidence:
    """The rank probabilities and tied groups of ``board`` (see the module's doc)."""
    beliefs = tuple((s.entrant, s.mu, s.sigma) for s in board.standings)
    return Confidence(
        tuple(name for name, _, _ in beliefs),
        _simulated(beliefs, draws),
        tied_groups(board.standings),
        draws,
    )


@functools.lru_cache(maxsize=16)
def _simulated(beliefs: tuple[tuple[str, float, float], ...], draws: int) -> tuple[tuple[float, ...], ...]:
    """Rank frequencies over ``draws`` joint draws, seeded from ``beliefs``: a pure function, so its
    answers are kept (a server's pages and API ask for the same board many times)."""
    rng = random.Random(_seed(beliefs))
    count = len(beliefs)
    tally = [[0] * count for _ in range(count)]
    for _ in range(draws):
        skills = [rng.gauss(mu, sigma) for _, mu, sigma in beliefs]
        for rank, entrant in enumerate(sorted(range(count), key=lambda i: -skills[i])):
            tally[entrant][rank] += 1
    return tuple(tuple(times / draws for times in row) for row in tally)


def _seed(beliefs: tuple[tuple[str, float, float], ...]) -> int:
    """A seed from the board's state: its names, μ and σ (their exact ``repr``, the same everywhere)."""
    text = "\n".join(f"{name}\t{mu!r}\t{sigma!r}" for name, mu, sigma in beliefs)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


@dataclass(frozen=True, slots=True)
class Fragility:
    """How few rated games decide the leader, as a greedy search found it."""

    leader: str
    removed: tuple[str, ...]
    """The games removed (table ids, or match ids in ``match`` mode), in the order they were removed."""
    changed: bool
    """Whether removing them gave another leader; if not, the search gave up after them."""
    new_leader: str | None
    games: str = "tables"
    """What a rated game is called: ``tables`` or ``matches``."""

    @property
    def count(self) -> int | None:
        """The upper bound on the fewest games whose removal changes the leader; ``None`` when the
        search gave up. That is no proof that fewer cannot do it: a set the greedy order never tries
        (games of a third entrant, say) might."""
        return len(self.removed) if self.changed else None

    def text(self) -> str:
        """One line for under a leaderboard.

        >>> Fragility("a", ("r1:{a,b}",), True, "b").text()
        'fragility: at most 1 table (removing r1:{a,b} makes b the leader; found greedily: an upper bound)'
        >>> Fragility("a", ("x", "y"), False, None, "matches").text()[:60]
        'fragility: more than 2 matches to the greedy search (without'
        """
        if not self.changed:
            return (
                f"fragility: more than {len(self.removed)} {self.games} to the greedy search (without the "
                f"{len(self.removed)} that helped {self.leader} most, {self.leader} still leads)"
            )
        shown = ", ".join(self.removed[:3]) + (", …" if len(self.removed) > 3 else "")
        noun = self.games if len(self.removed) != 1 else {"tables": "table", "matches": "match"}[self.games]
        return (
            f"fragility: at most {len(self.removed)} {noun} (removing {shown} makes "
            f"{self.new_leader} the leader; found greedily: an upper bound)"
        )


def _label(game: Game, games: str) -> str:
    last = game[-1][0]
    return last.table_id if games == "tables" else last.match_id


def _leader(ratings: dict[str, trueskill.Rating]) -> str:
    """The board's first: μ − 3σ, then name (as :class:`referee.league.ratings.Fold` sorts)."""
    return min(ratings, key=lambda name: (-(ratings[name].mu - 3 * ratings[name].sigma), name))


def _most_first(gain: tuple[tuple[int, int], int]) -> tuple[int, int, int]:
    (net, points), number = gain
    return -net, -points, number


def fragility(
    board: Leaderboard, entrants: Sequence[str], games: Sequence[Game], cap: int = FRAGILITY_CAP
) -> Fragility | None:
    """The greedy fragility of ``board``, the leaderboard of ``games`` (the rated games of its schedule,
    :func:`referee.league.ratings.rated_games`, in schedule order); ``None`` without two entrants or a
    rated game.

    A game helps the leader L against the runner-up R by (entrants L beat there − entrants that beat L)
    − (the same for R), an absent one counting 0; at equal help, by L's points over R's. The games that
    help, most first, are removed one at a time, each time re-rating (from the first game removed on:
    the ratings before it are unchanged) until the leader is another one, or ``cap`` are removed."""
    if len(board.standings) < 2 or not games:
        return None
    leader, runner = board.standings[0].entrant, board.standings[1].entrant
    noun = "tables" if board.mode is RatingMode.DUPLICATE else "matches"

    def help_of(game: Game) -> tuple[int, int]:
        result = game_result(game)
        ranks = game_ranks(result)
        size = len(ranks)

        def net(name: str) -> int:
            return (size - ranks[name]) - (ranks[name] - 1) if name in ranks else 0

        points = result[leader][1] - result[runner][1] if leader in ranks and runner in ranks else 0
        return net(leader) - net(runner), points

    gains = sorted(((help_of(game), number) for number, game in enumerate(games)), key=_most_first)
    order = [number for gain, number in gains if gain > (0, 0)]
    # The ratings before each game as the board rated them: a re-rating starts at the first removed.
    before = [{name: ENVIRONMENT.create_rating() for name in entrants}]
    for game in games[: max(order[:cap], default=0)]:
        before.append(rate_game(before[-1], game))
    removed: set[int] = set()
    for number in order[:cap]:
        removed.add(number)
        first = min(removed)
        ratings = before[first]
        for index in range(first, len(games)):
            if index not in removed:
                ratings = rate_game(ratings, games[index])
        if (now := _leader(ratings)) != leader:
            labels = tuple(_label(games[n], noun) for n in order[: len(removed)])
            return Fragility(leader, labels, True, now, noun)
    labels = tuple(_label(games[n], noun) for n in order[: len(removed)])
    return Fragility(leader, labels, False, None, noun)
