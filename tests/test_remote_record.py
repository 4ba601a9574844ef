"""The record of remote connections (``<database>-remote.json``, issue #32 item 5): bounded whatever the
league's length, read in its older format, written within a second of a change, and never "never
connected" for an entrant that played."""

from __future__ import annotations

import asyncio
import json

from referee.remote.files import record_path
from referee.remote.record import KEEP, WRITE_EVERY, Latency, RecordFile, load, remote_lines, save


def test_the_record_keeps_the_latest_decisions_and_counts_them_all(tmp_path):
    latency = Latency()
    latency.add_decisions([0.5])
    latency.add_decisions([0.01] * (KEEP + 10))
    assert len(latency.decisions) == KEEP
    assert latency.count == KEEP + 11
    assert latency.slowest == 0.5  # of every decision, not of those kept
    path = tmp_path / "league-remote.json"
    save(path, {"far": latency})
    again = load(path)["far"]
    assert (again.count, again.slowest, len(again.decisions)) == (KEEP + 11, 0.5, KEEP)
    assert again.line().startswith(f"round trip 0.0 ms, allowance 0.0 ms; {KEEP + 11} decisions: median 10.0")


def test_a_record_of_the_first_format_is_read(tmp_path):
    path = tmp_path / "league-remote.json"
    entrant = {"round_trips_ms": [12.0], "decisions_ms": [20.0, 30.0], "allowance_ms": 12.0}
    path.write_text(json.dumps({"format": 1, "entrants": {"far": entrant}}))
    assert (
        load(path)["far"].line()
        == "round trip 12.0 ms, allowance 12.0 ms; 2 decisions: median 25.0 ms, max 30.0 ms"
    )


def test_changes_are_written_within_a_second_and_a_burst_costs_one_write(tmp_path):
    path = tmp_path / "league-remote.json"

    async def main() -> int:
        record = RecordFile(path)
        writes = 0
        original = record.write

        def counted() -> None:
            nonlocal writes
            writes += 1
            original()

        record.write = counted  # type: ignore[method-assign]
        for n in range(50):
            record.seen.setdefault("far", Latency()).add_decisions([n / 1000])
            record.changed()
        await asyncio.sleep(WRITE_EVERY / 4)
        first = load(path)["far"].count
        assert first == 50
        record.seen["far"].add_decisions([0.1])
        record.changed()
        await asyncio.sleep(WRITE_EVERY / 4)
        assert load(path)["far"].count == 50  # the second write waits out the first one's second
        await asyncio.sleep(WRITE_EVERY)
        assert load(path)["far"].count == 51
        return writes

    assert asyncio.run(main()) == 2


def test_an_entrant_that_played_is_never_said_to_have_never_connected(tmp_path):
    database = tmp_path / "league.sqlite"
    assert record_path(database).exists() is False
    lines = remote_lines(["far", "ghost"], database, played={"far": 3})
    assert lines == [
        "remote: far (plays from its own machine, not sandboxed): 3 matches stored; no latency record "
        "(league-remote.json)",
        "remote: ghost (plays from its own machine, not sandboxed): never connected",
    ]
