"""A bot that crashes is credited only what it made itself (issue #24, docs/RULES.md "Forfeits"): a real
bot process that exits on its 10th move, in a real league through the real CLI, against two honest bots and
one that faults (the session's shared quitter league, tests/support/leagues.py).

Before the rule, the referee's autopilot finished the quitter's matches and its points were the
quitter's: it showed more points per match than the random bot. Each reader of the results is checked
against figures this test derives itself from the exported deals.
"""

import json
import re
import sqlite3
import statistics

from referee.figures import difference, likelihood
from referee.report.crosstable import HeadToHead
from support import ROOT
from support.cli import export, referee
from support.leagues import copy_league

WORST = {0: -2, 1: 0, 2: 2, 3: 4, 4: 2, 5: 0, 6: -2}
"""The worst score of each declared number, written out here rather than taken from the code under test."""
OTHERS = ("floaty", "random", "heuristic")
"""The quitter's opponents."""


def credited(line: dict) -> list[int]:
    """The credited totals of an export line, derived from its deals: each forfeited seat keeps the
    points of the deals it declared before its forfeit deal, and the worst score after."""
    since = dict(zip(line["forfeits"], line["forfeit_deals"], strict=True))
    points = [0] * line["players"]
    for deal in line["deals"]:
        seat = deal["declarer"]
        late = seat in since and deal["number"] >= since[seat]
        points[seat] += WORST[deal["declared"]] if late else deal["points"]
    return points


def per_match(lines: list[dict], totals) -> dict[str, float]:
    """Each entrant's points per match as the leaderboard counts them: the mean over tables of its mean
    at each table."""
    tables: dict[str, dict[str, list[int]]] = {}
    for line in lines:
        for seat, name in enumerate(line["seats"]):
            tables.setdefault(name, {}).setdefault(line["table_id"], []).append(totals(line)[seat])
    return {name: statistics.fmean(map(statistics.fmean, t.values())) for name, t in tables.items()}


def differences(lines: list[dict], first: str, second: str) -> tuple[float, ...]:
    """Per table, the mean credited difference first − second over their shared matches."""
    tables: dict[str, list[int]] = {}
    for line in lines:
        if first in line["seats"] and second in line["seats"]:
            points = credited(line)
            a, b = line["seats"].index(first), line["seats"].index(second)
            tables.setdefault(line["table_id"], []).append(points[a] - points[b])
    return tuple(statistics.fmean(values) for values in tables.values())


def test_the_quitter_forfeits_every_match_and_the_run_says_so_with_exit_code_7(quitter_league):
    _, run, lines = quitter_league
    assert run.returncode == 7, run.stdout + run.stderr
    said = [line for line in run.stderr.splitlines() if line.startswith("forfeited:")]
    assert said == [
        "forfeited: quitter forfeited every match it played (12 of 12); the last one in deal 2, disconnect: "
        "the bot closed its stream; it exited with code 3; its last output: 'leaving on my 10th move' "
        "(exit 7)"
    ]
    last = run.stdout.rstrip().splitlines()[-2:]  # the leaderboard came first: its format, its tied groups
    assert last[0].strip() == "format: round-robin, 2 rounds"
    assert last[1].startswith(("tied (order not decided): ", "every neighbour decided"))
    quitter = [line for line in lines if "quitter" in line["seats"]]
    assert len(quitter) == 12
    assert all(line["seats"][line["forfeits"][0]] == "quitter" for line in quitter)


def test_the_export_and_the_database_credit_only_what_the_bot_made_itself(quitter_league):
    path, _, lines = quitter_league
    for line in lines:
        assert line["credited"] == credited(line)
        for seat, deal in zip(line["forfeits"], line["forfeit_deals"], strict=True):
            assert deal == max(f["deal"] for f in line["faults"] if f["seat"] == seat)
    quitter = [line for line in lines if line["forfeits"]]
    assert all(line["credited"] != line["totals"] for line in quitter)  # the table's play stays recorded
    with sqlite3.connect(path.with_suffix(".sqlite")) as db:
        stored = {
            (match_id, seat): (total, points)
            for match_id, seat, total, points in db.execute(
                "SELECT match_id, seat, total, credited FROM seats"
            )
        }
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("2",)
    assert stored == {
        (line["match_id"], seat): (line["totals"][seat], line["credited"][seat])
        for line in lines
        for seat in range(line["players"])
    }
    # docs/FORMATS.md's reader derives the same figures from each line
    text = (ROOT / "docs/FORMATS.md").read_text(encoding="utf-8")
    namespace: dict = {}
    exec(re.search(r"```python\n(.*?)```", text, re.DOTALL).group(1), namespace)
    for line in lines:
        namespace["check"](json.dumps(line))


def test_points_per_match_crosstable_and_los_count_the_credited_figure(quitter_league):
    path, _, lines = quitter_league
    board = referee("leaderboard", path, "--format", "json")
    rows = {row["entrant"]: row for row in json.loads(board.stdout)}
    expected = per_match(lines, credited)
    assert {name: row["mean_points"] for name, row in rows.items()} == {
        name: round(value, 2) for name, value in expected.items()
    }
    # With the autopilot's points the quitter would outscore the random bot; credited, it is last by far.
    as_played = per_match(lines, lambda line: line["totals"])
    assert as_played["quitter"] > as_played["random"]
    assert rows["quitter"]["mean_points"] < min(rows[other]["mean_points"] for other in OTHERS)
    assert rows["quitter"]["rank"] == 4
    assert rows["quitter"]["forfeits"] == 12

    cross = referee("leaderboard", path, "--crosstable").stdout
    row = next(line for line in cross.splitlines() if line.strip().startswith("quitter "))
    for other in OTHERS:
        assert difference(statistics.fmean(differences(lines, "quitter", other))) in row
        assert difference(statistics.fmean(differences(lines, other, "quitter"))).startswith("+")
    above = next(name for name, r in rows.items() if r["rank"] == 3)  # the rank above the quitter
    los = HeadToHead(above, "quitter", differences(lines, above, "quitter"), 4).los
    assert f"  {above} > quitter: {likelihood(los)}" in cross.splitlines()


def test_matches_replay_and_the_report_show_the_credited_figure(quitter_league, tmp_path):
    path, _, lines = quitter_league
    first = next(line for line in lines if line["forfeits"])
    seat = first["forfeits"][0]
    points, played, deal = first["credited"][seat], first["totals"][seat], first["forfeit_deals"][0]
    assert points < played

    listing = referee("matches", path).stdout
    assert f"quitter {points} (forfeit in deal {deal})" in listing
    replay = referee("replay", path, first["match_id"]).stdout
    assert re.search(
        rf"\. quitter +{points}  \(forfeited in deal {deal}; {played} with the referee's autopilot\)", replay
    )

    assert referee("report", path, "-o", tmp_path / "site").returncode == 0
    site = tmp_path / "site"
    index = (site / "index.html").read_text(encoding="utf-8")
    row = re.search(
        r"<tr>\s*<td>\d+</td>\s*<th scope=\"row\"><a [^>]*>quitter</a></th>(.*?)</tr>", index, re.DOTALL
    )
    cells = re.findall(r"<td>(.*?)</td>", row.group(1))
    assert cells[6] == f"{per_match(lines, credited)['quitter']:.1f}"  # points/match
    matches = (site / "matches.html").read_text(encoding="utf-8")
    assert f"quitter ({points}) (forfeited in deal {deal})" in matches
    page = next(
        p.read_text(encoding="utf-8")
        for p in site.glob("match-*.html")
        if f">Match {first['match_id']}<" in p.read_text(encoding="utf-8")
    )
    assert (
        f"quitter · {points} points (forfeited in deal {deal}): {played} with the referee's autopilot" in page
    )
    entrant = (site / "entrant-quitter.html").read_text(encoding="utf-8")
    assert f"{points} points, rank 2 (forfeited in deal {deal})" in entrant


def test_a_version_1_database_is_read_as_it_is_and_brought_to_version_2_by_a_run(quitter_league, tmp_path):
    path, _, lines = quitter_league
    old = copy_league(path, tmp_path)  # the shared league stays as it was played
    database = old.with_suffix(".sqlite")
    with sqlite3.connect(database) as db:  # as a referee before forfeit_deals and seats.credited wrote it
        db.execute("ALTER TABLE seats DROP COLUMN credited")
        for match_id, record in db.execute("SELECT match_id, record FROM matches").fetchall():
            data = json.loads(record)
            del data["forfeit_deals"]
            db.execute("UPDATE matches SET record = ? WHERE match_id = ?", (json.dumps(data), match_id))
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    assert export(old) == lines  # deals from the faults
    with sqlite3.connect(database) as db:  # reading left it as it was
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("1",)
        assert "credited" not in {row[1] for row in db.execute("PRAGMA table_info(seats)")}
    run = referee("run", old)
    assert run.returncode == 7, run.stderr  # nothing to play; the quitter still forfeited everything
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("2",)
        stored = {
            (match_id, seat): points
            for match_id, seat, points in db.execute("SELECT match_id, seat, credited FROM seats")
        }
    assert stored == {(line["match_id"], s): line["credited"][s] for line in lines for s in range(2)}
    with sqlite3.connect(database) as db:
        db.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    newer = referee("leaderboard", old)
    assert newer.returncode == 1
    assert newer.stderr == (
        f"Error: {database}: results schema version 3, this referee reads versions 1 to 2; "
        "point database: at another file\n"
    )
