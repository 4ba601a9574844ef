"""Table designs for fields too big for a round robin: which sets of entrants sit down together.

A round robin plays every combination of ``players`` entrants; 30 entrants at 4 seats make 27,405
tables. A *sampled* design plays a few tables per entrant instead, chosen so that each entrant sits at
the same number of tables and each pair of entrants meets about equally often (a near-balanced
incomplete block design): ratings then compare everyone through everyone else.

The construction grows in *cohorts*, the groups of entrants in the order they joined the league. The
first cohort gets a design of its own; each later one adds tables that each seat at least one newcomer,
so every table of an earlier cohort stays in the schedule (its results stay valid) and only the
newcomers' tables are new. Within one extension the entrants' table counts are fixed first (newcomers
``per_entrant`` each, the other seats spread evenly over the entrants with the fewest tables), a greedy
fills the tables with them, and a hill climb swaps entrants between the new tables while that evens out
the pair counts (it minimises the sum of their squares, which is least where they are all within 1).
Where the climb stops with two pair counts more than 1 apart, a short simulated anneal, seeded from the
league seed, looks further. Every choice is a pure function of the seed and the names: no shared
random generator, no dependence on the order of the league file.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Final

from pyramid_sdk.seeds import derive_seed
from referee.league.modes import most_tables

ANNEAL_STEPS: Final = 20_000
"""Random swaps tried when the hill climb ends with pair counts more than 1 apart."""
TRIES: Final = 4
"""Random picks per annealing step: of the tables to take an entrant from, of the places to swap it to."""
REPEAT_PENALTY: Final = 10_000
"""The cost of a set of entrants seated twice: above any gain in pair counts."""

Table = tuple[str, ...]
"""A table's entrants in name order."""


class DesignError(ValueError):
    """No design exists for these numbers (the league file's check should have said so first)."""


def sampled_design(
    seed: int, cohorts: Sequence[Sequence[str]], players: int, per_entrant: int
) -> tuple[Table, ...]:
    """The tables of a sampled league whose entrants joined in ``cohorts``, in the order they were added.

    The first cohort's entrants sit at ``per_entrant`` tables each (``per_entrant + 1`` for a few where
    ``players`` does not divide the seats); each later cohort's newcomers at ``per_entrant``, with the
    earlier entrants in the other seats. No set of entrants is a table twice.

    A cohort too small to give each of its entrants ``per_entrant`` different tables joins together with
    the next one: a league played with fewer tables per entrant, which now asks for more, gets a new
    design (its tables already played that the new one has keep their results).
    """
    present: list[str] = []
    design: list[Table] = []
    newcomers: list[str] = []
    for number, cohort in enumerate(cohorts):
        newcomers = sorted({*newcomers, *(set(cohort) - set(present))})
        if not newcomers or most_tables(len(present) + len(newcomers), players) <= per_entrant:
            continue
        present = sorted({*present, *newcomers})
        key = {name: derive_seed(seed, "sampled", number, name) for name in present}
        extension = _Extension(
            present, newcomers, design, players, per_entrant, key, derive_seed(seed, "sampled", number)
        )
        design += extension.tables()
        newcomers = []
    return tuple(design)


def challenger_design(
    seed: int, challenger: str, field: Sequence[str], players: int, count: int
) -> tuple[Table, ...]:
    """``count`` tables that each seat ``challenger`` with ``players - 1`` entrants of ``field``: every
    entrant of the field as often as the others (±1), every pair of them as evenly as possible."""
    present = sorted({*field, challenger})
    key = {name: derive_seed(seed, "gauntlet", challenger, name) for name in present}
    extension = _Extension(
        present, [challenger], [], players, count, key, derive_seed(seed, "gauntlet", challenger)
    )
    return tuple(extension.tables())


class _Extension:
    """New tables for ``newcomers`` (a sorted subset of the sorted ``present``), given the ``earlier``
    tables; each new table seats at least one newcomer, so none of them is an earlier table."""

    def __init__(
        self,
        present: list[str],
        newcomers: list[str],
        earlier: Sequence[Table],
        players: int,
        per_entrant: int,
        key: dict[str, int],
        seed: int,
    ) -> None:
        self.present = present
        self.players = players
        self.per_entrant = per_entrant
        index = {name: number for number, name in enumerate(present)}
        size = len(present)
        self.pairs = [[0] * size for _ in range(size)]
        """How many tables each two entrants share (both ways round)."""
        self.counts = [0] * size
        """Each entrant's earlier tables."""
        within = [[index[name] for name in table] for table in earlier if set(table) <= index.keys()]
        for table in within:
            for member in table:
                self.counts[member] += 1
            self._count(table, 1)
        new = {index[name] for name in newcomers}
        self.is_new = [number in new for number in range(size)]
        self.order = sorted(range(size), key=lambda number: key[present[number]])
        """The entrants in the order of their seed-derived keys: every tie is broken by it."""
        self.place = {number: place for place, number in enumerate(self.order)}
        self.tally: dict[frozenset[int], int] = {}
        """How often each set of entrants is a table: more than once is a repeat, never wanted."""
        for table in within:
            self.tally[frozenset(table)] = self.tally.get(frozenset(table), 0) + 1
        self.seed = seed

    def tables(self) -> list[Table]:
        self.new_tables = self._fill(self._quotas())
        self._climb()
        if self._spread() > 1 or self._duplicates():
            self._anneal()
            self._climb()
        if self._duplicates():
            raise DesignError(f"no design without a repeated table for {len(self.present)} entrants")
        return sorted(tuple(sorted(self.present[member] for member in table)) for table in self.new_tables)

    def _count(self, members: Sequence[int], step: int) -> None:
        for a in members:
            for b in members:
                if a != b:
                    self.pairs[a][b] += step

    def _quotas(self) -> list[int]:
        """How many new tables each entrant sits at (``0`` for most earlier entrants)."""
        k, t = self.players, self.per_entrant
        newcomers = [number for number in self.order if self.is_new[number]]
        others = [number for number in self.order if not self.is_new[number]]
        n, size = len(newcomers), len(self.present)
        quotas = [0] * size
        if not others:
            tables = math.ceil(n * t / k)
            for place, number in enumerate(newcomers):
                quotas[number] = t + (place < tables * k - n * t)
            return quotas
        # A newcomer should meet newcomers and earlier entrants in proportion to their numbers: then a
        # table seats 1 + (k-1)(n-1)/(size-1) newcomers on average.
        tables = round(n * t / (1 + (k - 1) * (n - 1) / (size - 1)))
        low = max(t, math.ceil(n * t / k))
        high = n * t if len(others) >= k - 1 else n * t // (k - len(others))
        tables = min(max(tables, low), high)
        for number in newcomers:
            quotas[number] = t
        seats = tables * k - n * t
        load = {number: self.counts[number] for number in others}
        for _ in range(seats):  # to the earlier entrant with the fewest tables so far
            number = min(others, key=lambda o: (load[o] if quotas[o] < tables else math.inf, self.place[o]))
            quotas[number] += 1
            load[number] += 1
        return quotas

    def _fill(self, quotas: list[int]) -> list[list[int]]:
        """Tables from the quotas, largest remaining quota first (so the last tables can still be filled
        with distinct entrants), each table with its share of the newcomers' seats."""
        k = self.players
        new_seats = sum(q for number, q in enumerate(quotas) if self.is_new[number])
        count = sum(quotas) // k
        left = list(quotas)
        tables: list[list[int]] = []
        for number in range(count):
            share = new_seats // count + (number < new_seats % count)
            table: list[int] = []
            for seat in range(k):
                wanted_new = seat < share
                candidates = [
                    c
                    for c in range(len(left))
                    if left[c] > 0 and c not in table and self.is_new[c] == wanted_new
                ]
                if not candidates:
                    raise DesignError(f"no design for {len(self.present)} entrants at {k} seats")
                if seat == k - 1:  # not a set of entrants that is a table already, where there is a choice
                    fresh = [c for c in candidates if frozenset([*table, c]) not in self.tally]
                    candidates = fresh or candidates
                best = min(
                    candidates,
                    key=lambda c: (-left[c], sum(self.pairs[c][m] for m in table), self.place[c]),
                )
                table.append(best)
                left[best] -= 1
            self._count(table, 1)
            self.tally[frozenset(table)] = self.tally.get(frozenset(table), 0) + 1
            tables.append(table)
        return tables

    def _climb(self) -> None:
        """Swaps two entrants of two new tables while that lowers the cost (first improvement, in a
        fixed order), until no swap does."""
        tables = self.new_tables
        improved = True
        while improved:
            improved = False
            for a in range(len(tables)):
                for b in range(a + 1, len(tables)):
                    for i in range(self.players):
                        for j in range(self.players):
                            delta = self._delta(a, i, b, j)
                            if delta is not None and delta < 0:
                                self._swap(a, i, b, j)
                                improved = True

    def _anneal(self) -> None:
        """Random swaps, a worse one accepted with a probability that falls as the search cools, to
        leave a local minimum of :meth:`_climb`; ends on the best design seen. Only ``random()`` of a
        seeded generator is used: its sequence is the one Python promises to keep across versions."""
        rng = random.Random(self.seed)
        tables = self.new_tables
        count = len(tables)
        best_cost = cost = self._cost()
        best = [list(table) for table in tables]
        steps = ANNEAL_STEPS
        size = len(self.pairs)
        # the most tables a pair would share in a balanced design: swaps start from a pair above it
        ceiling = math.ceil(sum(map(sum, self.pairs)) / (size * (size - 1)))
        # the cost of a balanced design, every pair count within 1: nothing does better
        shared, pairs = sum(map(sum, self.pairs)) // 2, size * (size - 1) // 2
        low, above = divmod(shared, pairs)
        floor = pairs * low * low + above * (2 * low + 1)
        for step in range(steps):
            heat = 2.0 * (0.01 / 2.0) ** (step / steps)
            for _ in range(TRIES):  # a table with a crowded pair, if one comes up soon
                a = int(rng.random() * count)
                table = tables[a]
                crowded = [i for i, x in enumerate(table) if max(self.pairs[x][m] for m in table) > ceiling]
                if crowded:
                    break
            i = crowded[int(rng.random() * len(crowded))] if crowded else int(rng.random() * self.players)
            delta, b, j = None, a, 0
            for _ in range(TRIES):  # the best of a few random places to swap with
                other, seat = int(rng.random() * count), int(rng.random() * self.players)
                change = None if other == a else self._delta(a, i, other, seat)
                if change is not None and (delta is None or change < delta):
                    delta, b, j = change, other, seat
            if delta is None or (delta > 0 and rng.random() >= math.exp(-delta / heat)):
                continue
            self._swap(a, i, b, j)
            cost += delta
            if cost < best_cost:
                best_cost, best = cost, [list(table) for table in tables]
                if best_cost == floor:
                    break
        for number, table in enumerate(best):  # back to the best design
            self._replace(number, table)

    def _cost(self) -> int:
        squares = sum(count * count for row in self.pairs for count in row) // 2
        return squares + REPEAT_PENALTY * self._duplicates()

    def _duplicates(self) -> int:
        return sum(count - 1 for count in self.tally.values() if count > 1)

    def _spread(self) -> int:
        counts = [self.pairs[a][b] for a in range(len(self.pairs)) for b in range(a)]
        return max(counts) - min(counts) if counts else 0

    def _delta(self, a: int, i: int, b: int, j: int) -> int | None:
        """The change of cost if entrant ``i`` of new table ``a`` and entrant ``j`` of table ``b`` swap
        places, or ``None`` where the swap is not allowed (an entrant twice at a table, or a table
        left without a newcomer)."""
        first, second = self.new_tables[a], self.new_tables[b]
        x, y = first[i], second[j]
        if x in second or y in first:
            return None
        new = self.is_new
        if new[x] != new[y] and (
            (new[x] and sum(new[m] for m in first) == 1) or (new[y] and sum(new[m] for m in second) == 1)
        ):
            return None
        pairs = self.pairs
        delta = 0
        for m in first:
            if m != x:  # x leaves the first table, y joins it
                delta += 2 * (pairs[y][m] - pairs[x][m]) + 2
        for m in second:
            if m != y:
                delta += 2 * (pairs[x][m] - pairs[y][m]) + 2
        common = set(first) & set(second)  # their pairs with x and with y go down once and up once
        delta -= 4 * len(common)
        before = (frozenset(first), frozenset(second))
        after = (before[0] - {x} | {y}, before[1] - {y} | {x})
        change = dict.fromkeys((*before, *after), 0)
        for table in before:
            change[table] -= 1
        for table in after:
            change[table] += 1
        repeats = sum(
            max(0, self.tally.get(table, 0) + step - 1) - max(0, self.tally.get(table, 0) - 1)
            for table, step in change.items()
        )
        return delta + REPEAT_PENALTY * repeats

    def _swap(self, a: int, i: int, b: int, j: int) -> None:
        first, second = list(self.new_tables[a]), list(self.new_tables[b])
        first[i], second[j] = second[j], first[i]
        self._replace(a, first)
        self._replace(b, second)

    def _replace(self, number: int, table: list[int]) -> None:
        old = self.new_tables[number]
        self._count(old, -1)
        self.tally[frozenset(old)] -= 1
        self.new_tables[number] = table
        self._count(table, 1)
        self.tally[frozenset(table)] = self.tally.get(frozenset(table), 0) + 1
