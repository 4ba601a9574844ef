"""League files: a valid one loads into a typed config; every broken one is one clear line, exit code 2."""

import os
import re
from pathlib import Path

import pytest

from referee.league.config import LeagueError, add_entrant, load_league, parse_duration
from referee.league.modes import Design, Format, Seating
from referee.league.ratings import RatingMode
from referee.match.sandbox import Limits, SandboxMode
from support import ROOT
from support.cli import referee

GOOD = f"""\
name: Test League
seed: 7
players: 3
schedule: {{format: round-robin, rounds: 2, seating: all}}
rating: match
rules: {{trick_winner: highest-rank, talk: defenders}}
time_control: {{per_action: 500ms, bank: 10s}}
faults: {{max: 5}}
concurrency: 2
database: out/results.sqlite
entrants:
  - name: a
    command: python sample_bots/random_bot.py
    cwd: {ROOT}
  - name: b
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
  - name: c
    command: python sample_bots/heuristic.py
    cwd: {ROOT}
  - name: d
    module: sample_bots.heuristic:HeuristicBot
    cwd: {ROOT}
"""


def write(tmp_path, text):
    path = tmp_path / "league.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_valid_league_loads_with_defaults_and_absolute_paths(tmp_path):
    league = load_league(write(tmp_path, GOOD))
    assert league.name == "Test League"
    assert league.players == 3
    assert str(league.rules.trick_winner) == "highest-rank"
    assert league.time_control.per_action == 0.5
    assert league.time_control.bank == 10.0
    assert league.max_faults == 5
    assert league.database == tmp_path / "out/results.sqlite"
    assert (league.seating, league.rating) == (Seating.ALL, RatingMode.MATCH)
    assert [e.name for e in league.entrants] == ["a", "b", "c", "d"]
    assert league.entrants[1].in_process
    assert league.entrants[0].spec.cwd == ROOT
    minimal = load_league(
        write(tmp_path, GOOD.split("schedule:", maxsplit=1)[0] + "entrants:" + GOOD.split("entrants:")[1])
    )
    assert (minimal.rounds, minimal.seating, minimal.rating, minimal.concurrency) == (
        1,
        Seating.BALANCED,
        RatingMode.DUPLICATE,
        1,
    )
    assert minimal.time_control.per_action == 1.0
    assert (minimal.sandbox, minimal.limits) == (SandboxMode.AUTO, Limits())


def test_sandbox_keys(tmp_path):
    (tmp_path / "weights").mkdir()
    text = GOOD.replace(
        "concurrency: 2", "concurrency: 2\nsandbox: required\nlimits: {memory: 512MiB, processes: 64}"
    )
    text = text.replace(f"cwd: {ROOT}\n  - name: c", f"cwd: {ROOT}\n    paths: [weights]\n  - name: c")
    league = load_league(write(tmp_path, text))
    assert league.sandbox is SandboxMode.REQUIRED
    assert league.limits == Limits(memory=512 * 1024**2, processes=64)
    assert league.entrants[1].spec.paths == (tmp_path / "weights",)


def test_durations():
    assert parse_duration("1s") == 1.0
    assert parse_duration("250ms") == 0.25
    assert parse_duration("2m") == 120.0
    with pytest.raises(ValueError, match="duration"):
        parse_duration("soon")


BROKEN = [
    ("unknown-key", GOOD.replace("concurrency: 2", "concurency: 2"), r":9: concurency: unknown key"),
    (
        "wrong-type",
        GOOD.replace("players: 3", "players: three"),
        r":3: players: Input should be a valid integer",
    ),
    (
        "out-of-range",
        GOOD.replace("players: 3", "players: 5"),
        r":3: players: Input should be less than or equal",
    ),
    ("bad-rule", GOOD.replace("talk: defenders", "talk: loud"), r":6: rules.talk: must be one of open"),
    ("unknown-rule", GOOD.replace("talk: defenders", "tlak: open"), r"rules.tlak: unknown rule"),
    (
        # The rule's name reaches the message from RulesError.field, not by splitting its text at ":".
        "rule-name-with-colon",
        GOOD.replace("talk: defenders", "'talk: x': open"),
        r":6: rules.talk: x: unknown rule; known rules are",
    ),
    ("bad-duration", GOOD.replace("500ms", "fast"), r":7: time_control.per_action: expected a duration"),
    (
        "few-entrants",
        GOOD.split("  - name: b", maxsplit=1)[0],
        r":11: entrants: 1 entrants cannot fill a table of 3",
    ),
    (
        "duplicate-name",
        GOOD.replace("name: c", "name: a"),
        r":18: entrants\[2\].name: duplicate entrant name 'a'",
    ),
    (
        # the bots' logs are NAME.log beside the referee's own referee.log
        "reserved-name",
        GOOD.replace("name: c", "name: Referee"),
        r":18: entrants\[2\].name: the name 'referee' is the referee's own",
    ),
    (
        "no-program",
        GOOD.replace("python sample_bots/heuristic.py", "./no_such_bot"),
        r"entrants\[2\].command: .*no program './no_such_bot'",
    ),
    (
        "not-on-path",
        GOOD.replace("python sample_bots/heuristic.py", "nosuchcommand --x"),
        r"entrants\[2\].command: .*'nosuchcommand' not found on PATH",
    ),
    (
        # an interpreter's script is checked at load time, not when the first match starts
        "missing-script",
        GOOD.replace("python sample_bots/heuristic.py", "python -u sample_bots/missing.py --level 3"),
        r":19: entrants\[2\].command: bot 'c': no script 'sample_bots/missing.py' in .* \(for python\)$",
    ),
    (
        "missing-node-script",
        GOOD.replace("python sample_bots/heuristic.py", "node --require x sample_bots/node/missing.js"),
        r":19: entrants\[2\].command: bot 'c': no script 'sample_bots/node/missing.js' in ",
    ),
    (
        "missing-shell-script",
        GOOD.replace("python sample_bots/heuristic.py", "bash bots/missing.sh"),
        r":19: entrants\[2\].command: bot 'c': no script 'bots/missing.sh' in ",
    ),
    (
        "missing-module",
        GOOD.replace("python sample_bots/heuristic.py", "python -m sample_bots.missing"),
        r":19: entrants\[2\].command: bot 'c': no module 'sample_bots.missing' in .* or the referee's Python",
    ),
    (
        "not-executable",
        GOOD.replace("python sample_bots/heuristic.py", "./README.md"),
        r":19: entrants\[2\].command: bot 'c': program './README.md' in .* is not an executable file",
    ),
    (
        "both-kinds",
        GOOD.replace(
            "    module: sample_bots.random_bot:RandomBot",
            "    module: sample_bots.random_bot:RandomBot\n    command: python x.py",
        ),
        r":15: entrants\[1\]: give exactly one of command:, module: or remote: true",
    ),
    (
        "bad-module",
        GOOD.replace("sample_bots.random_bot:RandomBot", "sample_bots.nothing:Bot"),
        r"entrants\[1\].module: .*cannot import sample_bots.nothing",
    ),
    (
        "bad-cwd",
        GOOD.replace(f"cwd: {ROOT}\n  - name: c", "cwd: /no/such/dir\n  - name: c"),
        r"entrants\[1\].cwd: no folder /no/such/dir",
    ),
    (
        "bad-format",
        GOOD.replace("format: round-robin", "format: swiss"),
        r":4: schedule.format: Input should be 'round-robin'",
    ),
    (
        "bad-seating",
        GOOD.replace("seating: all", "seating: shuffled"),
        r":4: schedule.seating: Input should be 'single', 'cyclic', 'balanced' or 'all'",
    ),
    (
        "rotate-seats-replaced",
        GOOD.replace("seating: all", "rotate_seats: true"),
        r":4: schedule.rotate_seats: replaced by schedule.seating: write seating: cyclic for what",
    ),
    (
        "rotate-seats-false-replaced",
        GOOD.replace("seating: all", "rotate_seats: false"),
        r":4: schedule.rotate_seats: replaced by schedule.seating: write seating: single for what",
    ),
    ("bad-rating", GOOD.replace("rating: match", "rating: elo"), r":5: rating: Input should be 'duplicate'"),
    ("not-yaml", GOOD.replace("players: 3", "players: [3"), r"not valid YAML"),
    ("not-a-mapping", "- just\n- a list\n", r"a league file is a mapping"),
    ("missing-name", GOOD.replace("name: Test League\n", ""), r"name: required key is missing"),
    (
        "bad-entrant-name",
        GOOD.replace("name: d", "name: 'my bot'"),
        r"entrants\[3\].name: String should match pattern",
    ),
    (
        "negative-seed",
        GOOD.replace("seed: 7", "seed: -1"),
        r":2: seed: Input should be greater than or equal to 0",
    ),
    (
        "bad-sandbox",
        GOOD.replace("concurrency: 2", "concurrency: 2\nsandbox: maybe"),
        r":10: sandbox: Input should be 'auto', 'required' or 'none'",
    ),
    (
        "bad-limit",
        GOOD.replace("concurrency: 2", "concurrency: 2\nlimits: {memory: lots}"),
        r":10: limits.memory: expected a size like 512MiB or 1GiB",
    ),
    (
        "missing-path",
        GOOD.replace(f"cwd: {ROOT}\n  - name: c", f"cwd: {ROOT}\n    paths: [weights]\n  - name: c"),
        r"entrants\[1\].paths\[0\]: no such path .*weights",
    ),
    (
        "challengers-without-gauntlet",
        GOOD.replace("seating: all}", "seating: all, challengers: [a]}"),
        r":4: schedule.challengers: only for format: gauntlet, and this schedule's format is round-robin$",
    ),
    (
        "tables-per-entrant-without-sampled",
        GOOD.replace("seating: all}", "seating: all, tables_per_entrant: 2}"),
        r":4: schedule.tables_per_entrant: only for format: sampled",
    ),
    (
        "unknown-challenger",
        GOOD.replace("format: round-robin", "format: gauntlet, challengers: [a, zed]"),
        r":4: schedule.challengers\[1\]: no entrant named 'zed'$",
    ),
    (
        "challenger-twice",
        GOOD.replace("format: round-robin", "format: gauntlet, challengers: [b, b]"),
        r":4: schedule.challengers\[1\]: 'b' is a challenger twice$",
    ),
    (
        "gauntlet-without-challengers",
        GOOD.replace("format: round-robin", "format: gauntlet"),
        r":4: schedule.format: format: gauntlet needs challengers",
    ),
    (
        "field-too-small",
        GOOD.replace("format: round-robin", "format: gauntlet, challengers: [a, b, c]"),
        r":4: schedule.challengers: the field .* has 1, too few to fill a table of 3 with a challenger$",
    ),
    (
        "too-many-tables-per-challenger",
        GOOD.replace("format: round-robin", "format: gauntlet, challengers: [a], tables_per_challenger: 3"),
        r":4: schedule.tables_per_challenger: 3 is too many: a field of 3 at 3 seats makes 3 table\(s\) per "
        r"challenger; give at most 2, or leave the key out to play them all$",
    ),
    (
        "sampled-without-tables",
        GOOD.replace("format: round-robin", "format: sampled"),
        r":4: schedule.format: format: sampled needs tables_per_entrant",
    ),
    (
        "too-many-tables-per-entrant",
        GOOD.replace("format: round-robin", "format: sampled, tables_per_entrant: 3"),
        r":4: schedule.tables_per_entrant: 3 is too many: 4 entrants at 3 seats give each one 3 different "
        r"table\(s\), all of them a round robin \(format: round-robin\); give at most 2$",
    ),
    (
        "no-tables-per-entrant",
        GOOD.replace("format: round-robin", "format: sampled, tables_per_entrant: 0"),
        r":4: schedule.tables_per_entrant: Input should be greater than or equal to 1, got 0$",
    ),
    (
        "players-in-rules",
        GOOD.replace("talk: defenders", "talk: defenders, players: 2"),
        r"rules.players: set players at the top level",
    ),
]


@pytest.mark.parametrize(("text", "pattern"), [case[1:] for case in BROKEN], ids=[case[0] for case in BROKEN])
def test_broken_league_files_give_one_clear_line(tmp_path, text, pattern):
    path = write(tmp_path, text)
    with pytest.raises(LeagueError, match=pattern) as info:
        load_league(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(str(path))


def test_the_schedule_formats_load_with_their_keys(tmp_path):
    league = load_league(write(tmp_path, GOOD))
    assert league.design == Design()  # round robin, the default
    assert league.schedule_label == "round-robin, 2 rounds"
    sampled = GOOD.replace("format: round-robin", "format: sampled, tables_per_entrant: 2")
    league = load_league(write(tmp_path, sampled))
    assert league.design == Design(Format.SAMPLED, tables_per_entrant=2)
    assert league.schedule_label == "sampled, 2 tables per entrant, 2 rounds"
    gauntlet = GOOD.replace(
        "format: round-robin", "format: gauntlet, challengers: [d], tables_per_challenger: 2"
    )
    league = load_league(write(tmp_path, gauntlet))
    assert league.design == Design(Format.GAUNTLET, challengers=("d",), tables_per_challenger=2)
    assert league.schedule_label == "gauntlet of d against the field, 2 tables per challenger, 2 rounds"


def test_an_interpreter_s_script_or_module_that_exists_passes_the_load_time_check(tmp_path):
    commands = [
        "python -u sample_bots/heuristic.py --level 3",
        "python -m sample_bots.montecarlo --samples 2",
        "python3 -X dev sample_bots/random_bot.py",
        "node sample_bots/node/heuristic",  # node finds heuristic.js
        "python -c 'print(1)'",  # code inline: nothing to look for
    ]
    for command in commands:
        path = write(tmp_path, GOOD.replace("python sample_bots/heuristic.py", command))
        assert load_league(path).entrants[2].spec.command[0] in ("python", "python3", "node")


@pytest.mark.parametrize(
    "case", ["unknown-key", "few-entrants", "no-program", "missing-script", "missing-module"]
)
@pytest.mark.slow
def test_the_cli_refuses_a_broken_league_with_exit_code_2_and_starts_nothing(tmp_path, case):
    text = next(c[1] for c in BROKEN if c[0] == case)
    path = write(tmp_path, text)
    result = referee("run", path, timeout=60)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    # One line: no usage banner before it (that is for wrong flags), nothing after it.
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"Error: {path}:")
    assert not (tmp_path / "out").exists()  # no database, no logs: nothing started


@pytest.mark.slow
def test_the_cli_refuses_a_missing_league_file_in_one_line_with_exit_code_2(tmp_path):
    """Once, not once per broken league above: the same command on the same missing file."""
    result = referee("run", tmp_path / "missing.yaml", timeout=60)
    assert result.returncode == 2
    assert result.stderr.startswith(f"Error: {tmp_path / 'missing.yaml'}: cannot read the league file")
    assert len(result.stderr.splitlines()) == 1, result.stderr


@pytest.mark.slow
def test_a_wrong_flag_still_shows_the_usage(tmp_path):
    path = write(tmp_path, GOOD)
    result = referee("run", path, "--concurrency", "0", timeout=60)
    assert result.returncode == 2
    assert result.stderr.startswith("Usage: referee run [OPTIONS] LEAGUE")
    assert "--concurrency" in result.stderr.splitlines()[-1]


def _league_for_submit(tmp_path: Path) -> Path:
    path = tmp_path / "league.yaml"
    path.write_text(
        GOOD.replace("database: out/results.sqlite", "database: results.sqlite"), encoding="utf-8"
    )
    return path


def test_submit_replaces_the_league_file_by_renaming_a_checked_new_one(tmp_path):
    path = _league_for_submit(tmp_path)
    before = path.read_text(encoding="utf-8")
    reader = tmp_path / "held-by-a-reader.yaml"
    os.link(path, reader)  # a second name for the old file's contents, as an open reader would hold
    (tmp_path / "league.yaml.new").write_text("left by a crash", encoding="utf-8")
    add_entrant(path, "newcomer", ("python", "sample_bots/random_bot.py"), ROOT)
    assert reader.read_text(encoding="utf-8") == before  # renamed over, never rewritten in place
    assert [e.name for e in load_league(path).entrants][-1] == "newcomer"
    assert not (tmp_path / "league.yaml.new").exists()


def test_a_submit_that_would_break_the_league_leaves_it_untouched(tmp_path):
    path = _league_for_submit(tmp_path)
    before = path.read_bytes()
    inode = path.stat().st_ino
    with pytest.raises(LeagueError) as caught:
        add_entrant(path, "ghost", ("./no_such_bot",), tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{path}:")  # the file the user knows, not the .new one checked
    assert ".new" not in message
    assert "no program './no_such_bot'" in message
    assert path.read_bytes() == before
    assert path.stat().st_ino == inode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["league.yaml"]


def test_the_format_examples_of_docs_league_load(tmp_path):
    """The ``schedule:`` examples of docs/LEAGUE.md, "Formats", in a league of 12 entrants at 4 seats."""
    text = (ROOT / "docs" / "LEAGUE.md").read_text(encoding="utf-8")
    start = text.index("## Formats")
    section = text[start : text.index("\n## ", start)]
    examples = re.findall(r"```yaml\n(schedule:\n.*?)```", section, re.DOTALL)
    assert len(examples) == 2
    names = ["mybot-v2", "mybot-v3", *(f"field{number}" for number in range(10))]
    entrants = "".join(
        f"  - name: {name}\n    module: sample_bots.random_bot:RandomBot\n    cwd: {ROOT}\n" for name in names
    )
    formats = []
    for example in examples:
        league = load_league(write(tmp_path, f"name: Docs\nplayers: 4\n{example}entrants:\n{entrants}"))
        formats.append(league.design.format)
    assert formats == [Format.SAMPLED, Format.GAUNTLET]
