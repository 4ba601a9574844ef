"""Remote entrants as their authors would run them (issue #26): the real CLI listening with TLS from a CA
and certificate the test makes, the Python and the Node.js SDK as remote bots in separate processes, a
bot that connects late, one that drops mid-match and comes back, one that never comes, tokens refused
and revoked; as root, a bot in a network namespace of its own over a virtual link."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import uuid

import pytest

from support import ROOT
from support.cli import export, referee
from support.net import free_port
from support.remote import issue, league, remote_env, start_bot, start_referee, stop, wait_for
from support.tls import make_certificates

PY = sys.executable
NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None or not (ROOT / "sdk/node/node_modules").is_dir(), reason="needs node")
def test_python_and_node_remote_bots_play_over_tls_one_early_one_late(tmp_path, certs):
    path = league(tmp_path, ["far-py", "far-node"])
    py_token, node_token = issue(path, "far-py"), issue(path, "far-node")
    assert "pyr1_" not in path.read_text()  # no token in the league file
    port = free_port()
    address = f"localhost:{port}"
    # The Python bot starts before the referee listens: it retries with backoff until it can connect.
    early = start_bot(
        [PY, "-m", "sample_bots.heuristic"], remote_env(address, py_token, certs.ca), tmp_path / "py.log"
    )
    run_log = tmp_path / "run.log"
    run = start_referee(
        "run", path, "--listen", f"127.0.0.1:{port}", "--tls-cert", certs.cert, "--tls-key", certs.key,
        log=run_log,
    )  # fmt: skip
    wait_for(run_log, "listening for remote entrants")
    wait_for(tmp_path / "py.log", "referee says: remote connection")
    # The Node.js bot connects late, while matches of the others are under way or waiting for it.
    late = start_bot(
        [NODE, "sample_bots/node/heuristic.js"],
        remote_env(address, node_token, certs.ca),
        tmp_path / "node.log",
    )
    assert stop(run, 300) == 0, run_log.read_text()
    assert stop(early) == 0
    assert stop(late) == 0
    for log in ("py.log", "node.log"):
        text = (tmp_path / log).read_text()
        assert "the league is over" in text, text
    output = run_log.read_text()
    assert "with TLS" in output
    assert "remote (plays from its own machine, not sandboxed): far-py, far-node" in output
    lines = export(path)
    assert len(lines) == 6
    assert all(line["status"] == "complete" for line in lines)
    assert all(line["faults"] == [] for line in lines), [line["faults"] for line in lines]
    for line in lines:
        assert line["remote_entrants"] == [name for name in line["seats"] if name.startswith("far-")]
    report = referee("report", path, "-o", tmp_path / "report")
    assert report.returncode == 0, report.stderr
    index = (tmp_path / "report" / "index.html").read_text()
    assert index.count('class="badge remote"') == 2
    board = referee("leaderboard", path)
    assert "remote: far-node (plays from its own machine, not sandboxed): round trip" in board.stdout
    assert "decisions: median" in board.stdout
    for secret in (py_token.read_text().strip(), node_token.read_text().strip()):
        for produced in (tmp_path / "results-logs").rglob("*"):
            assert not produced.is_file() or secret not in produced.read_text(errors="replace")
        assert secret not in output
        assert secret not in (tmp_path / "results-tokens.json").read_text()


def test_a_remote_bot_that_drops_mid_match_is_faulted_and_plays_on_after_reconnecting(tmp_path):
    path = league(tmp_path, ["dropper"])
    token = issue(path, "dropper")
    port = free_port()
    marker = tmp_path / "dropped"
    env = remote_env(f"127.0.0.1:{port}", token, None)
    # Its author restarts it once it dies, as a supervisor would: the second process plays normally.
    command = [
        "bash",
        "-c",
        f"{PY} tests/bots/remote_drop.py {marker}; exec {PY} tests/bots/remote_drop.py {marker}",
    ]
    bot = start_bot(command, env, tmp_path / "bot.log")
    result = referee("run", path, "--listen", f"127.0.0.1:{port}")
    assert stop(bot) == 0
    assert result.returncode == 0, result.stdout + result.stderr
    assert "in plaintext" in result.stderr
    lines = export(path)
    assert len(lines) == 2
    assert all(line["status"] == "complete" for line in lines)
    kinds = [fault["kind"] for line in lines for fault in line["faults"]]
    assert "disconnect" in kinds, lines
    assert sum(1 for line in lines if line["faults"]) == 1  # the match after the drop was clean
    assert "dropping the connection now" in (tmp_path / "bot.log").read_text()


def test_a_remote_entrant_that_never_connects_leaves_its_matches_unplayed_and_is_named(tmp_path):
    path = league(tmp_path, ["ghost"], local=2, wait="1s")
    issue(path, "ghost")
    result = referee("run", path, "--listen", f"127.0.0.1:{free_port()}")
    assert result.returncode == 3, result.stdout + result.stderr  # unplayed matches
    assert "ghost" in result.stderr
    assert "was not connected" in result.stderr
    lines = export(path)
    assert [line["seats"] for line in lines if "ghost" in line["seats"]] == []  # no invented forfeit
    assert len(lines) == 2  # the two local entrants' table was played


def test_a_run_on_workers_plays_the_remote_seats_here_and_the_rest_on_the_workers(tmp_path):
    """``referee run --listen --workers 2``: the matches with the remote seat are played where the door
    is, in the referee's process, the others on the workers (referee.log names the worker of each);
    the results are byte for byte those of the same league played without workers."""
    exports = []
    for folder, options in (("here", ()), ("workers", ("--workers", "2"))):
        path = league(tmp_path / folder, ["far"], local=2)
        token = issue(path, "far")
        port = free_port()
        bot = start_bot(
            [PY, "-m", "sample_bots.random_bot"],
            remote_env(f"127.0.0.1:{port}", token, None),
            tmp_path / folder / "bot.log",
        )
        run_log = tmp_path / folder / "run.log"
        run = start_referee("run", path, "--listen", f"127.0.0.1:{port}", *options, log=run_log)
        assert stop(run, 300) == 0, run_log.read_text()
        assert stop(bot) == 0
        exports.append(export(path))
    here, on_workers = exports
    assert len(here) == 6
    assert all(line["status"] == "complete" for line in here)
    assert on_workers == here
    output = (tmp_path / "workers" / "run.log").read_text()
    assert "Dask LocalCluster: 2 worker processes" in output
    log = (tmp_path / "workers" / "results-logs" / "referee.log").read_text()
    played_on = re.findall(r"match (\S+): played on worker tcp://", log)
    assert sorted(played_on) == sorted(m["match_id"] for m in here if "far" not in m["seats"])
    assert len(played_on) == 2


def test_the_run_refuses_unsafe_or_impossible_remote_settings_in_one_line(tmp_path, certs):
    path = league(tmp_path, ["far"])
    cases = [
        (("--listen", "0.0.0.0:7443"), "is not a loopback address and has no TLS"),
        ((), "give --listen HOST:PORT"),
        (("--listen", f"127.0.0.1:{free_port()}"), "has no token: referee token issue"),
    ]
    for args, expected in cases:
        result = referee("run", path, *args)
        assert result.returncode != 0, result.stderr
        assert expected in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_wrong_revoked_and_reissued_tokens_are_refused_and_a_new_one_plays(tmp_path):
    path = league(tmp_path, ["far"], wait="90s")
    first = issue(path, "far")
    port = free_port()
    run_log = tmp_path / "run.log"
    run = start_referee("run", path, "--listen", f"127.0.0.1:{port}", log=run_log)
    wait_for(run_log, "listening for remote entrants")
    address = f"127.0.0.1:{port}"
    wrong = tmp_path / "wrong.token"
    wrong.write_text("pyr1_" + "x" * 43)
    revoked = tmp_path / "revoked.token"
    revoked.write_text(first.read_text())
    assert referee("token", "revoke", path, "far").returncode == 0
    second = issue(path, "far")
    assert referee("token", "list", path).stdout.count("token issued") == 1
    for token_file in (wrong, revoked):
        refused = subprocess.run(
            [PY, "-m", "sample_bots.random_bot"], cwd=ROOT, env=remote_env(address, token_file, None),
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert refused.returncode == 1, refused.stderr
        assert "UNAUTHENTICATED: unknown, revoked or expired token" in refused.stderr
    good = start_bot(
        [PY, "-m", "sample_bots.random_bot"], remote_env(address, second, None), tmp_path / "bot.log"
    )
    assert stop(run, 300) == 0, run_log.read_text()
    assert stop(good) == 0
    assert len(export(path)) == 2


NETNS = f"pa_r{uuid.uuid4().hex[:6]}"


def _netns_ready() -> str | None:
    """Why the namespace test cannot run here, or ``None``."""
    if os.geteuid() != 0:
        return "needs root for ip netns (a second 'machine')"
    if shutil.which("ip") is None:
        return "needs iproute2's ip"
    probe = subprocess.run(["ip", "netns", "add", NETNS], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return f"ip netns is refused here: {probe.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", NETNS], capture_output=True, check=False)
    return None


def test_a_remote_bot_in_its_own_network_namespace_plays_over_a_virtual_link(tmp_path):
    why = _netns_ready()
    if why is not None:
        pytest.skip(why)
    host_if, peer_if = f"{NETNS}h", f"{NETNS}p"
    commands = [
        ["ip", "netns", "add", NETNS],
        ["ip", "link", "add", host_if, "type", "veth", "peer", "name", peer_if],
        ["ip", "link", "set", peer_if, "netns", NETNS],
        ["ip", "addr", "add", "10.231.0.1/24", "dev", host_if],
        ["ip", "link", "set", host_if, "up"],
        ["ip", "netns", "exec", NETNS, "ip", "addr", "add", "10.231.0.2/24", "dev", peer_if],
        ["ip", "netns", "exec", NETNS, "ip", "link", "set", peer_if, "up"],
        ["ip", "netns", "exec", NETNS, "ip", "link", "set", "lo", "up"],
    ]
    try:
        for command in commands:
            subprocess.run(command, check=True, capture_output=True, timeout=30)
        certs = make_certificates(tmp_path / "tls", ("127.0.0.1", "10.231.0.1"))
        path = league(tmp_path, ["elsewhere"])
        token = issue(path, "elsewhere")
        port = free_port()
        env = remote_env(f"10.231.0.1:{port}", token, certs.ca)
        bot = start_bot(
            [PY, "-m", "sample_bots.random_bot"], env, tmp_path / "bot.log", ("ip", "netns", "exec", NETNS)
        )
        result = referee(
            "run", path, "--listen", f"10.231.0.1:{port}", "--tls-cert", certs.cert, "--tls-key", certs.key
        )
        assert stop(bot) == 0, (tmp_path / "bot.log").read_text()
        assert result.returncode == 0, result.stdout + result.stderr
        assert len(export(path)) == 2
        assert "the league is over" in (tmp_path / "bot.log").read_text()
    finally:
        subprocess.run(["ip", "link", "del", host_if], capture_output=True, check=False)
        subprocess.run(["ip", "netns", "del", NETNS], capture_output=True, check=False)


def test_referee_check_listens_for_a_remote_bot_and_reports_its_round_trip(tmp_path, certs):
    port = free_port()
    log = tmp_path / "check.log"
    check = start_referee(
        "check", "--listen", f"127.0.0.1:{port}", "--tls-cert", certs.cert, "--tls-key", certs.key, log=log
    )
    wait_for(log, "pyr1_")
    token = next(line for line in log.read_text().splitlines() if line.startswith("pyr1_"))
    token_file = tmp_path / "check.token"
    token_file.write_text(token)
    env = remote_env(f"localhost:{port}", token_file, certs.ca)
    bot = start_bot([PY, "-m", "sample_bots.random_bot"], env, tmp_path / "bot.log")
    assert stop(check, 300) == 0, log.read_text()
    assert stop(bot) == 0
    output = log.read_text()
    assert "4 players     rank" in output
    assert "remote        round trip" in output
    assert "PASS: ready for a league" in output


@pytest.mark.parametrize("sdk", ["python", "node"])
def test_a_remote_bot_waiting_for_its_referee_stops_cleanly_on_ctrl_c(tmp_path, sdk):
    if sdk == "node" and (NODE is None or not (ROOT / "sdk/node/node_modules").is_dir()):
        pytest.skip("needs node and the Node.js SDK's packages (npm ci --prefix sdk/node)")
    token = tmp_path / "t.token"
    token.write_text("pyr1_" + "x" * 43)
    command = (
        [PY, "-m", "sample_bots.random_bot"] if sdk == "python" else [NODE, "sample_bots/node/heuristic.js"]
    )
    log = tmp_path / "bot.log"
    bot = start_bot(command, remote_env(f"127.0.0.1:{free_port()}", token, None), log)
    wait_for(log, "reconnecting in")  # nobody listens: it retries with backoff
    bot.send_signal(signal.SIGINT)
    assert stop(bot) == 0, log.read_text()
    assert "stopped (Ctrl-C)" in log.read_text()
