"""Local play beside a remote entrant that is away, revoked or stalled (issue #32, item 11).

Plays ``referee run --listen`` on a league of cheap local entrants (sandboxed random command bots, two
matches at once) and one remote entrant, whose bot (the Python SDK's random bot, a process on this
machine connecting over loopback) is, for each scenario:

- ``honest``: connected throughout (the yardstick);
- ``absent``: never started;
- ``revoked``: connected, then its token revoked at the window's start;
- ``stalled``: connected, then frozen with SIGSTOP for the window (75 s by default), then SIGCONT.

Counts the local matches (no remote seat) stored during a window that opens ``--lead`` seconds after
the first stored match and lasts ``--window`` seconds, and prints each scenario's pace (local matches
stored a minute) and its ratio to the yardstick measured in the same round: to its local pace, and to
its pace of all matches (the honest remote entrant's matches take turns of the two workers, so the
yardstick's local pace alone is lower than what the workers play). Scenarios alternate within
each round (``--rounds``), so that the load of the shared machine falls on all of them alike::

    python benchmarks/remote_stall.py --rounds 2

The league's ``remote: wait`` is long (300 s), so that the away entrant is still waited for during the
window: what is measured is whether its waiting matches hold workers.
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' shared helpers
from support import ROOT
from support.cli import REFEREE
from support.net import free_port

SCENARIOS = ("honest", "absent", "revoked", "stalled")
LOCAL = 7


def league_text(folder: Path, rounds: int) -> str:
    entrants = "".join(
        f"  - name: local{n}\n    command: python sample_bots/random_bot.py\n    cwd: {ROOT}\n"
        for n in range(LOCAL)
    )
    return (
        "name: Stall Bench\nseed: 13\nplayers: 2\n"
        f"schedule: {{format: round-robin, rounds: {rounds}, seating: balanced}}\n"
        "time_control: {per_action: 2s, bank: 20s}\nconcurrency: 2\n"
        f"database: {folder / 'results.sqlite'}\nremote: {{wait: 300s}}\n"
        f"entrants:\n{entrants}  - name: far\n    remote: true\n"
    )


def stored(database: Path) -> list[tuple[float, bool]]:
    """(finished_at, has a remote seat) of every stored match."""
    if not database.exists():
        return []
    try:
        with sqlite3.connect(database) as db:
            rows = db.execute(
                "SELECT m.finished_at, max(s.entrant = 'far') FROM matches m JOIN seats s USING (match_id) "
                "GROUP BY m.match_id"
            ).fetchall()
    except sqlite3.OperationalError:
        return []
    return [(float(at), bool(remote)) for at, remote in rows]


def wait_until(check, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"never {what}")
        time.sleep(0.1)


def scenario(name: str, lead: float, window: float, rounds: int) -> tuple[float, int, int]:
    """Local matches stored a minute during the window; the local and the remote matches stored in it."""
    folder = Path(tempfile.mkdtemp(prefix=f"remote-stall-{name}-"))
    folder.chmod(0o755)
    league = folder / "league.yaml"
    league.write_text(league_text(folder, rounds), encoding="utf-8")
    issued = subprocess.run(
        [REFEREE, "token", "issue", league, "far"], capture_output=True, text=True, check=True
    )
    token = folder / "far.token"
    token.write_text(issued.stdout.strip() + "\n")
    port = free_port()
    log = (folder / "run.log").open("wb")
    run = subprocess.Popen(
        [REFEREE, "run", league, "--listen", f"127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT
    )
    bot = None
    if name != "absent":
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYRAMID_")}
        env |= {"PYRAMID_ADDRESS": f"127.0.0.1:{port}", "PYRAMID_TOKEN_FILE": str(token)}
        bot = subprocess.Popen(
            [sys.executable, "-m", "sample_bots.random_bot"], cwd=ROOT, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
    database = folder / "results.sqlite"
    try:
        wait_until(lambda: stored(database), 120, "stored a match")
        first = min(at for at, _ in stored(database))
        opens = first + lead
        time.sleep(max(0.0, opens - time.time()))
        if name == "revoked":
            subprocess.run([REFEREE, "token", "revoke", league, "far"], capture_output=True, check=True)
        if name == "stalled" and bot is not None:
            os.kill(bot.pid, signal.SIGSTOP)
        time.sleep(window)
        closes = opens + window
        if name == "stalled" and bot is not None:
            os.kill(bot.pid, signal.SIGCONT)
        inside = [(at, remote) for at, remote in stored(database) if opens <= at < closes]
        local = sum(1 for _, remote in inside if not remote)
        if run.poll() is not None:
            print(f"  warning: the {name} run ended before its window closed", file=sys.stderr)
        return 60 * local / window, local, len(inside) - local
    finally:
        for process in (run, bot):
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGINT)
        for process in (run, bot):
            if process is not None:
                try:
                    process.wait(60)
                except subprocess.TimeoutExpired:
                    process.kill()
        log.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1, help="Rounds of the four scenarios, alternating.")
    parser.add_argument("--window", type=float, default=75.0, help="Seconds measured (the stall's length).")
    parser.add_argument("--lead", type=float, default=10.0, help="Seconds after the first stored match.")
    parser.add_argument("--league-rounds", type=int, default=4, help="The league's rounds (size).")
    parser.add_argument("--only", nargs="*", choices=SCENARIOS, default=list(SCENARIOS))
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    paces: dict[str, list[float]] = {name: [] for name in args.only}
    totals: list[float] = []
    for number in range(args.rounds):
        yardstick = everything = None
        for name in args.only:
            pace, local, remote = scenario(name, args.lead, args.window, args.league_rounds)
            paces[name].append(pace)
            if name == "honest":
                yardstick, everything = pace, 60 * (local + remote) / args.window
                totals.append(everything)
            ratio = (
                f"  {pace / yardstick:.2f}x honest's local, {pace / everything:.2f}x its all"
                if everything
                else ""
            )
            print(
                f"round {number + 1} {name:8} {pace:6.1f} local matches/min ({local} local, {remote} "
                f"remote in {args.window:g}s){ratio}  load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
    if "honest" in paces:
        base, whole = sum(paces["honest"]) / len(paces["honest"]), sum(totals) / len(totals)
        print(f"mean honest, all matches {whole:6.1f} matches/min")
        for name, values in paces.items():
            mean = sum(values) / len(values)
            print(
                f"mean {name:8} {mean:6.1f} local matches/min  {mean / base:.2f}x honest's local, "
                f"{mean / whole:.2f}x its all"
            )


if __name__ == "__main__":
    main()
