"""Random legal play through the public engine API, shared by the property and golden tests.

Every decision goes through ``observation(seat)``, as a bot's would; ``visit`` sees each observation
before the action is chosen, and ``talk`` lets defenders chat so table talk is exercised too.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path

from pyramid_sdk import Action, Card, Match, MatchRecord, Observation, Play, Pyramid, Rules
from referee.league.schedule import ScheduledMatch
from referee.match.outcome import MatchOutcome, MatchStatus

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
TALK_WORDS = ("low", "high", "trump", "duck", "win", "hold")


def play_random(
    rules: Rules,
    seed: int,
    agent_seed: int,
    visit: Callable[[Match, Observation], None] | None = None,
    talk: bool = True,
    seats: list[str] | None = None,
) -> Match:
    rng = random.Random(agent_seed)

    def choose(match: Match, seat: int) -> Action:
        obs = match.observation(seat)
        if visit is not None:
            visit(match, obs)
        action = rng.choice(obs.legal_actions)
        chatty = talk and isinstance(action, Play) and seat != obs.declarer and rules.talk != "off"
        if chatty and rng.random() < 0.1:
            assert isinstance(action, Play)
            action = Play(action.card, " ".join(rng.sample(TALK_WORDS, 2)))
        return action

    match = Match(rules, seed, seats)
    match.play_out(choose)
    return match


def played_outcome(
    scheduled: ScheduledMatch, rules: Rules, status: MatchStatus = MatchStatus.COMPLETE
) -> MatchOutcome:
    """A scheduled match played to its end by random agents (seeded by the match), as the outcome the
    referee stores: real matches for a results database without a bot process."""
    match = play_random(rules, scheduled.seed, scheduled.seed, talk=False, seats=list(scheduled.entrants))
    latencies = tuple((0.001,) * 16 for _ in scheduled.entrants)
    return MatchOutcome(scheduled.match_id, status, match.record(), (), "", latencies, 1.0)


def cards_in(value: object) -> Iterator[Card]:
    """Every card reachable from an observation (or any value built of dataclasses and tuples)."""
    if isinstance(value, Card):
        yield value
    elif isinstance(value, (int, str, Pyramid, Rules)) or value is None:
        return  # by their types these hold no card; skipping them keeps the walk fast
    elif isinstance(value, (tuple, list, frozenset, set)):
        for item in value:
            yield from cards_in(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from cards_in(getattr(value, field.name))


def golden_lines(record: MatchRecord) -> list[str]:
    """A record as JSON lines: a header, one line per deal, the result. Diffs of it read deal by deal."""
    data = record.to_dict()
    deals = data.pop("deals")
    result = {key: data.pop(key) for key in ("totals", "ranks", "forfeits", "forfeit_deals", "complete")}
    return [json.dumps(item, ensure_ascii=False) for item in (data, *deals, result)]


GOLDEN_CASES = {
    2: (Rules(players=2, trick_winner="highest-rank", talk="defenders"), 2002),
    3: (Rules(players=3, talk="open"), 3003),
    4: (Rules(players=4), 4004),
}


def golden_record(players: int) -> MatchRecord:
    rules, seed = GOLDEN_CASES[players]
    return play_random(rules, seed, agent_seed=seed + 1).record()


def golden_path(players: int) -> Path:
    return GOLDEN / f"playthrough-{players}p.jsonl"


if __name__ == "__main__":
    for n in GOLDEN_CASES:
        golden_path(n).write_text("\n".join(golden_lines(golden_record(n))) + "\n", encoding="utf-8")
        print(f"wrote {golden_path(n)}")
