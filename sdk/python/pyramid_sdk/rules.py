"""The rule parameters of a match and the pure rule functions: quotas, trick winner, scoring.

House rules are named parameters (as in OpenSpiel), never global switches, so one process can run
leagues with different variants side by side.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, Final

from pyramid_sdk.cards import Card, Suit

TRICKS_PER_DEAL: Final = 6
"""Every player gets six cards, so every deal has exactly six tricks."""

QUOTAS: Final[tuple[int, ...]] = (1, 2, 3, 4, 3, 2, 1)
"""How many times a player must declare 0, 1, ... 6 tricks in a match (16 declarations in all)."""

DECLARATIONS_PER_PLAYER: Final = sum(QUOTAS)


class RulesError(ValueError):
    """A rule parameter with a value outside what the game allows.

    ``field`` names the parameter and ``problem`` says what is wrong with it, so a caller that knows
    where the value came from (a league file's line) can say so without parsing the message, which is
    ``"field: problem"``.

    >>> error = RulesError("talk", "must be one of open, defenders, off, got 'loud'")
    >>> error.field, str(error)
    ('talk', "talk: must be one of open, defenders, off, got 'loud'")
    """

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem

    def __reduce__(self) -> tuple[type[RulesError], tuple[str, str]]:  # picklable across processes
        return type(self), (self.field, self.problem)


class TrickWinner(enum.StrEnum):
    """How a trick without trumps is won (GAME.md, variant ``trick_winner``)."""

    LED_SUIT = "led-suit"
    """The highest card of the suit that was led; an off-suit non-trump never wins."""
    HIGHEST_RANK = "highest-rank"
    """The highest rank of any suit; among equal ranks the earliest played wins."""


class Talk(enum.StrEnum):
    """Who may talk at the table and who hears it (GAME.md, variant ``talk``)."""

    OPEN = "open"
    """Defenders talk; every player at the table sees the messages."""
    DEFENDERS = "defenders"
    """Defenders talk; only the defenders of that deal see the messages."""
    OFF = "off"
    """Nobody talks."""


@dataclass(frozen=True, slots=True)
class Rules:
    """Everything that varies between matches except the seats and the seed.

    >>> Rules(players=3).deals
    48
    >>> Rules(players=5)
    Traceback (most recent call last):
    ...
    pyramid_sdk.rules.RulesError: players: must be 2, 3 or 4, got 5
    """

    players: int = 4
    trick_winner: TrickWinner = TrickWinner.LED_SUIT
    talk: Talk = Talk.OPEN
    talk_max_length: int = 80
    """Longest table-talk message, in characters."""
    talk_max_per_trick: int = 2
    """Most messages one seat may send during one trick."""

    def __post_init__(self) -> None:
        if isinstance(self.players, bool) or not isinstance(self.players, int) or not 2 <= self.players <= 4:
            raise RulesError("players", f"must be 2, 3 or 4, got {self.players!r}")
        object.__setattr__(self, "trick_winner", _enum_field("trick_winner", TrickWinner, self.trick_winner))
        object.__setattr__(self, "talk", _enum_field("talk", Talk, self.talk))
        for name, low, high in (("talk_max_length", 1, 1000), ("talk_max_per_trick", 0, 100)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise RulesError(name, f"must be a whole number from {low} to {high}, got {value!r}")

    @property
    def deals(self) -> int:
        """Deals in a match: every player declares 16 times."""
        return DECLARATIONS_PER_PLAYER * self.players

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; :meth:`from_dict` reads it back."""
        return {
            key: str(value) if isinstance(value, enum.Enum) else value for key, value in asdict(self).items()
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rules:
        """Builds rules from a mapping such as a league file's ``rules:``, rejecting unknown keys."""
        known = {field.name for field in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise RulesError(unknown[0], f"unknown rule; known rules are {', '.join(sorted(known))}")
        return cls(**dict(data))

    @classmethod
    def for_table(cls, players: int, options: Mapping[str, Any]) -> Rules:
        """Rules for a table of ``players`` seats from rule options (a league's ``rules:``, ``--rule``).
        The number of seats belongs to the table, never to the options: one place says so for both.

        >>> str(Rules.for_table(3, {"talk": "off"}).talk)
        'off'
        >>> Rules.for_table(3, {"players": 2})
        Traceback (most recent call last):
        ...
        pyramid_sdk.rules.RulesError: players: the number of seats is not a rule option
        """
        if "players" in options:
            raise RulesError("players", "the number of seats is not a rule option")
        return cls.from_dict({**options, "players": players})


def _enum_field(name: str, kind: type[enum.StrEnum], value: object) -> Any:
    if isinstance(value, kind):
        return value
    if isinstance(value, str) and value in kind._value2member_map_:
        return kind(value)
    choices = ", ".join(member.value for member in kind)
    raise RulesError(name, f"must be one of {choices}, got {value!r}")


def score(declared: int, taken: int) -> int:
    """The declarer's points for a deal: 10 for an exact hit, 2 fewer per trick off.

    >>> [score(6, taken) for taken in range(7)]
    [-2, 0, 2, 4, 6, 8, 10]
    """
    return 10 - 2 * abs(taken - declared)


def worst_score(declared: int) -> int:
    """The fewest points a declaration of ``declared`` tricks can score: what a forfeited seat is
    credited for each declaration the referee made or finished for it (docs/RULES.md, "Forfeits"), so
    that crashing can never score more than playing on.

    >>> [worst_score(declared) for declared in range(7)]
    [-2, 0, 2, 4, 2, 0, -2]
    >>> sum(quota * worst_score(declared) for declared, quota in enumerate(QUOTAS))  # the lowest total
    24
    """
    return min(score(declared, taken) for taken in range(TRICKS_PER_DEAL + 1))


def trick_winner_index(cards: Sequence[Card], trump: Suit, mode: TrickWinner) -> int:
    """Position in play order of the card that wins a complete trick.

    The highest trump wins if any trump was played. Otherwise ``led-suit`` takes the highest card of the
    led suit and ``highest-rank`` the highest rank of any suit, the earliest played among equal ranks.

    >>> trick_winner_index(Card.parse_many("9S AH TS"), Suit.CLUBS, TrickWinner.LED_SUIT)
    2
    >>> trick_winner_index(Card.parse_many("9S AH TS"), Suit.CLUBS, TrickWinner.HIGHEST_RANK)
    1
    >>> trick_winner_index(Card.parse_many("9S AH 9C"), Suit.CLUBS, TrickWinner.LED_SUIT)
    2
    """
    led = cards[0].suit
    best = 0
    best_key = -1
    for i, card in enumerate(cards):
        if card.suit is trump:
            key = 20 + card.rank
        elif mode is TrickWinner.HIGHEST_RANK or card.suit is led:
            key = 10 + card.rank
        else:
            continue
        if key > best_key:
            best, best_key = i, key
    return best
