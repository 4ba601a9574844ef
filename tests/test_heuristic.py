"""The SDK's heuristic (pyramid_sdk.heuristic), the playout policy of ``referee analyze``: its two faces,
on an observation and on a world, choose alike; a choice depends only on what the seat to act may know;
hand-made positions show it beating, feeding and waiting as its docstring says; the analysis and the
sample bots play exactly it, and no module of the referee imports code of the sample bots."""

import ast
import random
from pathlib import Path

import pytest

from pyramid_sdk import Card, Declare, Match, Phase, Play, Rules, Suit, TrickWinner
from pyramid_sdk.cardsets import mask_of
from pyramid_sdk.heuristic import (
    SLOT_COST,
    choose_card,
    choose_declaration,
    estimate_tricks,
    heuristic_card,
    heuristic_declaration,
)
from pyramid_sdk.simulation import World, play_out, sample_world
from referee.analysis.worlds import outcome
from sample_bots.heuristic import HeuristicBot


def both_faces_agree(agent_seed):
    """A chooser for Match.play_out that first checks, at the position it is asked about, that the world
    face chooses what the observation face does, then plays a random legal action (so that positions of
    every kind come up, not only the heuristic's own); it counts the positions checked."""
    rng = random.Random(agent_seed)
    checked = [0]

    def choose(match, seat):
        obs = match.observation(seat)
        world = World.from_match(match)
        if match.phase is Phase.DECLARE:
            assert heuristic_declaration(world) == choose_declaration(obs)
        else:
            assert heuristic_card(world) == choose_card(obs)
        checked[0] += 1
        return rng.choice(match.legal_actions())

    return choose, checked


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("rule", list(TrickWinner))
def test_on_a_world_it_chooses_what_it_chooses_on_the_observation(players, rule):
    match = Match(Rules(players=players, trick_winner=rule), seed=players)
    choose, checked = both_faces_agree(agent_seed=7)
    for _ in range(6):
        match.play_out(choose, until=Phase.DEAL_OVER)
    assert checked[0] == 6 * (1 + 6 * players)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_choice_depends_only_on_what_the_seat_to_act_may_know(players):
    """Every world drawn from the seat's own observation (its hand and the cards played kept, the hidden
    cards dealt anew) gets the same choice: the other hands are not read."""
    match = Match(Rules(players=players), seed=11)
    rng = random.Random(3)
    varied = 0

    def choose(match, seat):
        nonlocal varied
        obs = match.observation(seat)
        worlds = [sample_world(obs, rng) for _ in range(5)]
        if match.phase is Phase.DECLARE:
            assert {heuristic_declaration(world) for world in worlds} == {choose_declaration(obs)}
        else:
            assert {heuristic_card(world) for world in worlds} == {choose_card(obs)}
        varied += len({tuple(w.hands) for w in worlds}) > 1
        return rng.choice(match.legal_actions())

    for _ in range(4):
        match.play_out(choose, until=Phase.DEAL_OVER)
    assert varied > 40  # the worlds really differed in what the seat cannot see


def position(declaration, hand, trick=(), leader=0, taken=0, tricks_played=0, to_act=1):
    """A two-seat world in led-suit play, seat 0 declaring: ``hand`` is the seat to act's, ``trick`` the
    cards played so far; the other seat holds cards nobody here reads (its hand is hidden)."""
    own = Card.parse_many(hand)
    on_table = Card.parse_many(" ".join(trick)) if trick else ()
    rest = [card for card in Card.parse_many("9C TC JC QC KC AC 9D TD JD QD") if card not in own]
    hands = [0, 0]
    hands[to_act] = mask_of(own)
    hands[1 - to_act] = mask_of(rest[: len(own) - len(on_table)])
    return World(
        players=2,
        trick_winner=TrickWinner.LED_SUIT,
        declarer=0,
        open_numbers=(0, 1, 2, 3, 4, 5, 6),
        hands=hands,
        played=mask_of(on_table),
        declaration=declaration,
        leader=leader,
        trick=list(on_table),
        taken=[taken, tricks_played - taken],
        tricks_played=tricks_played,
        to_act=to_act,
    )


def test_a_defender_beats_a_declarer_who_needs_tricks_as_cheaply_as_it_can():
    world = position(Declare(3, Suit.CLUBS), "KH AH 9S TS JS QS", trick=["QH"])
    assert heuristic_card(world) == Card.parse("KH")  # not the ace: the king is enough


def test_a_defender_feeds_a_declarer_who_has_enough():
    world = position(Declare(0, Suit.CLUBS), "KH AH 9S TS JS QS", trick=["QH"])
    assert heuristic_card(world) == Card.parse("QS")  # under him, shedding its highest loser


def test_a_declarer_waits_while_he_can_and_takes_tricks_when_he_must():
    hand = "KH 9D AS AC"
    enough = position(Declare(1, Suit.CLUBS), hand, taken=1, tricks_played=2, to_act=0)
    assert heuristic_card(enough) == Card.parse("9D")  # he has his number: he leads low to lose
    short = position(Declare(5, Suit.CLUBS), hand, taken=1, tricks_played=2, to_act=0)
    assert heuristic_card(short) == Card.parse("AC")  # he needs every trick left: his best card


def test_it_declares_the_number_its_estimate_and_the_slot_costs_favour():
    match = Match(Rules(players=4), seed=5)
    obs = match.observation(match.declarer)
    chosen = choose_declaration(obs)
    assert chosen in obs.legal_declarations
    rule = obs.rules.trick_winner

    def value(d):
        return SLOT_COST[rule][d.tricks] - 2 * abs(d.tricks - estimate_tricks(obs.hand, d.trump, rule))

    assert value(chosen) == max(value(d) for d in obs.legal_declarations)


def test_the_analysis_and_the_heuristic_bot_play_the_librarys_heuristic():
    match = Match(Rules(players=3), seed=8)
    view = match.observation(match.declarer)
    rng = random.Random(2)
    for _ in range(20):
        world = sample_world(view, rng)
        mine = world.copy()
        mine.declare(heuristic_declaration(mine))
        play_out(mine, heuristic_card)
        assert outcome(world, None) == mine.points
    bot = HeuristicBot()

    def as_the_bot(match, seat):
        obs = match.observation(seat)
        expected = choose_declaration(obs) if match.phase is Phase.DECLARE else Play(choose_card(obs))
        assert bot.act(obs) == expected
        return expected

    match.play_out(as_the_bot, until=Phase.DEAL_OVER)


def test_no_module_of_the_referee_imports_the_sample_bots():
    """The sample bots are examples to copy: the referee only names them to run them (a ``module:Class``
    text, a ``python -m`` command), so editing one changes no figure and no command of the referee."""
    root = Path(__file__).resolve().parent.parent
    importing = []
    for path in sorted((root / "referee").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            where = path.relative_to(root)
            importing += [f"{where}: {name}" for name in names if name.split(".")[0] == "sample_bots"]
    assert importing == []
