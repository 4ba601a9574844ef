"""Leagues outside the repository, through the real CLI, with the real sandbox, from a working folder
outside the repository: `referee init DIR` writes a league and two bots that play at once, and a copy of
the example league runs wherever it is put."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from referee.league.config import load_league
from referee.league.versions import code_files
from referee.match.sandbox import bubblewrap_problem
from referee.starter import node_problem, write_starter
from sample_bots.node_heuristic import installed
from support import ROOT
from support.cli import export, referee

needs_sandbox = pytest.mark.skipif(
    bool(bubblewrap_problem()) and not os.environ.get("CI"),
    reason="the bubblewrap sandbox does not work here",
)


def npm_offline() -> dict[str, str]:
    """The environment, with npm told to use its cache when it can: the leagues' builds run npm."""
    return {**os.environ, "npm_config_prefer_offline": "true"}


def one_table_once(league: Path) -> None:
    """Cuts a league to one match (one table in one seating), to keep the test short: everything else
    of the file stays as written."""
    text = league.read_text(encoding="utf-8")
    for many, one in (("rounds: 2", "rounds: 1"), ("seating: balanced", "seating: single")):
        text = text.replace(many, one)
    league.write_text(text + "sandbox: required\n", encoding="utf-8")


@needs_sandbox
def test_init_writes_a_league_whose_bots_play_anywhere(tmp_path):
    work = tmp_path / "elsewhere"  # the working folder: outside the repository, and not the league's
    work.mkdir()
    result = referee("init", "my-league", "--name", "First League", cwd=work, env=npm_offline(), timeout=600)
    assert result.returncode == 0, result.stderr
    folder = work / "my-league"
    for name in ("league.yaml", "README.md", "python-bot/bot.py", "node-bot/bot.js", "node-bot/package.json"):
        assert (folder / name).is_file(), name
    text = (folder / "league.yaml").read_text(encoding="utf-8")
    assert str(ROOT) not in text  # no path into the checkout
    assert "../" not in text
    problem = node_problem()
    assert ("node:" in result.stdout) == bool(problem)
    assert f"cd {folder} && referee run league.yaml" in result.stdout

    for path in (tmp_path, work, folder):  # a sandboxed bot runs as a uid of its own
        path.chmod(0o755)
    one_table_once(folder / "league.yaml")
    run = referee("run", folder / "league.yaml", cwd=work, env=npm_offline(), timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    (match,) = export(folder / "league.yaml", cwd=work)
    mine = {"my-python-bot", "random", "heuristic", "montecarlo" if problem else "my-node-bot"}
    assert set(match["seats"]) == mine
    assert match["status"] == "complete"
    assert match["faults"] == []  # both skeletons play legal cards in time, every decision
    assert match["forfeits"] == []
    assert not (folder / "results-logs" / "referee.log").read_text(encoding="utf-8").count("Traceback")


def test_init_never_writes_into_a_folder_that_is_not_empty(tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "league.yaml").write_text("mine\n", encoding="utf-8")
    (tmp_path / "a-file").write_text("mine\n", encoding="utf-8")
    for target in ("taken", "a-file"):
        result = referee("init", target, cwd=tmp_path, env=npm_offline(), timeout=600)
        assert result.returncode == 2
        assert result.stderr.count("\n") == 1
        assert result.stderr.startswith(f"Error: {tmp_path / target}: not ")
        assert "Traceback" not in result.stderr
    assert (tmp_path / "taken" / "league.yaml").read_text(encoding="utf-8") == "mine\n"
    assert sorted(p.name for p in (tmp_path / "taken").iterdir()) == ["league.yaml"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert (
        referee("init", empty, cwd=tmp_path, env=npm_offline(), timeout=600).returncode == 0
    )  # an empty folder is fine


def test_without_a_node_sdk_the_node_bot_is_written_and_left_out_of_a_valid_league(tmp_path):
    starter = write_starter(tmp_path / "league", "No Node", "referee", sdk=tmp_path / "no-sdk")
    assert "no Node.js SDK" in starter.node_problem
    league = load_league(starter.league)
    assert [entrant.name for entrant in league.entrants] == [
        "my-python-bot",
        "random",
        "heuristic",
        "montecarlo",
    ]
    assert (starter.folder / "node-bot" / "bot.js").is_file()
    assert "dependencies" not in json.loads((starter.folder / "node-bot" / "package.json").read_text())
    readme = (starter.folder / "README.md").read_text(encoding="utf-8")
    assert "## Adding the Node.js bot" in readme
    assert starter.node_problem in readme


@needs_sandbox
def test_a_copy_of_the_example_league_runs_anywhere(tmp_path):
    """The README's example, copied out of the repository and run from yet another folder: its bots are
    named by module (the Node.js one through sample_bots.node_heuristic), and its build step works
    from there too."""
    if shutil.which("npm") is None and not os.environ.get("CI"):
        pytest.skip("Node.js and npm are not installed")
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "tournaments" / "example", copy, ignore=shutil.ignore_patterns("results*"))
    work = tmp_path / "work"
    work.mkdir()
    for path in (tmp_path, copy, work):
        path.chmod(0o755)
    one_table_once(copy / "league.yaml")
    run = referee("run", copy / "league.yaml", cwd=work, env=npm_offline(), timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    (match,) = export(copy / "league.yaml", cwd=work)
    assert set(match["seats"]) == {"random", "heuristic", "node-heuristic", "montecarlo"}
    assert match["faults"] == []


def test_no_shipped_league_points_into_the_repository():
    for league in sorted((ROOT / "tournaments").glob("*/league.yaml")):
        text = league.read_text(encoding="utf-8")
        assert "cwd:" not in text, league  # every entrant runs from the league's own folder
        assert "../" not in text, league
        assert load_league(league).entrants  # and its bots are found from there


def test_a_sample_bot_named_by_module_is_still_part_of_its_entrants_version():
    """A changed sample bot replays its matches (LEAGUE.md, "Bot versions") when the league names it by
    module from its own folder, as it did when it named the file in the checkout."""
    league = load_league(ROOT / "tournaments" / "example" / "league.yaml", check_commands=False)
    hashed = {entrant.name: code_files(entrant) for entrant in league.entrants}
    assert hashed["random"] == [ROOT / "sample_bots" / "random_bot.py"]
    assert hashed["heuristic"] == [ROOT / "sample_bots" / "heuristic.py"]  # a module: entrant
    assert hashed["montecarlo"] == [ROOT / "sample_bots" / "montecarlo.py"]


def test_the_node_sample_bots_module_says_what_is_wrong_in_one_line(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "sample_bots.node_heuristic", "--bogus"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr == "node-heuristic: unknown arguments '--bogus': give none, or --install\n"


Packages = dict[str, dict[str, object]]


def _sdk_folder(folder: Path, locked: Packages, present: Packages) -> Path:
    """An SDK folder as npm leaves it: its lock file, npm's record of what it installed, and the packages."""
    folder.mkdir()
    (folder / "package-lock.json").write_text(json.dumps({"packages": {"": {"name": "sdk"}, **locked}}))
    for path in present:
        (folder / path).mkdir(parents=True)
        (folder / path / "package.json").write_text("{}")
    (folder / "node_modules").mkdir(exist_ok=True)
    (folder / "node_modules/.package-lock.json").write_text(json.dumps({"packages": present}))
    return folder


@pytest.mark.quick
def test_the_node_sample_bots_install_reads_what_npm_installed(tmp_path):
    grpc = {"node_modules/grpc": {"version": "1.2.3"}}
    tools = {"node_modules/typescript": {"version": "5.0.0", "dev": True}}
    optional = {
        "node_modules/fsevents": {"version": "2.0.0", "optional": True},
        "node_modules/watcher": {"version": "1.0.0", "devOptional": True},
    }
    assert installed(_sdk_folder(tmp_path / "same", {**grpc, **tools, **optional}, grpc))
    linked = {"node_modules/local": {"resolved": "../local", "link": True}}
    assert not installed(_sdk_folder(tmp_path / "unlinked", {**grpc, **linked}, grpc))
    assert installed(_sdk_folder(tmp_path / "linked", {**grpc, **linked}, {**grpc, "node_modules/local": {}}))
    assert not installed(_sdk_folder(tmp_path / "older", grpc, {"node_modules/grpc": {"version": "1.2.2"}}))
    long = {"node_modules/long": {"version": "5"}}
    assert not installed(_sdk_folder(tmp_path / "missing", {**grpc, **long}, grpc))
    gone = _sdk_folder(tmp_path / "gone", grpc, grpc)
    (gone / "node_modules/grpc/package.json").unlink()  # npm's record says it is there; it is not
    assert not installed(gone)
    (tmp_path / "never").mkdir()
    assert not installed(tmp_path / "never")
    damaged = _sdk_folder(tmp_path / "damaged", grpc, grpc)
    (damaged / "node_modules/.package-lock.json").write_text("{")
    assert not installed(damaged)


def test_the_node_sample_bots_install_leaves_installed_packages_in_place():
    """A league's build step runs while other leagues' Node.js bots may be playing from the same SDK
    folder: when its packages are installed, it must not delete and reinstall them (as `npm ci` does)."""
    sdk = ROOT / "sdk/node"
    if not (sdk / "node_modules/.package-lock.json").is_file() and not os.environ.get("CI"):
        pytest.skip("the Node.js SDK's packages are not installed (npm ci --prefix sdk/node)")
    before = (sdk / "node_modules/@grpc/grpc-js").stat().st_ino
    result = subprocess.run(
        [sys.executable, "-m", "sample_bots.node_heuristic", "--install"],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": ""},  # no npm to run: it must not need one
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "packages are installed" in result.stdout
    assert (sdk / "node_modules/@grpc/grpc-js").stat().st_ino == before
