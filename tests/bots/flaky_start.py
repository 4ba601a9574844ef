"""A bot that fails some of its starts and plays at random otherwise.

``python tests/bots/flaky_start.py COUNTER STARTS``: COUNTER is a file counting this entrant's starts;
STARTS says which starts exit 1 before saying hello: ``2,3`` (the 2nd and 3rd), ``2-`` (the 2nd and every
later one), ``1-`` (every one). It keeps its count in a file, so its league needs ``sandbox: none`` (a
sandboxed bot can write only its own /tmp, fresh for every process).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sample_bots.random_bot import RandomBot


def fails(start: int, starts: str) -> bool:
    for part in starts.split(","):
        if part.endswith("-"):
            if start >= int(part[:-1]):
                return True
        elif start == int(part):
            return True
    return False


if __name__ == "__main__":
    counter = Path(sys.argv[1])
    start = int(counter.read_text() if counter.exists() else "0") + 1
    counter.write_text(str(start), encoding="utf-8")
    if fails(start, sys.argv[2]):
        print(f"flaky_start: start {start} fails on purpose", file=sys.stderr)
        sys.exit(1)
    from pyramid_sdk.client import run

    run(RandomBot())
