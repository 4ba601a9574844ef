"""What the tests share, one module per concern, as gomill keeps its ``*_test_support.py`` files.

``cli`` runs the referee's command line; ``leagues`` writes league files and plays the leagues that a
session shares; ``processes`` marks what the session starts and finds the bot and Dask worker processes
it left; ``net`` gives a free port; ``serve`` starts ``referee serve`` and reads it over HTTP; ``remote``
starts remote bots and the referee they connect to; ``door`` opens the remote door in the test's own
process and talks raw gRPC to it; ``tls`` makes certificates; ``relay`` breaks connections; ``browser``
drives headless Chromium; ``arena`` plays matches between bot processes and checks what they were told;
``playthrough`` plays random legal matches in-process.

The tests import them as ``support.<concern>`` (the repository's conftest.py puts ``tests/`` on the path;
a benchmark puts it there itself); their fixtures are registered there too, as pytest plugins. No test
module imports another (tests/test_quality.py checks it)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository's root: where the tests run the referee and the bots from."""
