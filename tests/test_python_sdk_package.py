"""The Python SDK as its own distribution (sdk/python/pyproject.toml): a wheel built from a copy of
sdk/python alone installs into a fresh virtual environment outside the repository without the referee or
its dependencies, and a bot written there plays a match against the real referee (`referee match`)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from support import ROOT
from support.cli import REFEREE

SDK = ROOT / "sdk/python"


def run(*args: str | Path, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(arg) for arg in args], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.mark.quick
def test_the_sdk_needs_only_what_the_arena_needs_of_it():
    sdk = tomllib.loads((SDK / "pyproject.toml").read_text())["project"]
    arena = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert sdk["dependencies"] == ["grpcio>=1.85.1", "protobuf>=7.35.1"]
    assert set(sdk["dependencies"]) <= set(arena["dependencies"])  # the same pins as the referee's
    assert sdk["optional-dependencies"]["pettingzoo"] == arena["optional-dependencies"]["pettingzoo"]
    assert sdk["version"] == arena["version"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built from a copy of sdk/python alone: the distribution needs nothing else of the repository."""
    source = tmp_path_factory.mktemp("sdk-source") / "python"
    shutil.copytree(SDK, source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    out = tmp_path_factory.mktemp("wheels")
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", source, "-w", out)
    (built,) = out.glob("pyramid_arena_sdk-*.whl")
    return built


def test_the_wheel_holds_the_sdk_and_nothing_of_the_referee(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = next(archive.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
    packages = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert packages == {"pyramid_sdk"}
    modules = {Path(name).name for name in names}
    assert {
        "bot.py",
        "client.py",
        "engine.py",
        "pyramid_pb2.py",
        "pyramid_pb2_grpc.py",
        "py.typed",
    } <= modules
    assert "my_bot" in metadata  # the README, with its complete bot, is the long description
    requires = sorted(line for line in metadata.splitlines() if line.startswith("Requires-Dist:"))
    assert [line for line in requires if "extra ==" not in line] == [
        "Requires-Dist: grpcio>=1.85.1",
        "Requires-Dist: protobuf>=7.35.1",
    ]


def test_a_bot_in_a_fresh_venv_with_the_sdk_alone_plays_a_match(wheel: Path, tmp_path: Path):
    project = tmp_path / "my-bot"
    project.mkdir()
    venv = project / "venv"
    run(sys.executable, "-m", "venv", venv)
    python = venv / "bin/python"
    run(
        python, "-m", "pip", "install", "--quiet", wheel, timeout=900
    )  # grpcio and protobuf from the registry
    installed = run(python, "-m", "pip", "list", "--format=freeze").stdout
    names = {line.split("==")[0].lower() for line in installed.splitlines()}
    assert "pyramid-arena-sdk" in names
    assert not names & {"pyramid-arena", "click", "trueskill", "jinja2", "pydantic", "rich", "ruamel.yaml"}
    probe = (
        "import importlib.util, pyramid_sdk; print(pyramid_sdk.__file__, importlib.util.find_spec('referee'))"
    )
    where, referee_spec = run(python, "-c", probe, cwd=project).stdout.split()
    assert where.startswith(str(venv))
    assert referee_spec == "None"
    # The README's complete bot, as its author would copy it.
    readme = (SDK / "README.md").read_text(encoding="utf-8")
    code = re.search(r"```python bot\n(.*?)```", readme, re.DOTALL)
    assert code is not None
    (project / "my_bot.py").write_text(code.group(1), encoding="utf-8")
    run("chmod", "-R", "o+rX", tmp_path)  # a sandboxed bot runs as a uid of its own
    logs = tmp_path / "logs"
    result = run(
        REFEREE, "match", "venv/bin/python my_bot.py", "sample_bots.heuristic:HeuristicBot", "--seed", "8",
        "--logs", logs, cwd=project, timeout=300,
    )  # fmt: skip
    assert "deal 32" in result.stdout
    assert "fault" not in result.stdout
    assert re.search(r"^\d\. mybot ", result.stdout, re.M)  # the name the bot gives itself
    log = (logs / "my_bot.log").read_text()
    assert "faults 0" in log
    assert f"sdk {venv}" in log  # the bot process imported the SDK from its own venv
