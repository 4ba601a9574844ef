import pytest

from support.processes import bot_processes, stop_bot_processes


@pytest.fixture(autouse=True)
def no_bot_left_behind(request: pytest.FixtureRequest):
    """Every slow test: no bot process of this session was running before it, and none outlives it.

    A test that leaves one behind fails, and the processes are killed: one leak is one failure, not a
    failure of every test after it. A quick test starts no process at all (tests/tiers.py fails it if it
    does), so it cannot leave a bot behind: it skips the two scans of /proc, which would cost the quick
    tier about a tenth of its time."""
    if request.node.get_closest_marker("quick") is not None:
        yield
        return
    assert bot_processes() == [], "bot processes were running before the test"
    yield
    left = bot_processes()
    stop_bot_processes(left)  # this test fails for them; the next ones start clean
    assert left == [], "a bot process outlived its referee"
