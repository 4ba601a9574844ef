"""The ranking of many bots (referee/ranking.py): its guarantee on simulated tables of known means, equal
entrants declared equal, and the plan's tables replayed from the seed. No process: the tables are drawn,
not played."""

import itertools
import math
import random
from collections.abc import Callable, Mapping

import pytest

from pyramid_sdk import Rules
from referee.compare import CompareError
from referee.ranking import Method, Pair, Relation, Standing, Table, first_tables, planned, standing
from referee.ranking_plan import make_rank_plan

LADDER = {"e0": 30.0, "e25": 22.0, "e50": 14.0, "twin": 14.0, "triplet": 14.0, "e75": 6.0, "e100": 0.0}
"""The benchmark's field in points per match (benchmarks/ranking.py measured gaps of 7 to 11): a ladder
and two exact copies of its middle."""


def simulate(
    means: Mapping[str, float],
    method: Method,
    seed: int,
    sigma: float = 2.5,
    players: int = 4,
    max_tables: int = 300,
    noise: Callable[[random.Random, float], float] = lambda rng, sigma: rng.gauss(0.0, sigma),
) -> Standing:
    """One ranking on drawn tables: each candidate's result at a table is its mean plus the table's own
    luck (the same for everyone there) plus its own ``noise``, as a duplicate table's is."""
    rng = random.Random(seed)
    opening = list(means)
    rng.shuffle(opening)
    tables: list[Table] = []
    while len(tables) < max_tables:
        candidates = planned(opening, players, tables, method)
        if candidates is None:
            break
        luck = rng.gauss(0.0, 5.0)
        tables.append(Table(candidates, tuple(means[name] + luck + noise(rng, sigma) for name in candidates)))
    return standing(opening, tables, method)


def wrong(now: Standing, means: Mapping[str, float], margin: float) -> bool:
    """Whether anything declared contradicts the true means: an order where the upper one is not better,
    or an equality of two that differ by the margin or more."""
    for pair, relation in zip(now.pairs, now.relations, strict=True):
        truth = means[pair.upper] - means[pair.lower]
        if relation is Relation.BETTER and truth <= 0:
            return True
        if relation is Relation.EQUAL and abs(truth) >= margin:
            return True
    return False


def bound(alpha: float, runs: int) -> float:
    """The most errors a level-alpha procedure may show in ``runs`` runs: alpha plus three standard errors."""
    return alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)


HARD = {"a": 9.0, "b": 6.0, "c": 3.0, "d": 0.0, "e": 0.0, "f": -2.0}
"""A close field: gaps of 3 (at the margin of 3, which may not call them equal) and two equal entrants."""


@pytest.mark.parametrize(
    ("means", "alpha", "margin", "sigma", "heavy"),
    [
        (LADDER, 0.05, 5.0, 2.5, False),
        (HARD, 0.2, 3.0, 2.5, False),
        (HARD, 0.2, 3.0, 2.5, True),
    ],
)
def test_the_family_wise_error_rate_stays_within_alpha(means, alpha, margin, sigma, heavy):
    """200 rankings of known means (normal, or heavy-tailed: Student's t with 3 degrees of freedom,
    scaled to the same sd): the share of runs that declare anything wrong is at most alpha plus three
    standard errors, and every run ends decided."""

    def student(rng: random.Random, scale: float) -> float:
        t = rng.gauss(0.0, 1.0) / math.sqrt(sum(rng.gauss(0.0, 1.0) ** 2 for _ in range(3)) / 3)
        return t * scale / math.sqrt(3.0)

    method = Method(alpha=alpha, margin=margin)
    runs = [simulate(means, method, seed, sigma, noise=student if heavy else _normal) for seed in range(200)]
    errors = sum(wrong(now, means, margin) for now in runs)
    assert all(now.decided for now in runs)
    assert errors / len(runs) <= bound(alpha, len(runs)), errors


def _normal(rng: random.Random, sigma: float) -> float:
    return rng.gauss(0.0, sigma)


def test_the_error_check_catches_a_procedure_that_peeks():
    """The check above can fail: the same tables judged by 95% intervals for one fixed sample size,
    looked at after every table and with no split over the pairs, declare something wrong far more often
    than alpha allows (which is why the ranking uses confidence sequences at alpha / C(K, 2))."""

    class Peeking(Method):
        def half_width(self, tables: int, stdev: float, candidates: int, freedom: int | None = None) -> float:
            return math.inf if tables < 3 else 1.96 * stdev / math.sqrt(tables)

    method = Peeking(alpha=0.2, margin=3.0)
    runs = [simulate(HARD, method, seed) for seed in range(200)]
    assert sum(wrong(now, HARD, 3.0) for now in runs) / len(runs) > bound(0.2, len(runs))


def test_two_equal_entrants_end_equal_not_ordered():
    """Two entrants of the same mean, with a third well above: every run ends with the two declared
    equal, never one above the other."""
    means = {"strong": 20.0, "one": 5.0, "other": 5.0}
    for seed in range(50):
        now = simulate(means, Method(margin=4.0), seed, players=4)
        assert now.decided
        assert now.order[0] == "strong"
        assert now.relations == (Relation.BETTER, Relation.EQUAL), (seed, now.relations)


def test_without_a_margin_equal_entrants_are_never_decided():
    """A margin of 0 declares nothing equal: two copies keep the ranking open until its tables run out."""
    now = simulate({"one": 5.0, "other": 5.0, "third": -20.0}, Method(margin=0.0), 1, max_tables=60)
    assert not now.decided
    assert now.tables == 60
    assert Relation.UNDECIDED in now.relations


def test_a_pair_is_decided_only_from_the_minimum_of_shared_tables():
    method = Method(margin=4.0)
    tables = [Table(("a", "b"), (10.0 + index % 2, 0.0)) for index in range(method.min_tables)]
    assert standing("ab", tables[:-1], method).relations == (Relation.UNDECIDED,)
    assert standing("ab", tables, method).relations == (Relation.BETTER,)


def test_an_order_that_contradicts_its_own_evidence_is_swapped():
    """b scores above a relative to the table means (a sat at weak tables), but at the tables a and b
    shared a was clearly better: the order puts a first."""
    shared = [Table(("a", "b"), (10.0 + index % 2, 0.0)) for index in range(6)]
    padding = [Table(("b", "z"), (60.0, 0.0 + index % 3)) for index in range(6)]
    now = standing(["a", "b", "z"], shared + padding, Method())
    assert now.order[:2] == ("a", "b")


def test_the_opening_seats_everyone_and_neighbours_share_a_table():
    windows = first_tables([f"x{index}" for index in range(10)], 4)
    assert set().union(*windows) == {f"x{index}" for index in range(10)}
    assert all(len(window) == 4 for window in windows)
    assert all(set(first) & set(second) for first, second in itertools.pairwise(windows))


def test_the_tables_replay_from_the_seed():
    """The plan's next table depends only on the tables played: the same draws give the same tables."""
    plan = make_rank_plan(
        [
            f"sample_bots.epsilon:{name}"
            for name in ("Epsilon0", "Epsilon50", "Epsilon100", "Epsilon25", "Epsilon75")
        ],
        (),
        Rules(players=4),
        seed=7,
        max_tables=40,
        method=Method(margin=5.0),
    )
    means = {name: -float(index) * 8 for index, name in enumerate(plan.names)}

    def tables() -> list[tuple[str, ...]]:
        rng, played = random.Random(3), []
        while (candidates := plan.next_table(played)) is not None:
            played.append(Table(candidates, tuple(means[name] + rng.gauss(0, 2.5) for name in candidates)))
        return [table.entrants for table in played]

    first = tables()
    assert first == tables()
    assert len(first) < 40
    assert plan.opening() != tuple(plan.names) or plan.opening() == tuple(sorted(plan.names))


def test_one_bot_twice_and_fillers_without_a_seat_are_refused():
    bots = ["sample_bots.epsilon:Epsilon0", "sample_bots.epsilon:Epsilon50"]
    with pytest.raises(CompareError, match="given twice"):
        make_rank_plan([*bots, bots[0]], (), Rules(players=4), 1, 10, Method())
    with pytest.raises(CompareError, match="fill every seat"):
        make_rank_plan(
            [*bots, "sample_bots.epsilon:Epsilon25", "sample_bots.epsilon:Epsilon75"],
            ("sample_bots.random_bot:RandomBot",),
            Rules(players=4),
            1,
            10,
            Method(),
        )


def test_a_decision_needs_the_interval_clear_of_zero_or_inside_the_margin():
    assert Pair("a", "b", 6, 3.0, 2.9).relation(0.0) is Relation.BETTER
    assert Pair("a", "b", 6, 3.0, 3.1).relation(0.0) is Relation.UNDECIDED
    assert Pair("a", "b", 6, 0.5, 3.0).relation(4.0) is Relation.EQUAL
    assert Pair("a", "b", 6, 0.5, 3.6).relation(4.0) is Relation.UNDECIDED
