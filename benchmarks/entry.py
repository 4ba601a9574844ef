"""What entries cost a league in play (issue #35): the pace of ``referee serve --entry open`` (matches
stored in a window of ``--seconds``) while ten authors enter remote entrants, evenly spread over the
window, against a window with no entry, on the same server.

The league: four entrants at 2 seats (two in-process bots, sample_bots' random and heuristic as
``module:``, and two command bots, ``python sample_bots/random_bot.py`` and ``python -m
sample_bots.heuristic``, each started fresh per match in the sandbox, the second with a ``build:`` step),
balanced seatings, ``concurrency: 2``, enough rounds not to run out, and one remote entrant with a
token that never connects (so that a server from before ``--entry`` opens its door too). The entrants
entered never connect:
their matches wait (the figure is what the entry itself costs the others' play, and what the absent
newcomers' waiting matches cost the scheduler). Each window is a fresh server in a fresh folder,
measured from ``WARM`` seconds after its first stored match; a round is one window with ten entries and
one without, their order alternating from round to round; the ratio is the median of the rounds'
(entries / none).

    .venv/bin/python benchmarks/entry.py --seconds 30 --rounds 3

``--by-file`` enters each newcomer as an organiser does by hand instead: the remote entrant appended to
the league file and its token issued with ``referee token issue``; with ``--referee PATH`` it measures
another checkout's ``referee`` (one from before entries were taken in without a new pass ended serve's
pass at each change, waited for the matches in play, and built and tried every entrant again)::

    .venv/bin/python benchmarks/entry.py --by-file --referee ../main/.venv/bin/referee
"""

from __future__ import annotations

import argparse
import http.client
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' shared helpers
from api_flood import count, interrupted, load_average

from support import ROOT
from support.cli import REFEREE
from support.net import free_port

ENTRIES = 10
WARM = 3.0
LEAGUE = f"""\
name: Entry Pace
seed: 11
players: 2
schedule: {{format: round-robin, rounds: 40, seating: balanced}}
time_control: {{per_action: 2s, bank: 20s}}
concurrency: 2
database: results.sqlite
remote: {{wait: 1s}}
entrants:
  - name: random
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
  - name: heuristic
    module: sample_bots.heuristic:HeuristicBot
    cwd: {ROOT}
  - name: random-process
    command: python sample_bots/random_bot.py
    cwd: {ROOT}
  - name: heuristic-process
    command: python -m sample_bots.heuristic
    cwd: {ROOT}
    build: python -c "import sample_bots.heuristic"
  - name: standby
    remote: true
"""


def enter(port: int, name: str, source: str) -> None:
    """One entry through the API, from the address ``source`` (each author from their own)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=(source, 0))
    try:
        body = json.dumps({"name": name}).encode()
        connection.request("POST", "/api/v1/entries", body=body, headers={"content-type": "application/json"})
        answer = connection.getresponse()
        answer.read()
        if answer.status != 201:
            raise SystemExit(f"entry of {name} answered {answer.status}")
    finally:
        connection.close()


def enter_by_file(referee: str, league: Path, name: str) -> None:
    """An entrant added as an organiser does by hand: the league file, then its token."""
    with league.open("a", encoding="utf-8") as file:
        file.write(f"  - name: {name}\n    remote: true\n")
    subprocess.run([referee, "token", "issue", str(league), name], check=True, capture_output=True)


def window(
    folder: Path, port: int, seconds: float, entries: int, by_file: bool, referee: str, tag: str
) -> int:
    """Matches stored in ``seconds``, with ``entries`` entries spread evenly over them."""
    database = folder / "results.sqlite"
    begun = time.monotonic()
    before = count(database)
    for n in range(entries):
        time.sleep(max(0.0, begun + (n + 0.5) * seconds / entries - time.monotonic()))
        name = f"author-{tag}-{n}"
        if by_file:
            enter_by_file(referee, folder / "league.yaml", name)
        else:
            enter(port, name, f"127.0.0.{2 + n}")
    time.sleep(max(0.0, begun + seconds - time.monotonic()))
    return count(database) - before


def stored(database: Path) -> int:
    """Matches stored so far; 0 while the server has not made its database yet."""
    try:
        return count(database) if database.exists() else 0
    except sqlite3.OperationalError:  # made, its tables not yet
        return 0


def one_window(seconds: float, entries: int, by_file: bool, referee: str) -> int:
    """Matches stored in ``seconds`` by a fresh server in a fresh folder, with ``entries`` entries."""
    with tempfile.TemporaryDirectory(prefix="entry-pace-") as name:
        folder = Path(name)
        (folder / "league.yaml").write_text(LEAGUE, encoding="utf-8")
        issue = [referee, "token", "issue", str(folder / "league.yaml"), "standby"]
        subprocess.run(issue, check=True, capture_output=True)
        http, door = free_port(), free_port()
        entry = () if by_file else ("--entry", "open")
        process = subprocess.Popen(
            [referee, "serve", "league.yaml", "--http", f"127.0.0.1:{http}",
             "--listen", f"127.0.0.1:{door}", *entry],
            cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while stored(folder / "results.sqlite") == 0:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise SystemExit("the server stored no match within 120 s")
                time.sleep(0.2)
            time.sleep(WARM)
            return window(folder, http, seconds, entries, by_file, referee, "n")
        finally:
            interrupted(process)


def one_round(seconds: float, entries_first: bool, by_file: bool, referee: str) -> tuple[int, int]:
    """(stored with no entry, stored during the entries), each by a server of its own, the order
    alternating from round to round."""
    figures: dict[bool, int] = {}
    for with_entries in (True, False) if entries_first else (False, True):
        figures[with_entries] = one_window(seconds, ENTRIES if with_entries else 0, by_file, referee)
    return figures[False], figures[True]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--by-file", action="store_true", help="enter by the league file and the token CLI")
    parser.add_argument("--referee", default=str(REFEREE), help="the referee command to measure")
    args = parser.parse_args()
    ratios = []
    for number in range(args.rounds):
        none, during = one_round(args.seconds, number % 2 == 0, args.by_file, args.referee)
        ratio = during / none if none else float("nan")
        ratios.append(ratio)
        print(
            f"round {number + 1}: {none} matches with no entry, {during} during {ENTRIES} entries "
            f"in {args.seconds:g}s: {ratio:.2f} (load {load_average()})",
            flush=True,
        )
    print(f"median ratio (entries / none): {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
