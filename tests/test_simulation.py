"""Property tests of the simulation API (pyramid_sdk.simulation): a sampled world agrees with what the seat
observed, and playing on from it follows the rules, move for move as the engine plays them."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from pyramid_sdk import DECK, Declare, Match, Phase, Rules, Suit, TrickWinner
from pyramid_sdk.cardsets import cards_of, mask_of
from pyramid_sdk.simulation import World, lowest_card, play_out, sample_hands, sample_world

seeds = st.integers(min_value=0, max_value=2**63 - 1)
positions = st.fixed_dictionaries(
    {
        "players": st.sampled_from([2, 3, 4]),
        "rule": st.sampled_from(list(TrickWinner)),
        "seed": seeds,
        "deal": st.integers(min_value=1, max_value=3),
        "steps": st.integers(min_value=0, max_value=24),
        "rng": seeds,
    }
)


def _position(p: dict) -> tuple[Match, random.Random]:
    """A match in deal ``p["deal"]`` after ``p["steps"]`` random actions of that deal (fewer if it ends)."""
    match = Match(Rules(players=p["players"], trick_winner=p["rule"]), p["seed"])
    rng = random.Random(p["rng"])
    for _ in range(p["deal"] - 1):  # to the start of the next deal
        match.play_out(lambda match, seat: rng.choice(match.legal_actions()), until=Phase.DECLARE)
    for _ in range(p["steps"]):
        if sum(len(match.hand(seat)) for seat in range(match.players)) <= 1:
            break  # the next card ends the deal: keep a position to simulate from
        match.apply(rng.choice(match.legal_actions()))
    return match, rng


@settings(max_examples=60, deadline=None)
@given(p=positions)
def test_a_sampled_world_agrees_with_the_observation(p):
    match, rng = _position(p)
    obs = match.observation(match.to_act)
    hands = sample_hands(obs, rng)
    assert hands[obs.seat] == obs.hand
    dealt = [card for hand in hands for card in hand]
    assert len(dealt) == len(set(dealt))
    assert not set(dealt) & obs.played_cards
    for seat, hand in enumerate(hands):
        assert len(hand) == obs.hand_size(seat) == len(match.hand(seat))
        if seat != obs.seat:
            assert set(hand) <= set(obs.unseen_cards)
    # The engine, set up from the sample, shows the seat exactly what it saw.
    assert Match.from_observation(obs, hands).observation(obs.seat) == obs
    world = World.from_observation(obs, hands)
    assert world.unseen(obs.seat) == mask_of(obs.unseen_cards)
    assert world.legal_actions() == obs.legal_actions
    assert (world.to_act, world.declarer, world.taken, world.phase) == (
        obs.to_act,
        obs.declarer,
        list(obs.taken),
        obs.phase,
    )


@settings(max_examples=60, deadline=None)
@given(p=positions)
def test_playing_on_from_a_sampled_world_follows_the_rules(p):
    match, rng = _position(p)
    obs = match.observation(match.to_act)
    hands = sample_hands(obs, rng)
    world = World.from_observation(obs, hands)
    twin = Match.from_observation(obs, hands)
    before = world.copy()

    def in_step(twin, seat):
        """The world and its twin agree before every action, and both take it."""
        assert world.legal_actions() == twin.legal_actions()
        assert [world.hand(seat) for seat in range(world.players)] == [
            twin.hand(s) for s in range(twin.players)
        ]
        action = rng.choice(twin.legal_actions())
        world.apply(action)
        return action

    twin.play_out(in_step, until=Phase.DEAL_OVER)
    assert twin.phase in (Phase.DEAL_OVER, Phase.MATCH_OVER)
    assert world.is_over
    assert world.legal_actions() == ()
    assert world.points == twin.pyramids[twin.declarer].entries[-1].points
    assert world.taken[world.declarer] == twin.record().deals[-1].taken
    # The copy taken before play was untouched by it.
    assert before.hands == [mask_of(hand) for hand in hands]
    assert before.to_act == obs.to_act


@settings(max_examples=30, deadline=None)
@given(p=positions)
def test_sampling_is_seeded_and_covers_the_unseen_cards(p):
    match, _ = _position(p)
    obs = match.observation(match.to_act)
    first = [sample_hands(obs, random.Random(9)) for _ in range(2)]
    assert first[0] == first[1]
    # Over many draws every unseen card reaches every other seat that holds cards: nothing is pinned.
    rng = random.Random(p["rng"])
    reached = {seat: set() for seat in range(obs.players) if seat != obs.seat and obs.hand_size(seat)}
    for _ in range(400):
        world = sample_world(obs, rng)
        for seat in reached:
            reached[seat] |= set(world.hand(seat))
    for cards in reached.values():
        assert cards == set(obs.unseen_cards)


def test_a_world_refuses_what_the_rules_refuse():
    match = Match(Rules(players=2), seed=3)
    obs = match.observation(match.to_act)
    world = sample_world(obs, random.Random(0))
    stranger = next(card for card in DECK if card not in world.hand(world.to_act))
    for wrong in (
        lambda: world.play(stranger),
        lambda: world.declare(Declare(9, Suit.SPADES)),
    ):
        try:
            wrong()
        except ValueError:
            pass
        else:
            raise AssertionError("an illegal action was taken")
    world.declare(obs.legal_declarations[0])
    play_out(world, lowest_card)
    assert world.is_over
    assert cards_of(world.hands[0]) == ()
