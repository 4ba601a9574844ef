"""Bot specs and bot logs."""

import asyncio
import sys

import pytest

from referee.match.bots import BotSpec, BotSpecError
from referee.match.launcher import _keep_log
from referee.match.output import Tail
from referee.match.setup import open_table


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
    tail = Tail(limit=2048)

    async def feed() -> None:
        stream = asyncio.StreamReader()
        copying = asyncio.create_task(_keep_log(stream, log, tail, limit=10_000))
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
    kept = tail.text().splitlines()  # and its end is in memory, to explain a failed start
    assert kept[-1] == "line 0299 " + "x" * 90
    assert 2048 // 101 - 1 <= len(kept) <= 2048 // 101 + 1
    assert all(line.startswith("line ") and line.endswith("x" * 90) for line in kept)  # whole lines only


def test_a_bot_is_named_after_its_script_module_or_program():
    assert BotSpec.parse("python bots/alpha.py --level 3").name == "alpha"
    assert BotSpec.parse("python -m bots.alpha").name == "alpha"
    assert BotSpec.parse("./alpha").name == "alpha"
    assert BotSpec.parse("node sample_bots/node/heuristic.js").name == "heuristic"
    assert BotSpec.parse("java -jar build/bot.jar --fast").name == "bot"
    assert BotSpec.parse("sleep 100").name == "sleep"


def test_an_in_process_bot_that_cannot_be_made_is_a_one_line_error(tmp_path):
    (tmp_path / "needs_level.py").write_text(
        "from pyramid_sdk import Bot\n\nclass B(Bot):\n    def __init__(self, level):\n        pass\n"
    )
    (tmp_path / "runs_itself.py").write_text("raise SystemExit('no referee address')\n")
    with pytest.raises(BotSpecError, match=r"B\(\) failed: TypeError: .*'level'"):
        BotSpec.parse("needs_level:B", cwd=tmp_path).load()
    with pytest.raises(BotSpecError, match="cannot import runs_itself: SystemExit: no referee address"):
        BotSpec.parse("runs_itself:C", cwd=tmp_path).load()


@pytest.mark.slow
def test_a_bot_that_dies_before_connecting_is_reported_with_its_last_words(tmp_path):
    script = tmp_path / "dies.py"
    script.write_text("print('loading weights')\nraise SystemExit('weights.bin: no such file')\n")

    async def start() -> None:
        async with open_table([BotSpec.parse(f"{sys.executable} {script}")]):
            pass

    with pytest.raises(BotSpecError) as error:
        asyncio.run(start())
    assert str(error.value) == (
        "bot 'dies' exited with code 1 before connecting; its last output: "
        "'loading weights | weights.bin: no such file'"
    )


def test_loading_an_in_process_bot_leaves_sys_path_as_it_was(tmp_path):
    (tmp_path / "scoped_bot.py").write_text(
        "from pyramid_sdk import Bot\n\nclass B(Bot):\n    pass\n", encoding="utf-8"
    )
    before = list(sys.path)
    assert BotSpec.parse("scoped_bot:B", cwd=tmp_path).load()
    assert sys.path == before
