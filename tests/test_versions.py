"""Bot versions (issue #15): a changed entrant's stored matches are played again, and only those."""

import sqlite3
from pathlib import Path

from referee.league.config import load_league
from referee.league.location import versions_path
from referee.results.history import TRAJECTORY, VersionArchive, VersionResult, as_json, rating_of
from referee.run.competition import Competition
from referee.run.league_run import LeagueRun
from support import ROOT
from support.cli import export, referee
from support.leagues import small_league


def add_copied_bot(path: Path, folder: Path) -> Path:
    """A random bot whose script is a file of its own, in a folder the sandboxed bot can read."""
    folder.mkdir()
    script = folder / "bot.py"
    script.write_text((ROOT / "sample_bots" / "random_bot.py").read_text(encoding="utf-8"), encoding="utf-8")
    for readable in (path.parent, folder):
        readable.chmod(0o755)
    script.chmod(0o644)
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text + f"  - name: copied\n    command: python bot.py\n    cwd: {folder}\n", encoding="utf-8"
    )
    return script


def test_a_new_version_replays_only_its_matches(tmp_path):
    path = small_league(tmp_path)
    script = add_copied_bot(path, tmp_path / "copied")
    referee("run", path, check=True)
    before = {line["match_id"]: line for line in export(path)}
    assert len(before) == 12  # C(4,2) tables x 2 seatings

    # The version key changes heuristic's fingerprint: its 6 matches go and are played again.
    path.write_text(
        path.read_text().replace("heuristic.py   # kept on submit\n", "heuristic.py\n    version: '2'\n")
    )
    result = referee("run", path, check=True)
    assert (
        "new version of heuristic: its 6 stored match(es) are invalid and played again: r1:" in result.stderr
    )
    assert "new version of copied" not in result.stderr
    # The earlier version's results are kept for the entrant's page (referee serve shows them).
    history = VersionArchive(versions_path(load_league(path).database)).of("heuristic")
    assert [(v.matches, v.version.startswith("before ")) for v in history] == [(6, True)]
    replaced = [
        line for line in before.values() if "heuristic" in line["seats"] and line["status"] == "complete"
    ]
    assert history[0].matches == len(replaced)
    after = {line["match_id"]: line for line in export(path)}
    assert set(after) == set(before)
    for match_id, line in before.items():
        if "heuristic" not in line["seats"]:
            assert after[match_id] == line  # untouched
    assert "new version" not in referee("run", path, check=True).stderr  # nothing changed since

    # Editing the bot's script is a new version too.
    script.write_text(script.read_text(encoding="utf-8") + "# tuned\n", encoding="utf-8")
    result = referee("run", path, check=True)
    assert "new version of copied: its 6 stored match(es)" in result.stderr
    assert "new version of heuristic" not in result.stderr

    # submit --replace swaps in a new command for the entrant, keeping its other keys; the run replays it.
    submitted = referee(
        "submit",
        path,
        "--name",
        "heuristic",
        "--replace",
        "--cwd",
        ROOT,
        "--",
        "python",
        "sample_bots/random_bot.py",
        check=True,
    )
    assert "submitted: heuristic" in submitted.stdout
    text = path.read_text()
    assert "  - name: heuristic\n    command: python sample_bots/random_bot.py\n" in text
    assert "version: '2'" in text
    assert text.count("name: heuristic") == 1
    result = referee("run", path, check=True)
    assert "new version of heuristic: its 6 stored match(es)" in result.stderr
    assert len(export(path)) == 12


def test_submit_without_replace_refuses_a_taken_name_and_replace_needs_one(tmp_path):
    path = small_league(tmp_path)
    taken = referee("submit", path, "--name", "heuristic", "--", "python", "sample_bots/random_bot.py")
    assert taken.returncode == 2
    assert "--replace" in taken.stderr
    missing = referee(
        "submit",
        path,
        "--name",
        "nobody",
        "--replace",
        "--",
        "python",
        "sample_bots/random_bot.py",
    )
    assert missing.returncode == 2
    assert "no entrant named 'nobody' to replace" in missing.stderr


SETTLING = """\
name: Settling
seed: 3
players: 2
schedule: {{until: settled, max_matches: 16, batch_tables: 2, seating: single}}
concurrency: 2
entrants:
  - {{name: a, module: "sample_bots.random_bot:RandomBot", cwd: {root}{version}}}
  - {{name: b, module: "sample_bots.random_bot:RandomBot", cwd: {root}}}
  - {{name: c, module: "sample_bots.heuristic:HeuristicBot", cwd: {root}}}
  - {{name: d, module: "sample_bots.heuristic:HeuristicBot", cwd: {root}}}
"""


def _played_then_a_new_version(folder: Path) -> Path:
    """The settled league played to its end, then its file naming a new version of entrant ``a``."""
    path = folder / "league.yaml"
    path.write_text(SETTLING.format(root=ROOT, version=""), encoding="utf-8")
    referee("run", path, check=True)
    path.write_text(SETTLING.format(root=ROOT, version=', version: "2"'), encoding="utf-8")
    return path


def test_a_new_version_in_a_settled_league_is_planned_from_what_is_left(tmp_path):
    """The run that deletes a new version's matches plans the batches from the results left, as a run
    opened afresh on them would: not from the results it read before deleting them."""
    path = _played_then_a_new_version(tmp_path)
    said: list[str] = []
    run = LeagueRun.open(load_league(path), say=said.append)
    try:
        replayed = run.competition.schedule
    finally:
        run.competition.close()
    assert any(line.startswith("new version of a:") for line in said)
    afresh = Competition.open(load_league(path))  # the deletion is stored: a second look plans the same
    try:
        assert replayed == afresh.schedule
        assert not any(line.startswith("new version") for line in said[1:])
    finally:
        afresh.close()


def test_the_competition_opens_whole(tmp_path):
    """`Competition.open` alone does the opening: a new version's matches are deleted before the schedule
    is planned, so a caller needs no replay nor replan of its own (`referee serve` calls nothing more)."""
    path = _played_then_a_new_version(tmp_path)
    said: list[str] = []
    opened = Competition.open(load_league(path), say=said.append)
    try:
        planned, missing = opened.schedule, opened.missing()
    finally:
        opened.close()
    assert any(line.startswith("new version of a:") for line in said)
    assert missing, "the new version's matches are to be played again"
    afresh = Competition.open(load_league(path))
    try:
        assert afresh.schedule == planned
    finally:
        afresh.close()


def test_an_archive_made_before_ratings_were_kept_per_version_gains_them(tmp_path):
    """An archive of replaced versions written before μ and σ were kept: read as it is (no rating),
    and given the new columns when the next version is archived, the old rows kept."""
    path = tmp_path / "results-versions.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE versions (id INTEGER PRIMARY KEY, entrant TEXT, version TEXT, matches INTEGER, "
            "wins INTEGER, mean_points REAL, faults INTEGER, until REAL)"
        )
        db.execute("INSERT INTO versions VALUES (1, 'a', 'old', 4, 1, 250.5, 0, 1.0)")
    db.close()
    archive = VersionArchive(path)
    assert archive.of("a") == [VersionResult("old", 4, 1, 250.5, 0, 1.0)]
    mu, sigma, trajectory = rating_of("a", [(0, "t0", "a", 26.0, 7.0), (1, "t1", "a", 27.0, 6.5)])
    archive.add("a", VersionResult("2", 2, 1, 300.0, 1, 2.0, mu, sigma, trajectory))
    newest, oldest = archive.of("a")
    assert (newest.mu, newest.sigma, newest.trajectory) == (27.0, 6.5, ((0, 26.0, 7.0), (1, 27.0, 6.5)))
    assert oldest == VersionResult("old", 4, 1, 250.5, 0, 1.0)
    assert as_json(newest)["trajectory"] == [[0, 26.0, 7.0], [1, 27.0, 6.5]]


def test_a_long_trajectory_is_kept_at_its_cap_with_its_first_and_last_points():
    history = [(i, f"t{i}", "a", 25.0 + i / 1000, 8.0 - i / 1000) for i in range(1000)]
    mu, sigma, trajectory = rating_of("a", history)
    assert len(trajectory) == TRAJECTORY
    assert trajectory[0][0] == 0
    assert trajectory[-1][0] == 999
    assert (mu, sigma) == (trajectory[-1][1], trajectory[-1][2]) == (25.999, 7.001)
