"""A bot that exits at its first start and plays at random from then on.

``python tests/bots/flaky_start.py MARKER``: without the file MARKER it creates it and exits 1 before
saying hello; with it, it plays as sample_bots/random_bot.py. It keeps that state in a file, so its league
needs ``sandbox: none`` (a sandboxed bot can write only its own /tmp, fresh for every process).
``never`` instead of MARKER: it never starts.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sample_bots.random_bot import RandomBot

if __name__ == "__main__":
    marker = sys.argv[1]
    if marker == "never":
        print("flaky_start: this bot never starts", file=sys.stderr)
        sys.exit(1)
    if not Path(marker).exists():
        Path(marker).write_text("started once\n", encoding="utf-8")
        print("flaky_start: failing the first start on purpose", file=sys.stderr)
        sys.exit(1)
    from pyramid_sdk.client import run

    run(RandomBot())
