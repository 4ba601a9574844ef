"""Where uploaded versions live: ``UPLOADS/ENTRANT/VERSION/``, VERSION a hash of the unpacked sources.

Each version folder holds ``bot/`` (the unpacked, built bot: the entrant's ``cwd``), ``build.log`` and,
once it is built and checked, ``upload.json`` (:data:`RECORD`): a folder without it is one this referee
started and never finished, and is made again. The uploads folder and each entrant's folder are
``0711``: a bot of another uid can pass through them to its own version but cannot list the others.

A version is kept until no stored match uses it: :func:`in_use` says which versions the league file and
the results database still name, :func:`removable` which of the others may go, and :func:`prune` deletes
only folders that carry this module's record.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from referee.league.config import Entrant
from referee.league.versions import fingerprint
from referee.match.bots import BotSpec

RECORD: Final = "upload.json"
STARTED: Final = ".started"
"""Written first into a version's folder: it is one of ours, finished (with :data:`RECORD`) or not."""
BOT: Final = "bot"
HASH_DIGITS: Final = 16


@dataclass(frozen=True, slots=True)
class Version:
    entrant: str
    version: str
    folder: Path
    command: tuple[str, ...]

    @property
    def bot(self) -> Path:
        return self.folder / BOT


def tree_hash(folder: Path) -> str:
    """:data:`HASH_DIGITS` hex digits of the folder's file names, executable bits and contents: the same
    sources are the same version, whatever archive brought them."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        name = path.relative_to(folder).as_posix()
        if stat.S_ISDIR(info.st_mode):
            digest.update(f"d\0{name}\0".encode())
            continue
        digest.update(f"f\0{name}\0{info.st_mode & 0o111:o}\0{info.st_size}\0".encode())
        with path.open("rb") as data:
            while chunk := data.read(1 << 16):
                digest.update(chunk)
    return digest.hexdigest()[:HASH_DIGITS]


def entrant_folder(root: Path, entrant: str) -> Path:
    """``root/entrant``, made ``0711`` (passable, not listable) with the root itself."""
    folder = root / entrant
    folder.mkdir(parents=True, exist_ok=True)
    for made in (root, folder):
        made.chmod(0o711)
    return folder


def record(version: Version, language: str, build: str | None) -> None:
    """Marks the version built and checked (written last, renamed into place)."""
    data = {
        "entrant": version.entrant,
        "version": version.version,
        "command": list(version.command),
        "language": language,
        "build": build,
    }
    new = version.folder / (RECORD + ".new")
    new.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(new, version.folder / RECORD)


def versions(root: Path, entrant: str) -> list[Version]:
    """The finished versions of ``entrant`` under ``root`` (those with a readable record)."""
    folder = root / entrant
    found: list[Version] = []
    if not folder.is_dir():
        return found
    for child in sorted(folder.iterdir()):
        try:
            data = json.loads((child / RECORD).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if data.get("entrant") == entrant and data.get("version") == child.name:
            found.append(Version(entrant, child.name, child, tuple(data["command"])))
    return found


def in_use(root: Path, entrant: str, league_cwd: Path | None, stored_fingerprint: str | None) -> set[str]:
    """The versions still needed: the one the league file names (``league_cwd``, the entrant's ``cwd``)
    and the one whose stored matches the results database holds (``stored_fingerprint``, the entrant's
    fingerprint as stored: a version replaced in the league file keeps its matches until the next run
    replays them)."""
    keep = set()
    for version in versions(root, entrant):
        if league_cwd is not None and league_cwd.resolve() == version.bot.resolve():
            keep.add(version.version)
        if stored_fingerprint:
            spec = BotSpec.parse(shlex.join(version.command), name=entrant, cwd=version.bot.resolve())
            if fingerprint(Entrant(entrant, spec)) == stored_fingerprint:
                keep.add(version.version)
    return keep


def removable(root: Path, entrant: str, keep: Iterable[str]) -> list[Version]:
    """The finished versions of ``entrant`` that no one needs: all but those in ``keep``."""
    needed = set(keep)
    return [version for version in versions(root, entrant) if version.version not in needed]


def unfinished(root: Path, entrant: str) -> list[Path]:
    """Version folders of ``entrant`` this referee started but never finished (a refused build or check,
    an upload cut short): they carry :data:`STARTED` and no :data:`RECORD`."""
    folder = root / entrant
    if not folder.is_dir():
        return []
    return [
        child
        for child in sorted(folder.iterdir())
        if (child / STARTED).is_file() and not (child / RECORD).exists() and not child.name.startswith(".")
    ]


def prune(root: Path, entrant: str, keep: Iterable[str]) -> list[Version]:
    """Deletes :func:`removable` versions and :func:`unfinished` ones (only folders this module made:
    they carry its marks); returns the finished versions deleted."""
    gone = removable(root, entrant, keep)
    for version in gone:
        shutil.rmtree(version.folder)
    for folder in unfinished(root, entrant):
        shutil.rmtree(folder, ignore_errors=True)
    return gone
