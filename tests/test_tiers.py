"""The test tiers (tests/tiers.py) stay true: each test session here is a real pytest process in a folder
of its own, with the plugin as the repository's conftest.py registers it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

CONFTEST = f"""
import sys
from pathlib import Path

sys.path.insert(0, {str(TESTS)!r})

from tiers import Tiers, watch_processes


def pytest_configure(config):
    watch_processes()
    quick = {{"tests/test_unit.py"}}
    slow = {{"tests/test_e2e.py": "a process"}}
    config.pluginmanager.register(Tiers(Path(__file__).parent, quick, slow, "the lists"), "tiers")
"""

UNIT = """
import multiprocessing
import subprocess

import pytest


def test_pure():
    assert True


def test_starts_true():
    subprocess.run(["true"], check=True)


def test_spawns():
    process = multiprocessing.get_context("spawn").Process(target=print)
    process.start()
    process.join()


@pytest.mark.slow
def test_marked_slow_starts_true():
    subprocess.run(["true"], check=True)
"""

E2E = """
import subprocess

import pytest


@pytest.fixture(scope="module")
def server():
    process = subprocess.Popen(["sleep", "30"])
    yield process
    process.kill()
    process.wait()


def test_with_the_server(server):
    assert server.poll() is None


@pytest.mark.quick
def test_marked_quick_with_the_server(server):
    assert server.poll() is None


@pytest.mark.quick
def test_marked_quick_alone():
    assert True
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(
        """
        [pytest]
        addopts = --strict-markers
        markers =
            quick: starts no process
            slow: starts processes
        """
    )
    pytester.makeconftest(CONFTEST)
    tests = pytester.mkdir("tests")
    (tests / "test_unit.py").write_text(textwrap.dedent(UNIT), encoding="utf-8")
    (tests / "test_e2e.py").write_text(textwrap.dedent(E2E), encoding="utf-8")
    return pytester


def test_a_quick_test_that_starts_a_process_fails_saying_what_it_started_and_what_to_do(project):
    result = project.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=7, errors=3)
    result.stdout.fnmatch_lines(  # in the order of the run: test_e2e.py first
        [
            "tests/test_e2e.py::test_marked_quick_with_the_server is in the quick tier but uses the fixture "
            "'server', which started 'sleep': *",
            "tests/test_unit.py::test_starts_true is in the quick tier but started 1 process(es), "
            "the first 'true': mark it @pytest.mark.slow, or move its module to SLOW_MODULES in the lists",
            "tests/test_unit.py::test_spawns is in the quick tier but started * process(es), the first *",
        ]
    )
    result.stdout.no_fnmatch_line("*test_marked_slow_starts_true is in the quick tier*")
    result.stdout.no_fnmatch_line("*test_with_the_server is in the quick tier*")


def test_minus_m_quick_runs_the_quick_tier_and_a_tests_own_mark_wins(project):
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "-m", "quick", "--collect-only", "-q")
    chosen = {line for line in result.stdout.lines if "::" in line}
    assert chosen == {
        "tests/test_unit.py::test_pure",
        "tests/test_unit.py::test_starts_true",
        "tests/test_unit.py::test_spawns",
        "tests/test_e2e.py::test_marked_quick_with_the_server",
        "tests/test_e2e.py::test_marked_quick_alone",
    }


def test_a_module_in_neither_tier_stops_the_collection_with_one_line(project):
    (project.path / "tests" / "test_new.py").write_text("def test_new():\n    pass\n", encoding="utf-8")
    result = project.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines == [
        "ERROR: tests/test_new.py is in neither test tier: add it to QUICK_MODULES (if none of its tests "
        "starts a process) or SLOW_MODULES in the lists",
        "",
    ]
