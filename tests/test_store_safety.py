"""A league's results are never lost to another league, a second run, a full disk or a damaged file
(issue #24, items 1, 5 and 12), through the real CLI with real SQLite files and real bot processes."""

import contextlib
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from referee.match.sandbox import bubblewrap_problem
from referee.results.errors import StoreError
from referee.results.history import VersionArchive
from referee.web.human_store import HumanStore
from support import ROOT
from support.cli import REFEREE, referee
from support.leagues import PROCESS_BOTS, complete_matches, dump, write_league
from support.net import free_port
from support.processes import bot_processes

EXIT_BUSY = 5
EXIT_STORAGE = 6

FAST = f"""\
name: {{name}}
seed: {{seed}}
players: 2
schedule: {{{{rounds: {{rounds}}}}}}
concurrency: {{concurrency}}
entrants:
  - name: random
    module: sample_bots.random_bot:RandomBot
    cwd: {ROOT}
  - name: heuristic
    module: sample_bots.heuristic:HeuristicBot
    cwd: {ROOT}
  - name: h2
    module: sample_bots.heuristic:HeuristicBot
    cwd: {ROOT}
"""
"""In-process bots: 6 matches a round, a few milliseconds each."""

PROCESSES = f"""\
name: Busy League
seed: 17
players: 2
schedule: {{rounds: 2}}
time_control: {{per_action: 2s, bank: 20s}}
entrants:
{PROCESS_BOTS}  - name: r2
    command: python sample_bots/random_bot.py
    cwd: {ROOT}
"""
"""Bot processes (a fresh one per match, in the sandbox where it works): 12 matches, half a minute."""


def fast_league(path: Path, name: str = "Fast League", seed: int = 3, rounds: int = 1, concurrency: int = 1):
    return write_league(
        path.parent, FAST.format(name=name, seed=seed, rounds=rounds, concurrency=concurrency), path.name
    )


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single line a failing command wrote on stderr."""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# -- item 1: another league's results -----------------------------------------------------------------


def test_league_files_in_one_folder_get_a_database_each_by_default(tmp_path):
    spring = fast_league(tmp_path / "spring.yaml", "Spring", seed=3)
    autumn = fast_league(tmp_path / "autumn.yaml", "Autumn", seed=4)
    referee("run", spring, check=True)
    before = referee("export", spring, check=True).stdout
    referee("run", autumn, check=True)
    assert referee("export", spring, check=True).stdout == before
    assert referee("export", autumn, check=True).stdout != before
    assert complete_matches(tmp_path / "spring.sqlite") == complete_matches(tmp_path / "autumn.sqlite") == 6
    assert (tmp_path / "spring-logs" / "referee.log").is_file()
    assert not (tmp_path / "results.sqlite").exists()


def test_fresh_never_empties_the_database_of_another_league_file(tmp_path):
    first = fast_league(tmp_path / "first.yaml", "First", seed=3)
    second = fast_league(tmp_path / "second.yaml", "Second", seed=4)
    for league in (first, second):  # both name one file: the 36 results of issue #24 were lost so
        league.write_text(league.read_text() + "database: results.sqlite\n", encoding="utf-8")
    referee("run", first, check=True)
    database = tmp_path / "results.sqlite"
    before, stored = referee("export", first, check=True).stdout, dump(database)
    for args in (("run", second), ("run", second, "--fresh"), ("leaderboard", second)):
        refused = referee(*args)
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert one_line(refused) == (
            f"Error: {database} holds the results of another league, 'First' of league file {first}, and no "
            f"command of second.yaml changes it (--fresh neither); set database: in {second} to a file of "
            "its own (leave it out to use second.sqlite)"
        )
        assert "run with --fresh" not in refused.stderr
    dry = referee("run", second, "--dry-run", "--fresh", check=True).stdout
    assert f"{database} holds the results of another league, 'First': the run would refuse" in dry
    assert dump(database) == stored
    assert referee("export", first, check=True).stdout == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "first.yaml",
        "results-logs",
        "results.sqlite",
        "second.yaml",
    ]  # no copy made, no lock left behind


def test_fresh_keeps_a_copy_of_the_results_it_forgets_and_says_where(tmp_path):
    league = fast_league(tmp_path / "league.yaml", seed=3)
    referee("run", league, check=True)
    old = referee("export", league, check=True).stdout
    league.write_text(league.read_text().replace("seed: 3", "seed: 5"), encoding="utf-8")
    refused = referee("run", league)
    assert refused.returncode == 1
    assert "run with --fresh to start over (a copy of them is kept beside it)" in one_line(refused)
    fresh = referee("run", league, "--fresh", check=True)
    said = re.fullmatch(
        rf"--fresh: the 6 match\(es\) stored in {re.escape(str(tmp_path / 'league.sqlite'))} are forgotten; "
        r"a copy of them is kept in (\S+)",
        fresh.stderr.splitlines()[0],
    )
    assert said, fresh.stderr
    backup = Path(said.group(1))
    assert re.fullmatch(r"league\.before-fresh-\d{8}-\d{6}\.sqlite", backup.name)
    assert backup.parent == tmp_path
    assert referee("export", league, check=True).stdout != old  # the new seed's matches
    # The copy is whole: the old league file, pointed at it, reads exactly the old results.
    reader = tmp_path / "old.yaml"
    reader.write_text(
        league.read_text().replace("seed: 5", "seed: 3") + f"database: {backup.name}\n", encoding="utf-8"
    )
    assert referee("export", reader, check=True).stdout == old
    # It is league.yaml's copy: another league file may read it but not run on it.
    assert "holds the results of another league, 'Fast League' of league file" in one_line(
        referee("run", reader)
    )
    again = referee(
        "run", league, "--fresh", check=True
    )  # the same settings: a second copy, under another name
    copies = sorted(tmp_path.glob("league.before-fresh-*.sqlite"))
    assert len(copies) == 2
    assert str(copies[-1] if copies[0] == backup else copies[0]) in again.stderr


def test_a_results_sqlite_of_the_old_default_is_still_this_league_s(tmp_path):
    league = fast_league(tmp_path / "league.yaml", "Old League")
    league.write_text(league.read_text() + "database: results.sqlite\n", encoding="utf-8")
    referee("run", league, check=True)
    full = referee("export", league, check=True).stdout
    database = tmp_path / "results.sqlite"
    with contextlib.closing(sqlite3.connect(database)) as db, db:  # as a referee before #24 left it
        db.execute("PRAGMA foreign_keys = ON")  # before the transaction: a match goes with its seats
        db.execute("DELETE FROM meta WHERE key = 'league_file'")
        db.execute("DELETE FROM matches WHERE position >= 3")
    league.write_text(league.read_text().replace("database: results.sqlite\n", ""), encoding="utf-8")
    dry = referee("run", league, "--dry-run", check=True).stdout
    assert f"results in {database}; 3 played, 3 to play" in dry
    assert "6/6 matches" in referee("run", league, check=True).stdout  # resumed in results.sqlite
    assert referee("export", league, check=True).stdout == full
    assert not (tmp_path / "league.sqlite").exists()
    other = fast_league(tmp_path / "other.yaml", "Other League", seed=4)  # not its name: a file of its own
    referee("run", other, check=True)
    assert complete_matches(tmp_path / "other.sqlite") == 6
    assert referee("export", league, check=True).stdout == full


def test_a_renamed_league_file_keeps_its_database(tmp_path):
    league = fast_league(tmp_path / "league.yaml")
    league.write_text(league.read_text() + "database: results.sqlite\n", encoding="utf-8")
    referee("run", league, check=True)
    before = referee("export", league, check=True).stdout
    renamed = league.rename(tmp_path / "spring.yaml")
    assert (
        "6/6 matches" in referee("run", renamed, check=True).stdout
    )  # its own: resumed, nothing played again
    assert referee("export", renamed, check=True).stdout == before
    with contextlib.closing(sqlite3.connect(tmp_path / "results.sqlite")) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'league_file'").fetchone() == ("spring.yaml",)


def test_an_sqlite_file_of_something_else_is_not_written_to(tmp_path):
    league = fast_league(tmp_path / "league.yaml")
    league.write_text(league.read_text() + "database: app.db\n", encoding="utf-8")
    with contextlib.closing(sqlite3.connect(tmp_path / "app.db")) as db, db:
        db.execute("CREATE TABLE users (name TEXT)")
        db.execute("INSERT INTO users VALUES ('ada')")
    before = (tmp_path / "app.db").read_bytes()
    refused = referee("run", league)
    assert refused.returncode == 1
    assert one_line(refused) == (
        f"Error: {tmp_path / 'app.db'}: an SQLite database of something else, with no results in it (its "
        "tables: users); point database: at another file"
    )
    assert (tmp_path / "app.db").read_bytes() == before


# -- item 5: one run at a time ------------------------------------------------------------------------


def wait_for_holder(lock: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        try:
            holder = lock.read_text().partition("\n")[0]
        except FileNotFoundError:  # not taken yet, or taken for a moment and let go (a check that it is free)
            holder = ""
        if holder == str(process.pid):
            return
        time.sleep(0.02)
    raise AssertionError("the first run never took the lock")


def busy_line(database: Path, pid: int) -> str:
    return (
        f"Error: {database}: another `referee run` (pid {pid}) is playing this league and holds its results; "
        f"let it finish, or stop it (kill {pid}) and run again: it resumes"
    )


def test_a_second_run_names_the_run_that_holds_the_league_and_a_dead_one_blocks_nothing(tmp_path):
    league = tmp_path / "league.yaml"
    league.write_text(PROCESSES, encoding="utf-8")
    database, lock = tmp_path / "league.sqlite", tmp_path / "league.sqlite.lock"
    first = subprocess.Popen(
        [REFEREE, "run", league], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for_holder(lock, first)
        for extra in ((), ("--workers", "1"), ("--fresh",)):  # the Dask driver and --fresh wait too
            second = referee("run", league, *extra)
            assert second.returncode == EXIT_BUSY, second.stdout + second.stderr
            assert one_line(second) == busy_line(database, first.pid)
            assert second.stdout == ""
        deadline = time.monotonic() + 120
        while complete_matches(database) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)  # its lock file stays: the kernel has dropped its lock
        first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
    assert lock.exists()
    stored = complete_matches(database)
    assert 1 <= stored < 12  # the busy runs forgot nothing (--fresh among them)
    deadline = time.monotonic() + 10
    while bot_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    resumed = referee("run", league, check=True)
    assert f"{stored + 1}/12 matches" in resumed.stdout  # it played only what was missing
    assert "12/12 matches" in resumed.stdout
    assert complete_matches(database) == 12
    assert not lock.exists()  # a run that ends removes its lock file


def test_a_run_on_dask_workers_holds_the_league_too(tmp_path):
    league = fast_league(tmp_path / "league.yaml")  # it holds the lock while its cluster starts
    database, lock = tmp_path / "league.sqlite", tmp_path / "league.sqlite.lock"
    first = subprocess.Popen(
        [REFEREE, "run", league, "--workers", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for_holder(lock, first)
        second = referee("run", league)
        assert second.returncode == EXIT_BUSY, second.stdout + second.stderr
        assert one_line(second) == busy_line(database, first.pid)
        out, err = first.communicate(timeout=300)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, out + err
    assert complete_matches(database) == 6
    assert not lock.exists()


def test_a_run_of_a_served_league_names_the_server_before_any_option_it_lacks(tmp_path):
    """Issue #32, item 8: the league is held by ``referee serve``, and the run says so, naming it, before
    it would ask for the --listen that its remote entrant needs (which does not matter while it is
    held); a second serve says the same."""
    league = tmp_path / "league.yaml"
    league.write_text(PROCESSES + "  - name: far\n    remote: true\n", encoding="utf-8")
    database, lock = tmp_path / "league.sqlite", tmp_path / "league.sqlite.lock"
    port = free_port()
    served = subprocess.Popen(
        [REFEREE, "serve", league, "--http", f"127.0.0.1:{port}", "--listen", f"127.0.0.1:{free_port()}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for_holder(lock, served)
        assert lock.read_text() == f"{served.pid}\nreferee serve\n"
        holder = (
            f"{database}: `referee serve` (pid {served.pid}) is playing this league and holds its results; "
            f"it serves the league until it is stopped, or stop it (kill {served.pid}) and run again: it "
            "resumes"
        )
        for command in (("run",), ("run", "--workers", "1"), ("serve", "--http", f"127.0.0.1:{free_port()}")):
            second = referee(*command, league)
            assert second.returncode == EXIT_BUSY, second.stdout + second.stderr
            said = "serve: " if command[0] == "serve" else "Error: "
            assert one_line(second) == said + holder
    finally:
        served.send_signal(signal.SIGINT)
        served.communicate(timeout=60)
    assert served.returncode == 0


# -- item 12: storage faults --------------------------------------------------------------------------


@contextlib.contextmanager
def small_disk(folder: Path, size: str):
    """A tmpfs of ``size`` at ``folder``: a real full disk, without filling the machine's own. Root only."""
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("a full disk is made with a small tmpfs, which only root can mount")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        check=False,
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_full_disk_stops_the_run_in_one_line_and_once_freed_the_run_resumes_exactly(tmp_path):
    reference = fast_league(tmp_path / "reference" / "league.yaml", rounds=2, concurrency=2)
    referee("run", reference, check=True)
    expected = referee("export", reference, check=True).stdout
    with small_disk(tmp_path / "disk", "2m") as disk:
        league = fast_league(disk / "league.yaml", rounds=2, concurrency=2)
        filler = disk / "filler"  # someone else's file: the league gets 0.5 MB, a few matches' worth
        filler.write_bytes(b"\0" * (1536 * 1024))
        full = referee("run", league)
        assert full.returncode == EXIT_STORAGE, full.stdout + full.stderr
        database = disk / "league.sqlite"
        stored = complete_matches(database)
        assert 0 < stored < 12
        assert one_line(full) == (
            f"Error: {database}: no space left to store results (database or disk is full); {stored} of 12 "
            "scheduled matches are stored safely (a match in play when it failed is not: the next run plays "
            "it); free some space on its disk and run again: it resumes"
        )
        assert not (disk / "league.sqlite.lock").exists()
        again = referee("run", league)  # still full: the same line, nothing lost
        assert again.returncode == EXIT_STORAGE
        assert complete_matches(database) >= stored
        filler.unlink()
        resumed = referee("run", league, check=True)
        assert "12/12 matches" in resumed.stdout
        assert resumed.stderr == ""
        assert (
            referee("export", league, check=True).stdout == expected
        )  # byte for byte as if never interrupted


def damage(database: Path) -> None:
    """Overwrites one page in the middle of the file with other bytes, as a failing disk might."""
    pages = database.stat().st_size // 4096
    with database.open("r+b") as file:
        file.seek(pages // 2 * 4096)
        file.write(random.Random(24).randbytes(4096))


READERS = [
    ("run",),
    ("run", "--dry-run"),
    ("run", "--fresh"),
    ("leaderboard",),
    ("matches",),
    ("export",),
    ("replay", "1"),
    ("report", "-o", "{report}"),
]


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    folder = tmp_path_factory.mktemp("damaged")
    league = fast_league(folder / "league.yaml", rounds=3)
    referee("run", league, check=True)
    database = folder / "league.sqlite"
    damage(database)
    with contextlib.closing(sqlite3.connect(database)) as db:  # the test's premise: SQLite sees it
        assert db.execute("PRAGMA quick_check(1)").fetchone()[0] != "ok"
    return league, database


@pytest.mark.parametrize("command", READERS, ids=[" ".join(c) for c in READERS])
def test_a_damaged_database_is_found_on_opening_and_nothing_is_shown(damaged, tmp_path, command):
    league, database = damaged
    before = database.read_bytes()
    args = [arg.replace("{report}", str(tmp_path / "report")) for arg in command]
    result = referee(args[0], league, *args[1:])
    assert result.returncode == EXIT_STORAGE, result.stdout + result.stderr
    assert result.stdout == ""
    line = one_line(result)
    assert line.startswith(
        f"Error: {database}: the results database is damaged (SQLite's quick_check: Page "
    ), line
    opened = command in (("run",), ("run", "--fresh"))  # to write: the others only read
    assert (
        "; nothing was read from it or written to it; " if opened else "; nothing was read from it; "
    ) in line
    assert line.endswith(
        "restore it from a copy, or move it aside (SQLite's .recover command may save part of it) and run "
        "again to play the league anew"
    )
    assert database.read_bytes() == before
    assert not (tmp_path / "report").exists()
    assert not list(league.parent.glob("league.before-fresh-*"))


def test_a_stored_record_that_does_not_decode_is_named_and_nothing_is_shown(tmp_path):
    league = fast_league(tmp_path / "league.yaml")
    referee("run", league, check=True)
    database = tmp_path / "league.sqlite"
    with contextlib.closing(sqlite3.connect(database)) as db, db:  # bytes gone bad inside one record
        match_id, record = db.execute("SELECT match_id, record FROM matches WHERE position = 2").fetchone()
        db.execute("UPDATE matches SET record = ? WHERE match_id = ?", (record[:-300], match_id))
    for args in (("leaderboard",), ("export",), ("run",)):
        result = referee(args[0], league, *args[1:])
        assert result.returncode == EXIT_STORAGE, result.stdout + result.stderr
        line = one_line(result)
        assert line.startswith(
            f"Error: {database}: the results database is damaged (the stored record of match {match_id} "
            "does not decode);"
        ), line
        assert record[-300:-200] not in line  # none of its text (it may hold hands)


SANDBOX = bubblewrap_problem()


@pytest.mark.skipif(not os.environ.get("CI") and bool(SANDBOX), reason=f"no sandbox here: {SANDBOX}")
def test_a_bot_whose_folder_holds_the_league_reads_none_of_its_database_files(tmp_path):
    """The league file in the bot's own folder: its database, SQLite's files beside it, the run's lock
    and the copies kept by --fresh are each masked."""
    tmp_path.chmod(0o755)
    (tmp_path / "bot.py").write_text((ROOT / "tests/bots/hostile.py").read_text(), encoding="utf-8")
    (tmp_path / "bot.py").chmod(0o644)
    copy = tmp_path / "league.before-fresh-20260101-000000.sqlite"
    copy.write_bytes(b"a copy holding every hand")
    targets = [tmp_path / name for name in ("league.sqlite", "league.sqlite-wal", "league.sqlite.lock")]
    league = tmp_path / "league.yaml"
    league.write_text(
        "name: spied\nseed: 3\nplayers: 2\nsandbox: required\ntime_control: {per_action: 2s, bank: 20s}\n"
        "entrants:\n"
        f"  - {{name: spy, command: 'python bot.py files {' '.join(map(str, [*targets, copy]))}', cwd: .}}\n"
        f"  - {{name: random, command: 'python {ROOT}/sample_bots/random_bot.py', cwd: {ROOT}}}\n",
        encoding="utf-8",
    )
    referee("run", league, check=True)
    log = (tmp_path / "league-logs" / "spy.log").read_text(encoding="utf-8")
    attempts = re.findall(r"ATTEMPT (read|write) (\S+): (.*)", log)
    assert len(attempts) == 3 * 2 * 4  # the preflight's process and two matches'
    assert [attempt for attempt in attempts if "GOT" in attempt[2]] == []
    assert copy.read_bytes() == b"a copy holding every hand"
    shutil.rmtree(tmp_path / "league-logs")


@pytest.mark.quick
def test_the_small_sqlite_files_name_a_damaged_file_in_one_line_as_the_results_do(tmp_path):
    """The archive of replaced versions and the human seat's matches are opened as the results are
    (``referee.results.connection``): a file that is not SQLite is named, never a traceback."""
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not an SQLite file at all, " * 200)
    for read in (lambda: VersionArchive(garbage).of("random"), lambda: HumanStore(garbage).lines()):
        with pytest.raises(StoreError) as caught:
            read()
        assert str(caught.value).startswith(f"{garbage}: not a results database"), caught.value
        assert "\n" not in str(caught.value)
