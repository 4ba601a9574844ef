"""The bot API: subclass :class:`Bot`, write :meth:`Bot.declare` and :meth:`Bot.play`.

The same object plays in-process (the referee calls it directly: trusted, fast, for experiments) or over
gRPC through :func:`pyramid_sdk.client.run`; this module imports no networking so that in-process bots and
simulations need none.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyramid_sdk.actions import PLAYS, Action, Declare, Play
from pyramid_sdk.cards import Card
from pyramid_sdk.debugging import add_line
from pyramid_sdk.observation import Observation
from pyramid_sdk.rules import Rules


@dataclass(frozen=True, slots=True)
class TimeControl:
    """Seconds a seat may think: ``per_action`` for each decision, plus a ``bank`` for the whole match
    that pays for any time over ``per_action``."""

    per_action: float = 1.0
    bank: float = 20.0


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """What a bot is told when a match starts."""

    match_id: str
    seat: int
    seat_names: tuple[str, ...]
    rules: Rules
    time_control: TimeControl
    seed: int
    """This bot's own seed for the match: seed your random generator with it and the match replays
    exactly. It says nothing about the deck."""


@dataclass(frozen=True, slots=True)
class MatchResult:
    """What a bot is told when a match ends. ``faults`` are this bot's own, as one-line texts."""

    match_id: str
    totals: tuple[int, ...]
    ranks: tuple[int, ...]
    faults: tuple[str, ...] = ()


class Bot:
    """Base class of a Pyramid bot. Override :meth:`declare` and :meth:`play`; the hooks are optional.

    The methods are called in order for one match at a time; a bot process may play many matches in a
    row, each announced by :meth:`match_start`.
    """

    name: str = "bot"
    version: str = "0"

    def match_start(self, info: MatchInfo) -> None:
        """A match begins; ``info.seed`` seeds this bot's randomness."""

    def declare(self, obs: Observation) -> Declare:
        """Choose tricks and trump: one of ``obs.legal_declarations``."""
        raise NotImplementedError(f"{type(self).__name__} must implement declare()")

    def play(self, obs: Observation) -> Card | Play:
        """Choose a card: one of ``obs.legal_cards``. Return ``Play(card, talk="...")`` to talk as a
        defender (see docs/RULES.md for the limits)."""
        raise NotImplementedError(f"{type(self).__name__} must implement play()")

    def deal_end(self, obs: Observation) -> None:
        """A deal is over: ``obs`` shows all six tricks and the updated pyramids."""

    def debug(self, text: object) -> None:
        """Adds a line to the debug text sent with this bot's next answer: what it thought, for its
        author. It never changes the play and no other seat sees it; the referee keeps it apart, for the
        organiser and the author (``referee logs LEAGUE ENTRANT``), at most
        :data:`~pyramid_sdk.debugging.MAX_DEBUG_BYTES` per answer (docs/WRITING_A_BOT.md). A line
        written in ``match_start`` or ``deal_end`` goes with the next answer; one in ``match_end`` is
        dropped."""
        add_line(self, text)

    def match_end(self, result: MatchResult) -> None:
        """The match is over."""

    def act(self, obs: Observation) -> Action:
        """The action for an observation in which it is this bot's turn (used by the referee and SDK)."""
        legal = obs.legal_actions
        if legal and isinstance(legal[0], Declare):  # a turn offers declarations or cards, never both
            return self.declare(obs)
        choice = self.play(obs)
        if isinstance(choice, Card):
            return PLAYS[choice.index]  # the interned play: the SDK has its encoding ready
        return choice if isinstance(choice, Play) else Play(choice)
