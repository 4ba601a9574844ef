"""Bot specs and bot logs."""

import asyncio

import pytest

from referee.launcher import BotSpec, BotSpecError, _keep_log


def test_bot_specs_parse_commands_and_modules(tmp_path):
    assert BotSpec.parse("python bots/my_bot.py --fast").command == ("python", "bots/my_bot.py", "--fast")
    assert BotSpec.parse("python bots/my_bot.py").name == "my_bot"
    spec = BotSpec.parse("sample_bots.heuristic:HeuristicBot")
    assert spec.module == "sample_bots.heuristic:HeuristicBot"
    assert spec.load().act  # a Bot instance
    with pytest.raises(BotSpecError, match="cannot import"):
        BotSpec.parse("no_such_package.mod:Bot").load()
    with pytest.raises(BotSpecError, match="no Bot subclass"):
        BotSpec.parse("sample_bots.heuristic:power").load()
    with pytest.raises(BotSpecError, match="not found on PATH"):
        BotSpec.parse("no-such-program-here").check()
    with pytest.raises(BotSpecError, match=r"no program './missing\.sh'"):
        BotSpec.parse("./missing.sh", cwd=tmp_path).check()
    with pytest.raises(BotSpecError, match="empty bot"):
        BotSpec.parse("  ")


def test_a_chatty_bot_log_rotates_and_keeps_the_latest_output(tmp_path):
    log = tmp_path / "bot.log"

    async def feed() -> None:
        stream = asyncio.StreamReader()
        copying = asyncio.create_task(_keep_log(stream, log, limit=10_000))
        for number in range(300):
            stream.feed_data(f"line {number:04d} ".encode() + b"x" * 90 + b"\n")
            await asyncio.sleep(0)  # the bot writes line by line
        stream.feed_eof()
        await copying

    asyncio.run(feed())
    older = tmp_path / "bot.log.1"
    assert older.exists()
    assert log.stat().st_size <= 10_000 + 65536
    assert older.stat().st_size <= 10_000 + 65536
    assert b"line 0299" in log.read_bytes()  # the newest output is always kept
