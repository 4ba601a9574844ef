"""What the tests share, one module per concern, as gomill keeps its ``*_test_support.py`` files.

``cli`` runs the referee's command line; ``leagues`` writes league files and plays the leagues that a
session shares; ``browser`` drives headless Chromium; ``tls`` makes certificates; ``remote`` starts remote
bots and the referee they connect to; ``relay`` breaks their connections; ``arena`` plays matches between
bot processes and checks what they were told; ``playthrough`` plays random legal matches in-process.

The tests import them as ``support.<concern>`` (the repository's conftest.py puts ``tests/`` on the path);
their fixtures are registered there too, as pytest plugins."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository's root: where the tests run the referee and the bots from."""
