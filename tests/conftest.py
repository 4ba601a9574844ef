import sys
from pathlib import Path

import pytest

# Test helpers (playthrough.py, arena.py) import as plain modules.
sys.path.insert(0, str(Path(__file__).parent))

from arena import bot_processes


@pytest.fixture(autouse=True)
def no_bot_left_behind():
    """Every test: no bot process of this session was running before it, and none outlives it."""
    assert bot_processes() == [], "bot processes were running before the test"
    yield
    assert bot_processes() == [], "a bot process outlived its referee"
