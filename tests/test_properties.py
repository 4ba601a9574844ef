"""Property tests: random seeds and random legal play for 2, 3 and 4 players obey every rule."""

import itertools
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from playthrough import cards_in, play_random
from pyramid_sdk import Match, MatchRecord, Phase, Rules, Talk, TrickWinner, score

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
        assert set(cards) == {card for hand in deal.hands for card in hand}
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
