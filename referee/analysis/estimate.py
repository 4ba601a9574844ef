"""The estimator: at each decision of a played match, the expected points of every legal action, the
chosen action's loss against the best, and per deal each seat's luck.

Every figure is a mean over sampled worlds (:mod:`referee.analysis.worlds`) and comes with its standard
error. A decision's worlds are drawn from what the acting seat could see then, so a loss measures the
decision against what its maker could know, not against the hidden cards. Each world is played out once
per legal action (common random numbers: the difference between two actions is far less noisy than either
value). Points are the acting seat's: the declarer's deal points for the declarer, minus them for a
defender; a declaration's value adds what its number is worth to the pyramid (:func:`slot_value`).

Luck is what a seat's six cards were worth before play, against the average for that seat: the mean
points (as above) of worlds that keep the seat's real hand and deal the rest at random, less the mean of
worlds that deal every hand at random, with the same declarer and pyramids. Over many deals a seat's luck
averages to zero; a positive figure says the cards favoured it.

Seeded: every decision and every deal draws from its own generator, derived from the analysis seed, the
match seed and its place in the match, so the output is the same on every machine and in any order.
"""

from __future__ import annotations

import enum
import hashlib
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from pyramid_sdk.actions import PLAYS, Action, Declare
from pyramid_sdk.cards import DECK, Card
from pyramid_sdk.engine import Match
from pyramid_sdk.heuristic import SLOT_COST
from pyramid_sdk.observation import Observation, Phase
from pyramid_sdk.record import DealRecord, MatchRecord
from pyramid_sdk.seeds import derive_seed
from pyramid_sdk.simulation import World, sample_world
from referee.analysis.worlds import POLICY, outcome

DEFAULT_SAMPLES: Final = 8
"""Worlds per decision and per luck figure, unless told otherwise (benchmarks/README.md times it)."""


class Kind(enum.StrEnum):
    """What a decision chose."""

    DECLARE = "declare"
    PLAY = "play"


@dataclass(frozen=True, slots=True)
class ActionValue:
    """One legal action's expected points for the acting seat, with the standard error of that mean
    (NaN, ``null`` in JSON, for the only legal action: it is not sampled)."""

    action: str
    mean: float
    se: float


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision of the match. ``loss`` is the best action's mean less the chosen one's (0 when the
    chosen action is the best or the only one); ``loss_se`` is its standard error, from the paired
    differences of the two actions in the same worlds."""

    deal: int
    seat: int
    kind: Kind
    trick: int
    """1-6 for a play, 0 for a declaration."""
    chosen: str
    best: str
    loss: float
    loss_se: float
    actions: tuple[ActionValue, ...]
    autopilot: bool
    """Made by the referee for a seat that had forfeited: no measure of the bot, left out of summaries."""


@dataclass(frozen=True, slots=True)
class DealLuck:
    """Per seat, what its cards were worth before play less the average for that seat, with its error."""

    deal: int
    luck: tuple[float, ...]
    se: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Analysis:
    """A whole match analysed: the settings that reproduce it and what they gave."""

    fingerprint: str
    """Of the match record: an analysis is shown only beside the record it was made from."""
    seats: tuple[str, ...]
    samples: int
    seed: int
    policy: str
    decisions: tuple[Decision, ...]
    luck: tuple[DealLuck, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint,
            "seats": list(self.seats),
            "samples": self.samples,
            "seed": self.seed,
            "policy": self.policy,
            "decisions": [
                {
                    "deal": d.deal,
                    "seat": d.seat,
                    "kind": d.kind.value,
                    "trick": d.trick,
                    "chosen": d.chosen,
                    "best": d.best,
                    "loss": d.loss,
                    "loss_se": d.loss_se,
                    "autopilot": d.autopilot,
                    "actions": [[a.action, None if math.isnan(a.mean) else a.mean, a.se] for a in d.actions],
                }
                for d in self.decisions
            ],
            "luck": [{"deal": x.deal, "luck": list(x.luck), "se": list(x.se)} for x in self.luck],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Analysis:
        """The analysis of :meth:`to_dict`; ``KeyError``, ``TypeError`` or ``ValueError`` if it is not one."""
        return cls(
            fingerprint=str(data["fingerprint"]),
            seats=tuple(str(name) for name in data["seats"]),
            samples=int(data["samples"]),
            seed=int(data["seed"]),
            policy=str(data["policy"]),
            decisions=tuple(
                Decision(
                    deal=int(d["deal"]),
                    seat=int(d["seat"]),
                    kind=Kind(d["kind"]),
                    trick=int(d["trick"]),
                    chosen=str(d["chosen"]),
                    best=str(d["best"]),
                    loss=float(d["loss"]),
                    loss_se=float(d["loss_se"]),
                    autopilot=bool(d["autopilot"]),
                    actions=tuple(
                        ActionValue(str(a), math.nan if m is None else float(m), float(s))
                        for a, m, s in d["actions"]
                    ),
                )
                for d in data["decisions"]
            ),
            luck=tuple(
                DealLuck(int(x["deal"]), tuple(map(float, x["luck"])), tuple(map(float, x["se"])))
                for x in data["luck"]
            ),
        )


def fingerprint(record: MatchRecord) -> str:
    """A short digest of the record: a match replayed with other bots has another."""
    return hashlib.sha256(record.to_json().encode()).hexdigest()[:16]


def mean_se(values: Sequence[float]) -> tuple[float, float]:
    """The mean and its standard error (0 for fewer than two values).

    >>> mean_se([1, 3, 5, 7])
    (4.0, 1.2909944487358056)
    """
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, 0.0
    return mean, statistics.stdev(values, mean) / math.sqrt(len(values))


def _gain(obs: Observation, points: int) -> int:
    return points if obs.is_declarer else -points


def slot_value(obs: Observation, action: Action) -> float:
    """What a declaration saves later by using its number now: the points the heuristic bot expects to
    lose on that number with a random hand (:data:`pyramid_sdk.heuristic.SLOT_COST`); 0 for a play.

    >>> from pyramid_sdk import Match, Rules, Suit
    >>> obs = Match(Rules(players=4), seed=1).observation(0)
    >>> slot_value(obs, Declare(6, Suit.SPADES)) > slot_value(obs, Declare(1, Suit.SPADES))
    True
    """
    if not isinstance(action, Declare):
        return 0.0
    return SLOT_COST[obs.rules.trick_winner][action.tricks]


def decision(
    obs: Observation, chosen: Action, samples: int, rng: random.Random, deal: int, autopilot: bool
) -> Decision:
    """The decision of ``obs``'s seat to take ``chosen``: every legal action valued over ``samples``
    worlds, and the chosen one's loss. A single legal action is not sampled: nothing could be better.

    >>> from pyramid_sdk import Match, Rules
    >>> match = Match(Rules(players=2), seed=3)
    >>> obs = match.observation(match.to_act)
    >>> d = decision(obs, obs.legal_actions[0], 4, random.Random(1), 1, False)
    >>> len(d.actions) == len(obs.legal_actions), d.loss >= 0, d.kind.value
    (True, True, 'declare')
    """
    kind = Kind.DECLARE if obs.phase is Phase.DECLARE else Kind.PLAY
    trick = 0 if kind is Kind.DECLARE else len(obs.tricks) + 1
    actions = obs.legal_actions
    mine = actions.index(chosen)
    text = str(actions[mine])
    if len(actions) == 1:
        only = (ActionValue(text, math.nan, 0.0),)
        return Decision(deal, obs.seat, kind, trick, text, text, 0.0, 0.0, only, autopilot)
    # A declaration also spends a number of the pyramid: its value is the deal's points plus what that
    # number would cost if left for a later hand (SLOT_COST), or every hard number would look like a loss.
    spent = [slot_value(obs, action) for action in actions]
    values: list[list[float]] = [[] for _ in actions]
    for _ in range(samples):
        world = sample_world(obs, rng)
        for i, action in enumerate(actions):
            values[i].append(_gain(obs, outcome(world, action)) + spent[i])
    valued = tuple(ActionValue(str(a), *mean_se(v)) for a, v in zip(actions, values, strict=True))
    best = max(range(len(actions)), key=lambda i: (valued[i].mean, i == mine))
    loss, loss_se = mean_se([b - c for b, c in zip(values[best], values[mine], strict=True)])
    return Decision(deal, obs.seat, kind, trick, text, valued[best].action, loss, loss_se, valued, autopilot)


def luck(match: Match, samples: int, rng: random.Random) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Per seat, the luck of the deal ``match`` stands at the start of (before the declaration), and its
    standard error: see the module's docstring. The random deals that give the seats' averages are
    shared by every seat."""
    views = [match.observation(seat) for seat in range(match.players)]
    declarer = views[match.declarer]
    base = []
    for _ in range(samples):
        hands = _random_deal(match.players, rng)  # every hand at random, the declarer's too
        world = World.from_observation(replace(declarer, hand=hands[declarer.seat]), hands)
        base.append(outcome(world, None))
    figures, errors = [], []
    for view in views:
        sign = 1 if view.is_declarer else -1
        worth, worth_se = mean_se([sign * outcome(sample_world(view, rng), None) for _ in range(samples)])
        average, average_se = mean_se([sign * points for points in base])
        figures.append(worth - average)
        errors.append(math.sqrt(worth_se**2 + average_se**2))
    return tuple(figures), tuple(errors)


def _random_deal(players: int, rng: random.Random) -> list[tuple[Card, ...]]:
    """Every seat a random hand of six, in deck order (the order an observation shows a hand in)."""
    deck = list(DECK)
    rng.shuffle(deck)
    return [
        tuple(sorted(deck[6 * seat : 6 * seat + 6], key=lambda card: card.index)) for seat in range(players)
    ]


def analyse(record: MatchRecord, samples: int = DEFAULT_SAMPLES, seed: int = 0) -> Analysis:
    """Every decision and every deal's luck of ``record``, which must hold whole deals that replay through
    the rules (any stored or recorded match does). The caller decides whether its deals may be shown.

    >>> from pyramid_sdk import Match, Rules
    >>> match = Match(Rules(players=2), seed=4)
    >>> match.play_out(until=Phase.DEAL_OVER)
    >>> result = analyse(match.record(), samples=2)
    >>> len(result.decisions), len(result.luck), result.decisions[-1].loss  # 1 declaration, 12 cards
    (13, 1, 0.0)
    """
    since = dict(zip(record.forfeits, record.forfeit_deals, strict=True))
    match = Match(record.rules, record.seed, record.seats)
    decisions: list[Decision] = []
    lucks: list[DealLuck] = []
    for deal in record.deals:
        if match.phase is Phase.DEAL_OVER:
            match.next_deal()
        match.arrange(deal.hands)  # the record's hands, whatever the seed would deal (a test position)
        rng = random.Random(derive_seed(seed, "analysis", record.seed, deal.number, "luck"))
        figures, errors = luck(match, samples, rng)
        lucks.append(DealLuck(deal.number, figures, errors))
        decisions += _deal_decisions(match, deal, samples, seed, record.seed, since)
    return Analysis(fingerprint(record), record.seats, samples, seed, POLICY, tuple(decisions), tuple(lucks))


def _deal_decisions(
    match: Match, deal: DealRecord, samples: int, seed: int, match_seed: int, since: dict[int, int]
) -> list[Decision]:
    """Plays ``deal`` on ``match`` (standing at its start), analysing each decision on the way."""
    decisions = []
    actions: list[tuple[int, Action]] = [(0, deal.declaration)]
    actions += [(n, PLAYS[card.index]) for n, trick in enumerate(deal.tricks, 1) for card in trick.cards]
    for step, (trick, action) in enumerate(actions):
        seat = match.to_act
        assert seat is not None
        if step and (step - 1) % match.players == 0:  # a trick's first card: its talk was said before it
            for message in deal.talk:
                if message.trick == trick:
                    match.say(message.seat, message.text)
        rng = random.Random(derive_seed(seed, "analysis", match_seed, deal.number, step))
        autopilot = deal.number >= since.get(seat, deal.number + 1)
        decisions.append(decision(match.observation(seat), action, samples, rng, deal.number, autopilot))
        match.apply(action)
    return decisions
