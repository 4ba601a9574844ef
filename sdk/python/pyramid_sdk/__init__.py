"""Pyramid Arena's game library and bot SDK.

The game library (cards, rules, pyramid, engine, observation, record) and the bot API (``Bot``) are pure
Python with no I/O and no dependency beyond the standard library; the referee and every Python bot build
on them. ``pyramid_sdk.client.run`` connects a bot to a referee over gRPC.

The names below load with the first use of their module (PEP 562), not with the package: a bot process
imports the package on its way to ``pyramid_sdk.client``, and should pay only for what it uses (every
match starts fresh bot processes; ``tests/test_startup.py`` keeps the engine and protobuf out of the
client's start).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from pyramid_sdk.dealing import deal_hands, first_dealer
    from pyramid_sdk.engine import Match
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

_MODULES: dict[str, str] = {
    "Action": "pyramid_sdk.actions",
    "DECLARATIONS": "pyramid_sdk.actions",
    "Declare": "pyramid_sdk.actions",
    "IllegalActionError": "pyramid_sdk.actions",
    "IllegalTalkError": "pyramid_sdk.actions",
    "InvalidActionError": "pyramid_sdk.actions",
    "MalformedActionError": "pyramid_sdk.actions",
    "NotYourTurnError": "pyramid_sdk.actions",
    "PLAYS": "pyramid_sdk.actions",
    "Play": "pyramid_sdk.actions",
    "parse_action": "pyramid_sdk.actions",
    "Bot": "pyramid_sdk.bot",
    "MatchInfo": "pyramid_sdk.bot",
    "MatchResult": "pyramid_sdk.bot",
    "TimeControl": "pyramid_sdk.bot",
    "Card": "pyramid_sdk.cards",
    "CardError": "pyramid_sdk.cards",
    "DECK": "pyramid_sdk.cards",
    "Rank": "pyramid_sdk.cards",
    "Suit": "pyramid_sdk.cards",
    "format_cards": "pyramid_sdk.cards",
    "Match": "pyramid_sdk.engine",
    "deal_hands": "pyramid_sdk.dealing",
    "first_dealer": "pyramid_sdk.dealing",
    "Clock": "pyramid_sdk.observation",
    "Observation": "pyramid_sdk.observation",
    "Phase": "pyramid_sdk.observation",
    "TalkMessage": "pyramid_sdk.observation",
    "Trick": "pyramid_sdk.observation",
    "Pyramid": "pyramid_sdk.pyramid",
    "PyramidEntry": "pyramid_sdk.pyramid",
    "render_pyramid": "pyramid_sdk.pyramid",
    "DealRecord": "pyramid_sdk.record",
    "MatchRecord": "pyramid_sdk.record",
    "RecordError": "pyramid_sdk.record",
    "QUOTAS": "pyramid_sdk.rules",
    "Rules": "pyramid_sdk.rules",
    "RulesError": "pyramid_sdk.rules",
    "Talk": "pyramid_sdk.rules",
    "TrickWinner": "pyramid_sdk.rules",
    "score": "pyramid_sdk.rules",
    "trick_winner_index": "pyramid_sdk.rules",
    "worst_score": "pyramid_sdk.rules",
    "derive_seed": "pyramid_sdk.seeds",
}
"""Where each public name lives."""

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


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'pyramid_sdk' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once loaded, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_MODULES])
