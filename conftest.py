"""Collection for the whole repository. The modules that need the optional ``pettingzoo`` extra (NumPy,
PettingZoo, Gymnasium) have doctests; without the extra they are left out, and the test session's header
says so. The README's test command installs the extra (it is part of ``dev``), so CI runs them.

Every test, the doctests of ``sdk/`` and ``referee/`` included, is in one of two tiers, quick or slow:
``tests/tiers.py`` assigns them and checks them (README.md, "Tests")."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "tests"))  # the tests import their helpers as support.<concern>
pytest.register_assert_rewrite("support")  # the shared helpers' asserts explain themselves, as tests' do

from tiers import Tiers, watch_processes  # noqa: E402

NEEDS_EXTRA = [
    "sdk/python/pyramid_sdk/features.py",
    "sdk/python/pyramid_sdk/pettingzoo_bot.py",
    "sdk/python/pyramid_sdk/pettingzoo_env.py",
]
MISSING = [name for name in ("numpy", "pettingzoo", "gymnasium") if importlib.util.find_spec(name) is None]

collect_ignore = NEEDS_EXTRA if MISSING else []
pytest_plugins = [
    "pytester",  # tests/test_tiers.py runs pytest sessions of its own
    "support.browser",  # one headless Chromium a test module
    "support.leagues",  # the leagues a session plays once and shares
    "support.tls",  # the session's test CA and server certificate
]


def pytest_report_header() -> list[str]:
    if not MISSING:
        return []
    return [f"skipped: the doctests of {', '.join(NEEDS_EXTRA)}: {', '.join(MISSING)} not installed"]


def pytest_configure(config: pytest.Config) -> None:
    watch_processes()
    config.pluginmanager.register(Tiers(ROOT), "tiers")
