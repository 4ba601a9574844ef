"""The Node.js SDK as a package: `npm pack` makes a tarball that carries the .proto and the type
declarations, and a bot written in a project outside the repository, against the installed tarball, plays a
match through the real `referee match` command."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from support import ROOT
from support.cli import REFEREE

NODE_SDK = ROOT / "sdk/node"

pytestmark = pytest.mark.skipif(
    not os.environ.get("CI") and (shutil.which("npm") is None or not (NODE_SDK / "node_modules").is_dir()),
    reason="Node.js, npm or sdk/node/node_modules missing: run `npm ci --prefix sdk/node` (the README does)",
)


@pytest.mark.quick
def test_the_package_carries_the_same_proto_as_the_repository():
    copy = NODE_SDK / "proto/pyramid/v1/pyramid.proto"
    assert copy.read_bytes() == (ROOT / "proto/pyramid/v1/pyramid.proto").read_bytes(), (
        "sdk/node's copy of pyramid.proto is stale: run proto/generate.sh"
    )


@pytest.fixture(scope="module")
def tarball(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pack")
    result = subprocess.run(
        ["npm", "pack", "--json", "--pack-destination", str(out)],
        cwd=NODE_SDK,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    (packed,) = json.loads(result.stdout)
    return out / packed["filename"]


def test_the_tarball_holds_the_sdk_its_proto_declarations_and_readme(tarball: Path):
    with tarfile.open(tarball) as archive:
        names = set(archive.getnames())
    assert {
        "package/index.js",
        "package/index.d.ts",
        "package/proto/pyramid/v1/pyramid.proto",
        "package/README.md",
        "package/package.json",
    } <= names
    assert not [name for name in names if "/test/" in name or "node_modules" in name]


def test_a_bot_in_its_own_project_plays_a_match_with_the_installed_tarball(tarball: Path, tmp_path: Path):
    project = tmp_path / "my-bot"
    project.mkdir()
    (project / "package.json").write_text(json.dumps({"name": "my-bot", "version": "1.0.0", "private": True}))
    installed = subprocess.run(
        ["npm", "install", "--prefer-offline", "--no-audit", "--no-fund", str(tarball)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    package = project / "node_modules/pyramid-arena-sdk"
    assert not package.is_symlink()  # a copy from the tarball, not a link into the repository
    assert (package / "proto/pyramid/v1/pyramid.proto").is_file()
    # The README's complete bot, as a bot author would copy it.
    readme = (NODE_SDK / "README.md").read_text(encoding="utf-8")
    code = re.search(r"```js bot\n(.*?)```", readme, re.DOTALL)
    assert code is not None
    assert 'require("pyramid-arena-sdk")' in code.group(1)
    (project / "my_bot.js").write_text(code.group(1), encoding="utf-8")
    for path in (tmp_path, project, *project.rglob("*")):
        path.chmod(path.stat().st_mode | 0o005 | (0o001 if path.is_dir() else 0))  # o+rX
    logs = tmp_path / "logs"
    result = subprocess.run(
        [
            REFEREE,
            "match",
            "node my_bot.js",
            "sample_bots.heuristic:HeuristicBot",
            "--seed",
            "5",
            "--logs",
            str(logs),
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "deal 32" in result.stdout
    assert "fault" not in result.stdout
    assert re.search(r"^\d\. mybot-js ", result.stdout, re.M)  # the name the bot gives itself
    log = (logs / "my_bot.log").read_text()
    assert "seat 0 of 2" in log
    assert re.search(r"totals \d+,\d+, ranks [12],[12], faults 0", log)
