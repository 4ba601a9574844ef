"""The Python examples in the README and docs run as written."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def examples():
    for path in DOCS:
        for number, code in enumerate(BLOCK.findall(path.read_text(encoding="utf-8")), start=1):
            yield pytest.param(code, id=f"{path.name}#{number}")


@pytest.mark.parametrize("code", list(examples()))
def test_example_runs(code):
    exec(compile(code, "<doc example>", "exec"), {"__name__": "doc_example"})
