"""No secret leaves the referee early, checked through the real CLI on real SQLite files with real bot
processes: a secret league seed appears in no output, a table's deals stay hidden until the table is
complete, and `referee match` tells its bots nothing about its seed."""

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from pyramid_sdk import Match, Rules
from referee.league.modes import Seating
from referee.league.schedule import build_schedule
from referee.match.outcome import MatchStatus
from referee.results.disclosure import disclosure
from referee.results.store import StoredMatch
from referee.run.preflight import PREFLIGHT_SEED
from support import ROOT
from support.cli import export, referee
from support.leagues import MODULE_BOTS

LEAGUE = f"""\
name: Secret League
players: 2
schedule: {{format: round-robin, rounds: 1, seating: balanced}}
rules: {{talk: open}}
time_control: {{per_action: 2s, bank: 20s}}
database: results.sqlite
entrants:
  - name: hooks
    command: python tests/bots/hooks.py
    cwd: {ROOT}
{MODULE_BOTS}"""


def spellings(seed: int) -> list[str]:
    """The ways a seed could be printed: decimal, and hex in either case, with or without padding."""
    return [str(seed), f"{seed:x}", f"{seed:X}", f"{seed:016x}"]


def files_under(folder: Path) -> dict[Path, str]:
    """Every file a person or a bot could read, as text: all but the results database itself (the one
    place the secret is kept, like the referee's memory)."""
    return {
        path: path.read_bytes().decode("utf-8", "replace")
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.name.startswith("results.sqlite")
    }


@pytest.fixture(scope="module")
def secret_league(tmp_path_factory):
    """A league without `seed:` run to the end with a live report; every CLI output kept."""
    folder = tmp_path_factory.mktemp("secret")
    path = folder / "league.yaml"
    path.write_text(LEAGUE, encoding="utf-8")
    outputs = {"run": referee("run", path, "--report", folder / "live", check=True)}
    with sqlite3.connect(folder / "results.sqlite") as db:
        secret = int(db.execute("SELECT value FROM meta WHERE key = 'secret_seed'").fetchone()[0])
    return folder, path, secret, outputs


def test_a_secret_league_seed_appears_in_no_output(secret_league):
    folder, path, secret, outputs = secret_league
    outputs["again"] = referee("run", path, check=True)
    outputs["report"] = referee("report", path, "-o", folder / "report", check=True)
    outputs["export"] = referee("export", path, check=True)
    referee("export", path, "-o", folder / "matches.jsonl", check=True)
    for position in range(1, 7):
        outputs[f"replay {position}"] = referee("replay", path, position, check=True)
    for fmt in ("table", "json", "csv", "markdown"):
        outputs[f"leaderboard {fmt}"] = referee("leaderboard", path, "--format", fmt, check=True)
    outputs["no such match"] = referee("replay", path, "r9:nobody")
    changed = folder / "changed.yaml"  # same database, other rules: refused with an error text
    changed.write_text(path.read_text().replace("talk: open", "talk: off"), encoding="utf-8")
    outputs["refused"] = referee("run", changed)
    assert outputs["refused"].returncode == 1
    assert "--fresh" in outputs["refused"].stderr

    texts = {f"`referee {name}`": r.stdout + r.stderr for name, r in outputs.items()}
    texts |= {str(p.relative_to(folder)): text for p, text in files_under(folder).items()}
    # What was checked: the live and final reports, the export file, the bots' logs, what the bot saw.
    for expected in ("live/index.html", "report/match-0001.html", "matches.jsonl", "results-logs/hooks.log"):
        assert expected in texts
    assert any(name.startswith("results-logs/") for name in texts)
    assert all("secret seed" in texts[f"{site}/index.html"] for site in ("live", "report"))
    for name, text in texts.items():
        for spelling in spellings(secret):
            assert spelling not in text, f"the secret seed ({spelling}) is in {name}"
    # The seeds the bot was given are neither the league's nor any match's.
    given = [entry["seed"] for entry in hook_lines(texts["results-logs/hooks.log"]) if "seed" in entry]
    match_seeds = {line["seed"] for line in export(path)}
    assert len(given) == 1 + 4
    assert given[0] == PREFLIGHT_SEED  # the preflight's one decision: a public seed, no deal of the league
    assert not set(given[1:]) & ({secret} | match_seeds)


def test_a_seed_given_in_the_league_file_is_public_and_shown(secret_league, tmp_path):
    _, path, _, _ = secret_league
    public = tmp_path / "league.yaml"
    text = path.read_text().replace("name: Secret League\n", "name: Public League\nseed: 987654321\n")
    hooks = "command: python tests/bots/hooks.py"
    public.write_text(text.replace(hooks, "module: sample_bots.random_bot:RandomBot"), encoding="utf-8")
    referee("run", public, "--report", tmp_path / "report", check=True)
    assert "seed 987654321" in (tmp_path / "report" / "index.html").read_text()


def _incomplete_copy(folder: Path, path: Path, target: Path) -> tuple[Path, str, str, int]:
    """The finished league with one match deleted from its database, as if a run had stopped before it:
    returns the league file, the deleted match's id, its table mate's id and their seed."""
    shutil.copytree(folder, target, ignore=shutil.ignore_patterns("live", "report", "*.jsonl"))
    league = target / "league.yaml"
    league.write_text(path.read_text().replace(str(folder), str(target)), encoding="utf-8")
    lines = export(league)
    deleted, mate = lines[2], lines[3]  # the two seatings of the second table
    assert deleted["seed"] == mate["seed"]
    with sqlite3.connect(target / "results.sqlite") as db:
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("DELETE FROM matches WHERE match_id = ?", (deleted["match_id"],))
    return league, deleted["match_id"], mate["match_id"], mate["seed"]


def test_the_deals_of_an_incomplete_table_are_hidden_until_it_is_complete(secret_league, tmp_path):
    folder, path, _, _ = secret_league
    league, deleted, mate, seed = _incomplete_copy(folder, path, tmp_path / "league")
    hidden_seeds = spellings(seed)

    # export: the table mate's results only; every other table in full.
    lines = {line["match_id"]: line for line in export(league)}
    assert deleted not in lines
    assert lines[mate]["deals_hidden"] is True
    assert lines[mate]["deals"] == []
    assert lines[mate]["seed"] is None
    assert sorted(lines[mate]["ranks"]) in ([1, 2], [1, 1])
    assert len(lines[mate]["totals"]) == 2
    shown = [line for match_id, line in lines.items() if match_id != mate]
    assert len(shown) == 4
    assert all(not line["deals_hidden"] and len(line["deals"]) == 32 for line in shown)

    # replay: the result, and why the rest is missing.
    text = referee("replay", league, mate, check=True).stdout
    assert "deals hidden until every match of this table is played" in text
    assert "trick 1:" not in text
    assert "deal  1" not in text
    assert not any(spelling in text for spelling in hidden_seeds)
    assert re.search(r"^1\. ", text, re.MULTILINE)  # the standings are there
    assert "trick 1:" in referee("replay", league, shown[0]["match_id"], check=True).stdout

    # replay --deal, card by card: refused in one line for that table, from the league and from its
    # export; any other table's deal is shown.
    referee("export", league, "-o", tmp_path / "export.jsonl", check=True)
    for source in (league, tmp_path / "export.jsonl"):
        refused = referee("replay", source, mate, "--deal", "1")
        assert refused.returncode == 1
        assert refused.stdout == ""
        assert refused.stderr.startswith(f"Error: match {mate} of ")
        assert refused.stderr.strip().endswith("deals hidden until every match of this table is played")
        assert not any(spelling in refused.stderr for spelling in hidden_seeds)
        assert "trick 1" in referee("replay", source, shown[0]["match_id"], "--deal", "1", check=True).stdout
    assert "trick 1:" not in referee("replay", tmp_path / "export.jsonl", mate, check=True).stdout

    # report: the match page has no hand, trick or seed; nothing in the site names the seed.
    referee("report", league, "-o", tmp_path / "report", check=True)
    site = files_under(tmp_path / "report")
    page = next(text for p, text in site.items() if f"Match {mate}" in text)
    assert "hidden until every match of this table is played" in page
    assert 'id="deal-1"' not in page
    assert 'id="match-data"' not in page  # no data for the viewer either
    assert 'aria-label="pyramid' not in page
    for name, text in site.items():
        assert not any(spelling in text for spelling in hidden_seeds), f"the table's seed is in {name}"
    assert "deals hidden" in site[tmp_path / "report" / "matches.html"]
    assert "Not counted yet: 1 match" in site[tmp_path / "report" / "entrant-random.html"]

    # The run plays the missing match; then everything is shown, the live report included.
    referee("run", league, "--report", tmp_path / "live", check=True)
    lines = {line["match_id"]: line for line in export(league)}
    assert all(not line["deals_hidden"] and len(line["deals"]) == 32 for line in lines.values())
    assert lines[mate]["seed"] == seed
    assert "trick 1:" in referee("replay", league, mate, check=True).stdout
    live = files_under(tmp_path / "live")
    page = next(text for p, text in live.items() if f"Match {mate}" in text)
    assert 'id="deal-1"' in page
    assert 'id="match-data"' in page
    assert f"seed {seed}" in page
    assert "hidden" not in live[tmp_path / "live" / "matches.html"]


def hook_lines(log: str) -> list[dict]:
    """What tests/bots/hooks.py printed for its log: one JSON object per hook."""
    return [json.loads(line.removeprefix("HOOK ")) for line in log.splitlines() if line.startswith("HOOK ")]


def _match_seed(stdout: str) -> int:
    last = stdout.rstrip().splitlines()[-1]
    found = re.fullmatch(r"seed (\d+) \(--seed \1 replays this match\)", last)
    assert found, last
    return int(found.group(1))


def test_referee_match_draws_a_fresh_secret_seed_and_tells_the_bots_nothing_of_it(tmp_path):
    """Without --seed every match has a new seed, printed last; the bots get the same match id whatever
    the seed and a bot seed that is not it; --seed replays the match exactly."""
    runs = []
    for number in range(2):
        logs = tmp_path / f"logs{number}"
        result = referee(
            "match",
            "python tests/bots/hooks.py",
            "sample_bots.random_bot:RandomBot",
            "--logs",
            logs,
            cwd=ROOT,
            check=True,
        )
        start = hook_lines((logs / "hooks.log").read_text())[0]
        runs.append((result.stdout, _match_seed(result.stdout), start))
    (first, seed, start), (_, other_seed, other_start) = runs
    assert seed != other_seed
    assert seed.bit_length() > 40
    assert start["match_id"] == other_start["match_id"] == "match"
    assert start["seed"] not in (seed, other_seed)
    assert start["seed"] != other_start["seed"]
    for spelling in spellings(seed):
        assert spelling not in json.dumps(start)
        assert spelling not in first.rsplit("\n", 2)[0]  # printed once, at the end, and only there
    logs = tmp_path / "replay"
    again = referee(
        "match",
        "python tests/bots/hooks.py",
        "sample_bots.random_bot:RandomBot",
        "--seed",
        seed,
        "--logs",
        logs,
        cwd=ROOT,
        check=True,
    )
    assert again.stdout == first
    replayed = hook_lines((logs / "hooks.log").read_text())[0]
    assert (replayed["match_id"], replayed["seed"]) == (start["match_id"], start["seed"])


def _stored(scheduled, status=MatchStatus.COMPLETE):
    record = Match(Rules(players=2), scheduled.seed, scheduled.entrants).record()
    return StoredMatch(
        scheduled.match_id, scheduled.round, scheduled.table, scheduled.rotation, scheduled.seed, status,
        record, (), (), (),
    )  # fmt: skip


@pytest.mark.quick
def test_a_table_is_complete_when_every_match_with_its_seed_is_stored_complete():
    schedule = build_schedule(5, ("a", "b", "c"), 2, 1, Seating.BALANCED)
    first, mate = schedule[0], schedule[1]
    assert first.seed == mate.seed
    assert all(m.seed != first.seed for m in schedule[2:])
    complete = {m.match_id: _stored(m) for m in schedule}
    assert all(disclosure(schedule, complete).deals_shown(m) for m in complete.values())
    missing = {k: v for k, v in complete.items() if k != mate.match_id}
    void = {**complete, mate.match_id: _stored(mate, MatchStatus.VOID)}
    for stored in (missing, void):
        shown = disclosure(schedule, stored)
        assert not shown.deals_shown(stored[first.match_id])
        assert all(shown.deals_shown(stored[m.match_id]) for m in schedule[2:])
    # A table dropped from the schedule (its entrant left) has no match to come: it is shown.
    assert disclosure(schedule[2:], missing).deals_shown(missing[first.match_id])
