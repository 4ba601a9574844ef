"""The Python examples in the README and docs run as written."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from support import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


BOT_COMMAND = re.compile(r"""["'](python|node) """)
"""A bot given as a command line, which an example plays as a process: such an example is a slow test."""


def examples():
    for path in DOCS:
        for number, code in enumerate(BLOCK.findall(path.read_text(encoding="utf-8")), start=1):
            marks = pytest.mark.slow if BOT_COMMAND.search(code) else ()
            yield pytest.param(code, id=f"{path.name}#{number}", marks=marks)


@pytest.mark.parametrize("code", list(examples()))
def test_example_runs(code):
    exec(compile(code, "<doc example>", "exec"), {"__name__": "doc_example"})


@pytest.mark.slow
def test_the_writing_a_bot_example_plays_a_match_through_the_cli(tmp_path):
    text = (ROOT / "docs/WRITING_A_BOT.md").read_text(encoding="utf-8")
    code = re.search(r"```python bot\n(.*?)```", text, re.DOTALL).group(1)
    assert len(code.strip().splitlines()) <= 25
    bot = tmp_path / "my_bot.py"
    bot.write_text(code, encoding="utf-8")
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "referee"),
            "match",
            f"python {bot}",
            "sample_bots.random_bot:RandomBot",
            "--seed",
            "3",
            "--logs",
            str(tmp_path / "logs"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "fault" not in result.stdout
    assert "seats: 0=mybot, 1=random\n" in result.stdout  # the names the bots give themselves
    assert "deal 32" in result.stdout
