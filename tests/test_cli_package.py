"""The ``referee/cli/`` package: every command of its lazy table resolves and has help, the constants it
writes out to stay light agree with the library's, its size rules hold, and (slow) ``referee --help``
and every ``referee X --help`` start without loading gRPC or the rest of the referee."""

import ast
import json
import os
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from referee import compare
from referee.analysis import estimate
from referee.cli import COMMANDS, main
from referee.cli import analysis as analysis_command
from referee.cli import compare as compare_command
from referee.cli.lazy import LazyGroup
from referee.cli.results import FORMAT_NAMES
from referee.report.text import FORMATS
from support import ROOT
from support.cli import referee

HEAVY = ("grpc", "google.protobuf", "rich", "pydantic", "trueskill", "distributed", "jinja2", "ruamel")
"""What a command's start must not load: the libraries the commands use only once they run."""


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_of_the_table_resolves_and_has_help(name):
    command = main.get_command(click.Context(main), name)
    assert isinstance(command, click.Command)
    assert command.name == name  # the table's name is the one the command answers to
    result = CliRunner().invoke(main, [name, "--help"], prog_name="referee")
    assert result.exit_code == 0, result.output
    assert f"Usage: referee {name} " in result.output
    assert command.get_short_help_str().strip()


def test_the_group_lists_exactly_the_table_and_says_so_in_its_help():
    assert main.list_commands(click.Context(main)) == sorted(COMMANDS)
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    listed = [line.split()[0] for line in result.output.split("Commands:\n", 1)[1].splitlines()]
    assert listed == sorted(COMMANDS)


def test_a_wrong_entry_in_the_table_is_loud_and_an_unknown_command_is_a_usage_error():
    group = LazyGroup(name="t", commands={"bad": "referee.cli.common:say"})
    with pytest.raises(TypeError, match=r"referee\.cli\.common:say is not a click command"):
        group.get_command(click.Context(group), "bad")
    result = CliRunner().invoke(main, ["nonsense"])
    assert result.exit_code == 2
    assert "No such command 'nonsense'" in result.output


def test_the_constants_written_out_for_a_light_start_agree_with_the_library():
    assert tuple(sorted(FORMATS)) == FORMAT_NAMES
    assert compare_command.EXIT_UNUSABLE == compare.EXIT_UNUSABLE
    assert compare_command.OPPONENT == compare.OPPONENT
    assert analysis_command.DEFAULT_SAMPLES == estimate.DEFAULT_SAMPLES


def test_no_function_over_80_lines_and_no_module_over_600():
    for path in sorted((ROOT / "referee" / "cli").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert len(text.splitlines()) <= 600, path.name
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno - node.lineno + 1 <= 80, f"{path.name}: {node.name}"


def imported(*args: str) -> set[str]:
    """The modules the real ``referee`` program imports for ``args``, as Python's import profile lists
    them."""
    environment = os.environ | {"PYTHONPROFILEIMPORTTIME": "1"}
    result = referee(*args, timeout=60, env=environment)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Usage: referee" in result.stdout
    lines = [line for line in result.stderr.splitlines() if line.startswith("import time:")]
    return {line.rsplit("|", 1)[1].strip() for line in lines[1:]}  # the first line is the header


@pytest.mark.slow
@pytest.mark.parametrize("args", [("--help",), *((name, "--help") for name in sorted(COMMANDS))])
def test_a_commands_start_loads_no_grpc_nor_the_rest_of_the_referee(args):
    modules = imported(*args)
    assert "referee.cli" in modules  # the profile is read: a test that cannot fail is no test
    loaded = sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert not loaded, f"referee {' '.join(args)} loads {loaded[:5]}"
    assert not {
        m
        for m in modules
        if m.startswith(("referee.league", "referee.results", "referee.run", "referee.report"))
    }


@pytest.mark.slow
def test_reading_a_league_file_loads_neither_the_scheduler_nor_trueskill(tmp_path):
    """``load_league`` reads and checks the file: the modes it names are plain values (``modes.py``);
    the scheduler, the designs' search and the ratings load with the commands that plan or rate."""
    league = tmp_path / "league.yaml"
    league.write_text(
        "name: L\nplayers: 2\nschedule: {format: sampled, tables_per_entrant: 1, seating: balanced}\n"
        "entrants:\n"
        + "".join(f"  - {{name: e{n}, module: sample_bots.random_bot:RandomBot}}\n" for n in range(4)),
        encoding="utf-8",
    )
    code = (
        "import json, sys\nfrom referee.league.config import load_league\n"
        f"league = load_league({str(league)!r}, check_commands=False)\n"
        "print(league.design.describe())\nprint(json.dumps(sorted(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    described, modules = result.stdout.splitlines()[-2], set(json.loads(result.stdout.splitlines()[-1]))
    assert described == "sampled, 1 tables per entrant"  # the file was read
    assert "referee.league.config" in modules
    assert not modules & {"referee.league.schedule", "referee.league.designs", "referee.league.ratings"}
    assert not {m for m in modules if m == "trueskill" or m.startswith("trueskill.")}
