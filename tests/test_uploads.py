"""Uploaded bots end to end (referee upload): a good upload builds in the sandbox, passes the check,
joins a league and plays in `referee run`; hostile builds fail each attempt; a refused archive and a
machine without bubblewrap are one line. Real bubblewrap, real processes, the real CLI."""

from __future__ import annotations

import io
import os
import re
import shutil
import socket
import sqlite3
import tarfile
import zipfile
from pathlib import Path

import pytest

from referee.match.sandbox import bubblewrap_problem
from referee.starter import NODE_BOT
from referee.uploads.build import BuildLimits, BuildStatus, build
from referee.uploads.pipeline import node_sdk
from support import ROOT
from support.cli import export, referee

pytestmark = pytest.mark.skipif(
    not os.environ.get("CI") and bool(bubblewrap_problem()),
    reason=f"the sandbox cannot run here: {bubblewrap_problem()} (CI installs bubblewrap)",
)

GOOD_BOT = """\
from pathlib import Path
from pyramid_sdk.client import run
from sample_bots.random_bot import RandomBot

assert Path("built.txt").read_text() == "BUILT {tag}\\n", "the build step did not run"
run(RandomBot())
"""
MAKE = 'from pathlib import Path\nPath("built.txt").write_text("BUILT {tag}\\n")\nprint("made it")\n'


def archive(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as made:
        for name, text in files.items():
            made.writestr(name, text)
    return buffer.getvalue()


def good(tag: str) -> bytes:
    return archive(
        {
            "pyramid.yaml": "language: python\ncommand: python bot.py\nbuild: python make.py\n",
            "bot.py": GOOD_BOT.format(tag=tag),
            "make.py": MAKE.format(tag=tag),
        }
    )


def hostile(*args: str) -> bytes:
    script = (ROOT / "tests/bots/hostile_build.py").read_text(encoding="utf-8")
    command = "python hostile.py " + " ".join(args)
    return archive(
        {
            "pyramid.yaml": f"language: python\ncommand: python bot.py\nbuild: {command}\n",
            "bot.py": "raise SystemExit(1)\n",
            "hostile.py": script,
        }
    )


def a_league(tmp_path: Path) -> Path:
    folder = tmp_path / "league"
    folder.mkdir()
    league = folder / "league.yaml"
    league.write_text(
        "# a tiny league for uploads\nname: uploads\nseed: 5\nplayers: 2\nsandbox: required\n"
        "time_control: {per_action: 2s, bank: 20s}\nentrants:\n"
        "  - name: random\n    module: sample_bots.random_bot:RandomBot  # the house's bot\n"
        "  - name: random2\n    module: sample_bots.random_bot:RandomBot\n",
        encoding="utf-8",
    )
    return league


def upload(league: Path, name: str, data: bytes, tmp_path: Path, *options: str):
    path = tmp_path / f"{name}.zip"
    path.write_bytes(data)
    return referee("upload", league, name, path, *options)


def attempts(log: Path) -> dict[str, str]:
    text = log.read_text(encoding="utf-8")
    found = dict(re.findall(r"ATTEMPT (.*?): (.*)$", text, re.MULTILINE))
    assert found, text
    return found


def build_log(tmp_path: Path, name: str) -> Path:
    (log,) = (tmp_path / "league-uploads" / name).glob("*/build.log")
    return log


def test_a_good_upload_is_built_in_the_sandbox_checked_entered_and_plays_and_its_old_version_goes(tmp_path):
    league = a_league(tmp_path)
    result = upload(league, "alice", good("one"), tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASS: ready for a league" in result.stdout
    text = league.read_text(encoding="utf-8")
    assert "# the house's bot" in text  # the league file keeps its comments
    first = re.search(r"cwd: (\.\./league-uploads/alice/([0-9a-f]{16})/bot)", text)
    assert first, text
    bot = (league.parent / first.group(1)).resolve()
    assert (bot / "built.txt").read_text(encoding="utf-8") == "BUILT one\n"
    assert not (league.parent / "league-uploads").exists()  # outside the league's folder
    assert oct((tmp_path / "league-uploads" / "alice").stat().st_mode & 0o777) == "0o711"
    assert not bot.stat().st_mode & 0o022  # no one but the referee may change the bot after its check

    run = referee("run", league)
    assert run.returncode == 0, run.stdout + run.stderr
    played = export(league)
    assert len([line for line in played if "alice" in str(line)]) == 4, played

    again = upload(league, "alice", good("one"), tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "built and checked before" in again.stdout

    broken = archive(
        {
            "pyramid.yaml": "language: python\ncommand: python bot.py\nbuild: python make.py\n",
            "make.py": "1/0",
        }
    )
    refused = upload(league, "alice", broken, tmp_path)
    assert refused.returncode == 2
    assert refused.stderr.startswith(
        "Error: not uploaded: build 'python make.py' failed: exited with code 1; "
    )
    assert "ZeroDivisionError" in refused.stderr
    assert len(list((tmp_path / "league-uploads" / "alice").iterdir())) == 2  # kept until the next upload
    assert f"cwd: {first.group(1)}" in league.read_text(encoding="utf-8")  # the league file untouched

    second = upload(league, "alice", good("two"), tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    versions = sorted(path.name for path in (tmp_path / "league-uploads" / "alice").iterdir())
    assert first.group(2) in versions
    assert len(versions) == 2
    assert referee("run", league).returncode == 0  # replays alice's matches with the second version
    third = upload(league, "alice", good("three"), tmp_path)
    assert third.returncode == 0, third.stdout + third.stderr
    assert f"deleted version {first.group(2)} of alice: no stored match uses it" in third.stdout
    left = sorted(path.name for path in (tmp_path / "league-uploads" / "alice").iterdir())
    assert first.group(2) not in left
    assert len(left) == 2


@pytest.mark.skipif(
    shutil.which("node") is None or node_sdk() is None, reason="needs node and npm ci --prefix sdk/node"
)
def test_a_node_upload_gets_the_arenas_node_sdk_builds_and_plays(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "bot.js").write_text(NODE_BOT, encoding="utf-8")
    build_step = "node -e \"require('fs').writeFileSync('built.txt', 'ok')\""
    (source / "pyramid.yaml").write_text(f"language: node\ncommand: node bot.js\nbuild: {build_step}\n")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as made:
        made.add(source, arcname=".")  # as tar -C src -czf bot.tar.gz . makes it
    (tmp_path / "nodey.tar.gz").write_bytes(buffer.getvalue())
    league = a_league(tmp_path)
    result = referee("upload", league, "nodey", tmp_path / "nodey.tar.gz")
    assert result.returncode == 0, result.stdout + result.stderr
    (bot,) = (tmp_path / "league-uploads" / "nodey").glob("*/bot")
    assert (bot / "built.txt").read_text(encoding="utf-8") == "ok"
    assert (bot / "node_modules" / "pyramid-arena-sdk" / "index.js").is_file()
    run = referee("run", league)
    assert run.returncode == 0, run.stdout + run.stderr
    assert len([line for line in export(league) if "nodey" in str(line)]) == 4


def test_a_build_cannot_read_the_league_file_or_its_results(tmp_path):
    league = a_league(tmp_path)
    database = league.parent / "league.sqlite"
    with sqlite3.connect(database) as db:
        db.execute("CREATE TABLE secret (seed INTEGER)")
    checkout = ROOT / "pyproject.toml"  # beside the venv the build runs on, which alone is shown
    targets = [league, database, league.parent, tmp_path / "mallory.zip", checkout]
    result = upload(league, "mallory", hostile("read", *map(str, targets)), tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("Error: not uploaded: build 'python hostile.py read ")
    assert "failed: exited with code 1" in result.stderr
    assert len(result.stderr.splitlines()) == 1
    seen = attempts(build_log(tmp_path, "mallory"))
    assert len(seen) == len(targets)
    assert [what for what, got in seen.items() if "GOT" in got] == []
    assert all(path.exists() for path in targets)  # each is there to read, outside the sandbox
    assert "mallory" not in league.read_text(encoding="utf-8")


def test_a_build_cannot_write_outside_its_folder(tmp_path):
    league = a_league(tmp_path)
    targets = [
        league.parent / "planted",
        tmp_path / "planted",
        Path("/tmp/pyramid-upload-planted"),
        ROOT / "planted",
    ]
    result = upload(league, "mallory", hostile("write", *map(str, targets)), tmp_path)
    assert result.returncode == 2
    seen = attempts(build_log(tmp_path, "mallory"))
    private = "write /tmp/pyramid-upload-planted"  # its own /tmp, a tmpfs gone with the build
    assert [what for what, got in seen.items() if "GOT" in got] == [private]
    assert len(seen) == len(targets)
    assert not any(path.exists() for path in targets)


def test_a_build_has_no_network(tmp_path):
    league = a_league(tmp_path)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        result = upload(league, "mallory", hostile("connect", f"127.0.0.1:{port}", "1.1.1.1:53"), tmp_path)
        with pytest.raises(BlockingIOError):
            listener.accept()  # no connection ever reached the test's listener
    finally:
        listener.close()
    assert result.returncode == 2
    seen = attempts(build_log(tmp_path, "mallory"))
    assert seen == {f"connect 127.0.0.1:{port}": "ConnectionRefusedError", "connect 1.1.1.1:53": "OSError"}


def test_a_process_forked_by_a_build_does_not_outlive_it(tmp_path):
    league = a_league(tmp_path)
    mark = f"{os.getpid() % 1000}.{abs(hash(str(tmp_path))) % 10**6:06d}"
    result = upload(league, "mallory", hostile("daemon", mark), tmp_path)
    assert result.returncode == 2
    assert attempts(build_log(tmp_path, "mallory")) == {"daemon": f"started sleep {mark}"}
    alive = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if f"sleep\0{mark}".encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                alive.append(pid)
        except OSError:
            continue
    assert alive == []
    folder = tmp_path / "direct"
    folder.mkdir()
    (folder / "hostile.py").write_bytes((ROOT / "tests/bots/hostile_build.py").read_bytes())
    outcome = build(folder, f"python hostile.py daemon {mark}", "mallory", tmp_path / "direct.log")
    assert outcome.status is BuildStatus.FAILED
    assert outcome.leftovers == 0  # the PID namespace took it down with the build, before any sweep


def test_a_build_is_stopped_at_its_time_and_disk_limits(tmp_path):
    folder = tmp_path / "bot"
    folder.mkdir()
    slow = build(folder, "sleep 60", "slow", tmp_path / "slow.log", BuildLimits(seconds=1.0))
    assert slow.status is BuildStatus.TIMED_OUT, slow
    assert slow.seconds < 10
    filling = "python -c \"import os\nfor i in range(64): open(f'f{i}', 'wb').write(os.urandom(1 << 20))\""
    big = build(folder, filling, "big", tmp_path / "big.log", BuildLimits(disk=8 * 1024**2))
    assert big.status is BuildStatus.TOO_BIG, big
    assert big.detail == "the folder grew over the disk limit of 8 MiB"
    link = build(folder, "ln -s /etc/passwd passwd", "link", tmp_path / "link.log")
    assert link.status is BuildStatus.UNSAFE
    assert "symlink out: passwd -> /etc/passwd" in link.detail


def test_a_refused_archive_and_a_machine_without_bubblewrap_are_one_line(tmp_path):
    league = a_league(tmp_path)
    traversal = archive({"pyramid.yaml": "language: python\ncommand: python bot.py\n", "../evil.py": "x"})
    result = upload(league, "mallory", traversal, tmp_path)
    assert result.returncode == 2
    assert (
        result.stderr == "Error: not uploaded: archive: entry '../evil.py': climbs out of the folder (..)\n"
    )
    assert not (tmp_path / "evil.py").exists()
    (tmp_path / "good.zip").write_bytes(good("x"))
    bare = {**os.environ, "PATH": str(tmp_path / "nothing")}
    result = referee("upload", league, "alice", tmp_path / "good.zip", env=bare)
    assert result.returncode == 2
    assert result.stderr == (
        "Error: not uploaded: uploads are refused here: bubblewrap is not installed (Debian: apt-get install "
        "bubblewrap); an upload is built and run in the sandbox only\n"
    )
    assert "alice" not in league.read_text(encoding="utf-8")
    trusted = (
        league.read_text(encoding="utf-8") + "  - {name: builder, command: python bot.py, build: 'true'}\n"
    )
    league.write_text(trusted, encoding="utf-8")
    result = referee("upload", league, "builder", tmp_path / "good.zip")
    assert result.returncode == 2
    assert (
        "'builder' has a build: of the league file, run outside the sandbox; an upload cannot"
        in result.stderr
    )
    league.write_text(league.read_text(encoding="utf-8").replace("sandbox: required", "sandbox: none"))
    result = referee("upload", league, "alice", tmp_path / "good.zip")
    assert result.returncode == 2
    assert result.stderr.endswith(
        "an uploaded bot runs only in the sandbox: write sandbox: required (or auto)\n"
    )
    assert len(result.stderr.splitlines()) == 1
