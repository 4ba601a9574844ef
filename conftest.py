"""Collection for the whole repository. The modules that need the optional ``pettingzoo`` extra (NumPy,
PettingZoo, Gymnasium) have doctests; without the extra they are left out, and the test session's header
says so. The README's test command installs the extra (it is part of ``dev``), so CI runs them."""

from __future__ import annotations

import importlib.util

NEEDS_EXTRA = [
    "sdk/python/pyramid_sdk/features.py",
    "sdk/python/pyramid_sdk/policy.py",
    "sdk/python/pyramid_sdk/pettingzoo_env.py",
]
MISSING = [name for name in ("numpy", "pettingzoo", "gymnasium") if importlib.util.find_spec(name) is None]

collect_ignore = NEEDS_EXTRA if MISSING else []


def pytest_report_header() -> list[str]:
    if not MISSING:
        return []
    return [f"skipped: the doctests of {', '.join(NEEDS_EXTRA)}: {', '.join(MISSING)} not installed"]
