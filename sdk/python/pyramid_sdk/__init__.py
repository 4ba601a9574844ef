"""Pyramid Arena's game library and bot SDK.

The game library (cards, rules, pyramid, engine, observation, record) and the bot API (``Bot``) are pure
Python with no I/O and no dependency beyond the standard library; the referee and every Python bot build
on them. ``pyramid_sdk.client.run`` connects a bot to a referee over gRPC.
"""

from pyramid_sdk.actions import (
    DECLARATIONS,
    PLAYS,
    Action,
    Declare,
    IllegalActionError,
    IllegalTalkError,
    InvalidActionError,
    MalformedActionError,
    NotYourTurnError,
    Play,
    parse_action,
)
from pyramid_sdk.bot import Bot, MatchInfo, MatchResult, TimeControl
from pyramid_sdk.cards import DECK, Card, CardError, Rank, Suit, format_cards
from pyramid_sdk.engine import Match, deal_hands, first_dealer
from pyramid_sdk.observation import Clock, Observation, Phase, TalkMessage, Trick
from pyramid_sdk.pyramid import Pyramid, PyramidEntry, render_pyramid
from pyramid_sdk.record import DealRecord, MatchRecord, RecordError
from pyramid_sdk.rules import (
    QUOTAS,
    Rules,
    RulesError,
    Talk,
    TrickWinner,
    score,
    trick_winner_index,
    worst_score,
)
from pyramid_sdk.seeds import derive_seed

__all__ = [
    "DECK",
    "DECLARATIONS",
    "PLAYS",
    "QUOTAS",
    "Action",
    "Bot",
    "Card",
    "CardError",
    "Clock",
    "DealRecord",
    "Declare",
    "IllegalActionError",
    "IllegalTalkError",
    "InvalidActionError",
    "MalformedActionError",
    "Match",
    "MatchInfo",
    "MatchRecord",
    "MatchResult",
    "NotYourTurnError",
    "Observation",
    "Phase",
    "Play",
    "Pyramid",
    "PyramidEntry",
    "Rank",
    "RecordError",
    "Rules",
    "RulesError",
    "Suit",
    "Talk",
    "TalkMessage",
    "TimeControl",
    "Trick",
    "TrickWinner",
    "deal_hands",
    "derive_seed",
    "first_dealer",
    "format_cards",
    "parse_action",
    "render_pyramid",
    "score",
    "trick_winner_index",
    "worst_score",
]
