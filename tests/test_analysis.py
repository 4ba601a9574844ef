"""The match analysis's estimator, its files and its command on a records file, in this process: a
decision with one legal action costs nothing, a seed reproduces every figure, luck is unbiased, losses
are measured against the best action, an analysis is shown only beside the record it was made from,
and a table whose deals are hidden is never analysed."""

import json
import math
import random
import statistics

from click.testing import CliRunner

from pyramid_sdk import Match, Phase, Rules
from pyramid_sdk.actions import Play
from referee.analysis import storage
from referee.analysis.estimate import Analysis, Kind, analyse, decision, luck
from referee.cli import main


def played(players: int, seed: int, deals: int) -> Match:
    """A match of default actions, stopped after ``deals`` whole deals."""
    match = Match(Rules(players=players), seed=seed, seats=[f"p{seat}" for seat in range(players)])
    for _ in range(deals):
        match.play_out(until=Phase.DEAL_OVER)
    return match


def test_a_decision_with_one_legal_action_costs_nothing():
    match = played(3, seed=5, deals=1)
    result = analyse(match.record(), samples=3)
    last_cards = [d for d in result.decisions if d.kind is Kind.PLAY and d.trick == 6]
    assert len(last_cards) == 3
    for d in last_cards:
        assert (d.loss, d.loss_se, d.chosen, d.best) == (0.0, 0.0, d.chosen, d.chosen)
        assert len(d.actions) == 1
        assert math.isnan(d.actions[0].mean)  # not sampled: there was nothing to choose


def test_the_loss_is_against_the_best_action_in_the_same_worlds():
    match = Match(Rules(players=4), seed=9)
    match.apply(match.default_action())
    obs = match.observation(match.to_act)
    for card in obs.legal_cards:
        d = decision(obs, Play(card), 6, random.Random(3), 1, False)
        means = {a.action: a.mean for a in d.actions}
        assert len(means) == len(obs.legal_cards) == 6
        assert means[d.best] == max(means.values())
        assert d.loss == means[d.best] - means[d.chosen] >= 0
        assert (d.loss == 0) == (means[d.chosen] == max(means.values()))


def test_a_seed_gives_the_same_analysis_and_another_seed_another():
    record = played(2, seed=11, deals=2).record()
    first = analyse(record, samples=3, seed=7)
    assert analyse(record, samples=3, seed=7) == first
    assert first.to_dict() == Analysis.from_dict(json.loads(json.dumps(first.to_dict()))).to_dict()
    assert analyse(record, samples=3, seed=8).to_dict() != first.to_dict()
    assert first.samples == 3
    assert first.seed == 7


def test_luck_averages_to_zero_for_every_seat():
    """Over many random deals a seat's luck is zero on average (within three standard errors): the
    figure measures the cards against the average hand, not the seat or the rules."""
    figures: list[list[float]] = [[], [], []]
    for seed in range(60):
        match = Match(Rules(players=3), seed=1000 + seed)
        for seat, figure in enumerate(luck(match, 6, random.Random(seed))[0]):
            figures[seat].append(figure)
    for seat_figures in figures:
        mean = statistics.fmean(seat_figures)
        error = statistics.stdev(seat_figures) / math.sqrt(len(seat_figures))
        assert abs(mean) < 3 * error + 0.05, (mean, error)
    # ... and it says something: the declarer's luck varies with his cards.
    assert statistics.stdev(figures[0] + figures[1] + figures[2]) > 0.5


def test_a_kept_analysis_is_shown_only_beside_its_record(tmp_path):
    database = tmp_path / "league.sqlite"
    record = played(2, seed=3, deals=1).record()
    result = analyse(record, samples=2)
    path = storage.save(database, "r1:a,b", result)
    assert path.parent == tmp_path / "league-analysis"
    assert storage.load(database, "r1:a,b", record) == result
    assert storage.load(database, "r1:a,c", record) is None
    other = played(2, seed=4, deals=1).record()
    assert storage.load(database, "r1:a,b", other) is None  # played again: the old analysis is stale
    path.write_text("{not json", encoding="utf-8")
    assert storage.load(database, "r1:a,b", record) is None


def _records_file(tmp_path, hidden: bool):
    match = played(2, seed=21, deals=32)
    data = match.record().to_dict()
    line = {
        "match_id": "r1:ann,bob",
        "status": "complete",
        "deals_hidden": hidden,
        "players": 2,
        "faults": [],
        **data,
        "rules": {key: value for key, value in data["rules"].items() if key != "players"},
    }
    if hidden:
        line.update(seed=None, deals=[])
    path = tmp_path / "match.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path, match.record()


def test_analyze_a_records_file_as_json(tmp_path):
    path, record = _records_file(tmp_path, hidden=False)
    result = CliRunner().invoke(main, ["analyze", str(path), "--samples", "2", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["samples"], data["seed"], data["policy"]) == (2, 0, "heuristic")
    chosen = [d["chosen"] for d in data["decisions"]]
    expected = []
    for deal in record.deals:
        expected.append(str(deal.declaration))
        expected += [card.code for trick in deal.tricks for card in trick.cards]
    assert chosen == expected
    assert [x["deal"] for x in data["luck"]] == list(range(1, 33))
    assert {s["name"] for s in data["summary"]} == {"0=p0", "1=p1"}
    again = CliRunner().invoke(main, ["analyze", str(path), "--samples", "2", "--json"])
    assert again.output == result.output


def test_analyze_refuses_a_table_whose_deals_are_hidden(tmp_path):
    path, _ = _records_file(tmp_path, hidden=True)
    result = CliRunner().invoke(main, ["analyze", str(path)])
    assert result.exit_code == 1
    assert "hidden until every match of this table is played" in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
