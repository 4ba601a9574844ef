"""Property tests: random seeds and random legal play for 2, 3 and 4 players obey every rule."""

import contextlib
import copy
import itertools
import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from pyramid_sdk import IllegalTalkError, Match, MatchRecord, Phase, Play, Rules, Talk, TrickWinner, score
from support.playthrough import TALK_WORDS, cards_in, play_random

rules_strategy = st.builds(
    Rules,
    players=st.sampled_from([2, 3, 4]),
    trick_winner=st.sampled_from(list(TrickWinner)),
    talk=st.sampled_from(list(Talk)),
)
seeds = st.integers(min_value=0, max_value=2**63 - 1)


@settings(max_examples=30, deadline=None)
@given(rules=rules_strategy, seed=seeds, agent_seed=seeds)
def test_random_legal_play_obeys_the_rules(rules, seed, agent_seed):
    played_this_deal: dict[int, set] = {}

    def visit(match: Match, obs) -> None:
        # What the seat may know: its own hand and the cards played in this deal, nothing else.
        allowed = set(match.hand(obs.seat)) | obs.played_cards
        assert set(cards_in(obs)) <= allowed
        assert set(obs.hand) == set(match.hand(obs.seat))
        assert obs.legal_actions == match.legal_actions(obs.seat)
        for other in range(rules.players):
            if other != obs.seat:
                assert not set(match.hand(other)) & set(cards_in(obs))
                assert match.observation(other).legal_actions == ()
        played_this_deal.setdefault(obs.deal_number, set()).update(obs.played_cards)

    match = play_random(rules, seed, agent_seed, visit)
    record = match.record()
    n = rules.players
    assert match.phase is Phase.MATCH_OVER
    assert len(record.deals) == 16 * n
    declarations = Counter()
    for deal in record.deals:
        assert len(deal.tricks) == 6
        cards = [card for trick in deal.tricks for card in trick.cards]
        assert len(cards) == len(set(cards)) == 6 * n
        dealt = {card for hand in deal.hands for card in hand}
        assert set(cards) == dealt
        # Every card any seat saw played in this deal was dealt: a set-aside card never reaches a trick.
        assert played_this_deal[deal.number] <= dealt
        assert deal.points == score(deal.declaration.tricks, deal.taken)
        assert deal.taken == sum(trick.winner == deal.declarer for trick in deal.tricks)
        assert deal.tricks[0].leader == deal.declarer == (deal.dealer + 1) % n
        for before, after in itertools.pairwise(deal.tricks):
            assert after.leader == before.winner
        declarations[deal.declarer, deal.declaration.tricks] += 1
    for seat in range(n):
        assert [declarations[seat, k] for k in range(7)] == [1, 2, 3, 4, 3, 2, 1]
        assert match.pyramids[seat].total == sum(d.points for d in record.deals if d.declarer == seat)
    assert record.totals == match.totals
    assert sorted(record.ranks)[0] == 1
    # Same seed and same play: an identical record, and the record replays through the rules.
    assert play_random(rules, seed, agent_seed).record() == record
    assert Match.replay(MatchRecord.from_json(record.to_json())).record() == record


talk_on_rules = st.builds(
    Rules,
    players=st.sampled_from([2, 3, 4]),
    trick_winner=st.sampled_from(list(TrickWinner)),
    talk=st.sampled_from([Talk.OPEN, Talk.DEFENDERS]),
    talk_max_per_trick=st.integers(min_value=1, max_value=3),
)


def _random_state(rules: Rules, seed: int, rng: random.Random, deals: int, steps: int) -> Match:
    """A match ``deals`` deals in and ``steps`` actions into the next one, defenders talking often, in
    and out of turn, up to their per-trick limits."""
    match = Match(rules, seed)
    for _ in range(deals):  # to the start of the next deal
        match.play_out(lambda match, seat: rng.choice(match.legal_actions()), until=Phase.DECLARE)
    for _ in range(steps):
        if match.phase is not Phase.PLAY and match.phase is not Phase.DECLARE:
            break
        if match.phase is Phase.PLAY:
            for seat in range(rules.players):
                if seat != match.declarer and rng.random() < 0.4:
                    with contextlib.suppress(IllegalTalkError):  # over its limit for this trick
                        match.say(seat, rng.choice(TALK_WORDS))
        match.apply(rng.choice(match.legal_actions()))
    return match


def _sample_hands(obs, rng: random.Random) -> list[list]:
    unseen = list(obs.unseen_cards)
    rng.shuffle(unseen)
    hands = []
    for seat in range(obs.players):
        if seat == obs.seat:
            hands.append(list(obs.hand))
        else:
            hands.append(unseen[: obs.hand_size(seat)])
            del unseen[: obs.hand_size(seat)]
    return hands


@settings(max_examples=60, deadline=None)
@given(
    rules=talk_on_rules,
    seed=seeds,
    agent_seed=seeds,
    deals=st.integers(min_value=0, max_value=2),
    steps=st.integers(min_value=0, max_value=25),
    observer=st.integers(min_value=0, max_value=3),
)
def test_from_observation_gives_back_the_observation(rules, seed, agent_seed, deals, steps, observer):
    rng = random.Random(agent_seed)
    match = _random_state(rules, seed, rng, deals, steps)
    if match.phase is not Phase.PLAY and match.phase is not Phase.DECLARE:
        return
    seat = observer % rules.players
    obs = match.observation(seat)
    hands = _sample_hands(obs, rng)
    sim = Match.from_observation(obs, hands)
    assert sim.observation(seat) == obs
    # The talk limits carry over: each seat that sees the talk may say more exactly when the original
    # match lets it.
    if match.phase is Phase.PLAY and (rules.talk is Talk.OPEN or seat != obs.declarer):
        for other in range(rules.players):
            verdicts = []
            for state in (copy.deepcopy(match), Match.from_observation(obs, hands)):
                try:
                    state.say(other, "low")
                    verdicts.append("ok")
                except IllegalTalkError as exc:
                    verdicts.append(str(exc))
            assert verdicts[0] == verdicts[1]
    # A playout deals only what the seat could not see: its own cards, and unseen ones for the others.
    unseen = set(obs.unseen_cards)

    def choose(sim, acting):
        action = rng.choice(sim.legal_actions())
        if isinstance(action, Play):
            assert action.card in (set(obs.hand) if acting == seat else unseen)
        return action

    sim.play_out(choose, until=Phase.DEAL_OVER)
    assert sim.phase in (Phase.DEAL_OVER, Phase.MATCH_OVER)
    assert sim.deal_number == obs.deal_number
