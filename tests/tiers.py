"""The two test tiers, and the guard that keeps them true (README.md, "Tests").

A **quick** test starts no process: no bot, no Node.js, no Chromium, no Dask worker, no sandbox, no
subprocess of any kind. ``pytest -m quick`` runs those for the edit-test loop; ``pytest`` runs both tiers.
A test's tier comes from its module's entry below (a doctest of the library's own modules is quick), and
a test's own ``@pytest.mark.slow`` or ``@pytest.mark.quick`` wins over its module's.

The tiers are checked rather than trusted, in every run: a quick test that starts a process, or uses a
fixture that started one, fails at teardown naming what it started; a test module that is in neither list
stops the collection with a one-line hint. The repository's conftest.py registers :class:`Tiers`, so the
doctests under ``sdk/`` and ``referee/`` are covered too.
"""

from __future__ import annotations

import multiprocessing.util
import sys
from collections.abc import Generator, Mapping, Set
from pathlib import Path
from typing import Any, Final

import pytest

QUICK_MODULES: Final = frozenset(
    f"tests/{name}.py"
    for name in (
        "test_adaptive",
        "test_debug_book",
        "test_ranking",
        "test_analysis",
        "test_cards",
        "test_cli_package",
        "test_client",
        "test_clock",
        "test_docs",
        "test_engine",
        "test_entry",
        "test_following",
        "test_faults",
        "test_front_relay",
        "test_golden",
        "test_heuristic",
        "test_launcher",
        "test_league",
        "test_observation_shapes",
        "test_packed",
        "test_pettingzoo",
        "test_properties",
        "test_protocol_doc",
        "test_protocol_stubs",
        "test_remote_record",
        "test_remote_tokens",
        "test_ratings",
        "test_rules",
        "test_simulation",
        "test_schedule",
        "test_sessions",
        "test_stats",
        "test_stream",
        "test_arbiter_competition",
        "test_twins",
        "test_upload_archives",
        "test_web",
        "test_wire",
    )
)
"""Test modules whose tests start no process; a test marked ``slow`` in one is the exception."""

SLOW_MODULES: Final = {
    f"tests/{name}.py": why
    for name, why in {
        "test_expert": "expert sample bot processes in real matches",
        "test_api": "bot processes, from referee.api",
        "test_confidence": "referee run, leaderboard and report of a small league: the CLI",
        "test_analyze_league": "referee run, analyze and report: the CLI, bot processes and Chromium",
        "test_bot_errors": "bot processes that fail to start or raise, Node.js bots, the CLI",
        "test_init": "referee init and referee run, npm, bot processes in bubblewrap",
        "test_interrupt": "the CLI interrupted with SIGINT, Dask workers, bot processes",
        "test_startup": "Python processes that import the SDK, a bot process",
        "test_store_safety": "the CLI, bot processes, a tmpfs mount",
        "test_summaries": "referee run and the read commands: the CLI and bot processes",
        "test_watch_one_match": "referee match and replay, bot processes, Chromium",
        "test_wrong_messages": "bot processes that send wrong messages, the CLI",
        "test_forfeit_scoring": "referee run, compare and report: the CLI and bot processes",
        "test_dry_run": "referee run --dry-run and run: the CLI and bot processes",
        "test_cli_match": "referee match: the CLI and bot processes",
        "test_compare": "referee compare: the CLI and bot processes",
        "test_compare_many": "referee compare A B C: the CLI and bot processes",
        "test_dask_driver": "Dask workers, the CLI and bot processes",
        "test_debug_lines": "referee run, logs, export, report and serve: Python and Node.js bot processes",
        "test_node": "Node.js bots and the Node.js SDK's own tests",
        "test_node_package": "npm pack, a Node.js bot",
        "test_protocol_e2e": "bot processes over real gRPC",
        "test_python_sdk_package": "a wheel built, a fresh venv, a bot process",
        "test_quality": "ruff and mypy",
        "test_referee_log": "the CLI and bot processes",
        "test_remote": "referee run listening for remote bots: the CLI, openssl, Python and Node.js bots",
        "test_remote_away": "referee run listening for remote bots: the CLI, Python remote bots",
        "test_stop_start": "bot processes in bubblewrap, referee run, serve and compare, Dask workers",
        "test_remote_door": "openssl for the test's certificates; the door on real gRPC, in-process",
        "test_remote_lanes": "referee run listening for a Python remote bot playing several matches at once",
        "test_door_limits": "openssl for the test's certificates; the door and idle sockets, in-process",
        "test_remote_liveness": "openssl; the door in-process with Python SDK bots frozen, and the CLI",
        "test_remote_cli": "referee run and serve listening with TLS, the read commands, Python SDK bots",
        "test_report_browser": "the CLI and Chromium",
        "test_serve": "referee serve, bot processes and Chromium",
        "test_serve_entry": "referee serve --entry: the CLI, the API, Chromium, Python SDK bots",
        "test_serve_remote": "referee serve listening for remote bots: the CLI, openssl, Python SDK bots",
        "test_practice": "practice matches asked of referee serve: the CLI, an SDK bot, the door",
        "test_author_page": "an author's own page in referee serve: SDK bots, the door, Chromium",
        "test_serve_presence": "served pages mark remote bots connected or away: serve, SDK bot, Chromium",
        "test_serve_dask": "referee serve on a Dask LocalCluster, bot processes, remote SDK bots",
        "test_serve_limits": "referee serve and its reader processes, floods from loopback addresses",
        "test_report_viewer": "the CLI and Chromium",
        "test_results_cli": "the CLI and bot processes",
        "test_sandbox": "bot processes in bubblewrap",
        "test_sdk_reconnect": "referee serve and check with remote Python and Node.js bots, openssl",
        "test_sdk_ping": "Python and Node.js bot processes against a stand-in referee",
        "test_secrets": "the CLI and bot processes",
        "test_settled_e2e": "the CLI, bot processes and Dask workers",
        "test_start_failures": "the CLI and bot processes",
        "test_tiers": "pytest sessions that start processes",
        "test_tournament_e2e": "the CLI and bot processes",
        "test_transport": "Python processes with their own gRPC settings",
        "test_undecodable": "bot processes",
        "test_uploads": "referee upload: builds in bubblewrap, the check's bot processes, referee run",
        "test_versions": "the CLI and bot processes",
        "test_wheel": "pip builds the arena's wheel; a fresh virtual environment imports every module",
    }.items()
}
"""Test modules whose tests start processes, with what they start; a test marked ``quick`` in one is the
exception."""

TIERS: Final = ("quick", "slow")
PROCESS_EVENTS: Final = frozenset(
    {"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec", "os.system"}
)
"""The audit events of starting a process. multiprocessing's ``spawn`` and ``forkserver`` raise none."""

_started: list[str] = []
"""What the running test (its setup, call and teardown) started, one line a process."""


def _note(what: object) -> None:
    _started.append(repr(what)[:120])


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event in PROCESS_EVENTS:
        # subprocess.Popen's arguments are (executable, args, cwd, env); the executable may be None.
        _note(next((arg for arg in args[:2] if arg is not None), event))


def watch_processes() -> None:
    """Notes every process this Python process starts from now on. An audit hook cannot be removed, so
    it is added once, with the wrapper that marks it."""
    if getattr(multiprocessing.util.spawnv_passfds, "noting", False):
        return
    sys.addaudithook(_audit)
    spawnv_passfds = multiprocessing.util.spawnv_passfds

    def noted(path: str, args: list[str], passfds: tuple[int, ...]) -> int:
        """Where multiprocessing starts its ``spawn`` and ``forkserver`` processes (Dask's workers)."""
        _note(args)
        return spawnv_passfds(path, args, passfds)

    noted.noting = True  # type: ignore[attr-defined]
    multiprocessing.util.spawnv_passfds = noted


class Tiers:
    """The pytest plugin: marks every test ``quick`` or ``slow`` and fails a quick one that needed a
    process. ``quick`` and ``slow`` are the modules' paths from ``root`` (``slow`` says why)."""

    def __init__(
        self,
        root: Path,
        quick: Set[str] = QUICK_MODULES,
        slow: Mapping[str, str] = SLOW_MODULES,
        lists: str = "tests/tiers.py",
    ) -> None:
        self.root, self.quick, self.slow, self.lists = root, quick, slow, lists
        self.starting_fixtures: dict[tuple[str, str], str] = {}
        """Each fixture whose setup started a process, by where it is defined and its name, with the
        first process: a test that uses it needs processes even when an earlier test set it up."""

    def module_tier(self, path: Path) -> str:
        if not path.is_relative_to(self.root / "tests"):
            return "quick"  # a doctest of the library's own modules
        relative = path.relative_to(self.root).as_posix()
        if relative in self.quick:
            return "quick"
        if relative in self.slow:
            return "slow"
        raise pytest.UsageError(
            f"{relative} is in neither test tier: add it to QUICK_MODULES (if none of its tests starts "
            f"a process) or SLOW_MODULES in {self.lists}"
        )

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for name in sorted(self.quick | self.slow.keys()):
            if not (self.root / name).is_file():
                raise pytest.UsageError(f"{self.lists} puts {name} in a test tier, but there is no such file")
            if name in self.quick and name in self.slow:
                raise pytest.UsageError(f"{self.lists} puts {name} in both test tiers")
        by_path: dict[Path, str] = {}
        for item in items:
            own = next((mark.name for mark in item.iter_markers() if mark.name in TIERS), None)
            if own is None:  # the closest mark wins: the test's own before its module's
                if item.path not in by_path:
                    by_path[item.path] = self.module_tier(item.path)
                own = by_path[item.path]
            item.add_marker(own)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef: pytest.FixtureDef[Any]) -> Generator[None, None, None]:
        before = len(_started)
        yield
        if len(_started) > before:
            self.starting_fixtures[fixturedef.baseid, fixturedef.argname] = _started[before]

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self) -> Generator[None, None, None]:
        _started.clear()
        yield
        _started.clear()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, None]:
        outcome = yield
        if call.when != "teardown" or item.get_closest_marker("quick") is None:
            return
        processes = self.processes_of(item)
        if processes is not None:
            report: pytest.TestReport = outcome.get_result()
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} is in the quick tier but {processes}: mark it @pytest.mark.slow, "
                f"or move its module to SLOW_MODULES in {self.lists}"
            )

    def processes_of(self, item: pytest.Item) -> str | None:
        """What ``item`` started, or what a fixture it uses started; ``None`` if nothing."""
        if _started:
            return f"started {len(_started)} process(es), the first {_started[0]}"
        info = getattr(item, "_fixtureinfo", None)  # not public, but the only record of what it uses
        for name, definitions in info.name2fixturedefs.items() if info is not None else ():
            first = self.starting_fixtures.get((definitions[-1].baseid, name))
            if first is not None:
                return f"uses the fixture {name!r}, which started {first}"
        return None
