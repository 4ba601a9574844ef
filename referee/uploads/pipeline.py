"""The whole upload: archive → unpacked folder → manifest → sandboxed build → check → league entrant.

One function, :func:`upload`, that ``referee upload`` calls and ``referee serve`` can call for an
author's upload: every refusal is one :class:`UploadError` line, and the league file is written only once
the bot has been built and has passed the check, by the same safe, comment-keeping write as
``referee submit`` (:func:`referee.league.config.add_entrant`).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from referee.check import check_bot
from referee.league.config import League, LeagueError, add_entrant, load_league
from referee.match.launcher import Confinement
from referee.match.sandbox import NODE_SDK, SandboxMode, python_paths
from referee.results.connection import connected
from referee.results.errors import StoreError
from referee.uploads.archive import Caps, unpack
from referee.uploads.build import BuildLimits, build, require_sandbox, seal
from referee.uploads.errors import UploadError
from referee.uploads.manifest import Language, Manifest, read_manifest
from referee.uploads.versions import (
    BOT,
    STARTED,
    Version,
    entrant_folder,
    in_use,
    prune,
    record,
    tree_hash,
    versions,
)

BUILD_LOG: Final = "build.log"
INCOMING: Final = ".incoming-"
SDK_PACKAGE: Final = "pyramid-arena-sdk"
DEFAULT_CAPS: Final = Caps()
DEFAULT_LIMITS: Final = BuildLimits()


@dataclass(frozen=True, slots=True)
class Uploaded:
    version: Version
    manifest: Manifest
    reused: bool
    """The same sources were uploaded, built and checked before: nothing was built again."""
    check: list[str] = field(default_factory=list)
    """The check's report, line by line."""
    pruned: tuple[Version, ...] = ()


def default_root(league: League) -> Path:
    """The uploads of a league kept beside its folder, never inside it: ``<league folder>-uploads``."""
    folder = league.path.parent
    return folder.parent / f"{folder.name}-uploads"


def upload(
    league_path: Path,
    entrant: str,
    archive: bytes | Path,
    root: Path | None = None,
    caps: Caps = DEFAULT_CAPS,
    limits: BuildLimits = DEFAULT_LIMITS,
) -> Uploaded:
    """Unpacks, builds (in the sandbox), checks and enters ``archive`` as the entrant ``entrant`` of the
    league at ``league_path``, a new version if it was one already; deletes the versions no stored match
    uses any more. Raises :class:`UploadError` (one line) on any refusal, the league file untouched."""
    require_sandbox()
    try:
        league = load_league(league_path, check_commands=False)
    except LeagueError as exc:
        raise UploadError(str(exc)) from None
    if league.sandbox is SandboxMode.NONE:
        raise UploadError(
            f"{league.path}: sandbox: none runs bots as plain processes, and an uploaded bot runs only in "
            "the sandbox: write sandbox: required (or auto)"
        )
    root = (root or default_root(league)).resolve()
    league_folder = league.path.parent
    if root == league_folder or league_folder in root.parents or root in league_folder.parents:
        raise UploadError(
            f"{root}: the uploads folder must lie outside the league's folder {league_folder} and not hold "
            "it (docs/SECURITY.md, 'Uploaded bots')"
        )
    existing = next((e for e in league.entrants if e.name == entrant), None)
    if existing is not None and existing.in_process:
        raise UploadError(f"{league.path}: {entrant!r} is an in-process entrant; an upload cannot replace it")
    if existing is not None and (existing.build is not None or existing.spec.remote):
        # Its build: would stay, and run as the organiser's trusted step in the uploaded folder.
        what = "has a build: of the league file, run outside the sandbox" if existing.build else "is remote"
        raise UploadError(
            f"{league.path}: {entrant!r} {what}; an upload cannot replace it: choose another name"
        )
    home = entrant_folder(root, entrant)
    incoming = home / f"{INCOMING}{secrets.token_hex(4)}"
    try:
        incoming.mkdir()
        (incoming / STARTED).write_text(f"{entrant}\n", encoding="utf-8")
        unpack(archive, incoming / BOT, caps)
        manifest = read_manifest(incoming / BOT)
        version = tree_hash(incoming / BOT)
        folder = home / version
        done = Version(entrant, version, folder, manifest.command)
        reused = (folder / "upload.json").is_file()
        if not reused:
            if folder.exists():  # a version this referee started and never finished
                shutil.rmtree(folder)
            os.replace(incoming, folder)
    finally:
        shutil.rmtree(incoming, ignore_errors=True)
    lines: list[str] = []
    if not reused:
        lines = _build_and_check(done, manifest, limits)
        record(done, manifest.language.value, manifest.build)
    try:
        add_entrant(league.path, entrant, manifest.command, done.bot, replace_existing=existing is not None)
    except LeagueError as exc:
        raise UploadError(f"not entered: {exc}") from None
    stored = _stored_fingerprint(league, entrant)
    if stored == "?":  # the database cannot be read now: keep every version rather than guess
        keep = {known.version for known in versions(root, entrant)}
    else:
        keep = in_use(root, entrant, done.bot, stored)
    return Uploaded(done, manifest, reused, lines, tuple(prune(root, entrant, keep)))


def _build_and_check(version: Version, manifest: Manifest, limits: BuildLimits) -> list[str]:
    """The build in the sandbox, then the check in the sandbox; the report's lines, or UploadError."""
    log = version.folder / BUILD_LOG
    if manifest.language is Language.NODE:
        _add_node_sdk(version.bot)
    if manifest.build is not None:
        outcome = build(version.bot, manifest.build, version.entrant, log, limits)
        if not outcome.ok:
            raise UploadError(f"build {manifest.build!r} {outcome.status}: {outcome.detail}{_tail(log)}")
    else:
        seal(version.bot)
    report = asyncio.run(
        check_bot(manifest.command, version.bot.resolve(), confinement=Confinement(SandboxMode.REQUIRED))
    )
    if not report.clean:
        why = report.error or (report.faults[0].detail if report.faults else "it did not finish the check")
        raise UploadError(f"check failed: {why}")
    return report.lines()


def node_sdk() -> Path | None:
    """The arena's Node.js SDK with its packages (a checkout's ``sdk/node`` after ``npm ci``), or ``None``."""
    for path in python_paths():
        if path.parts[-len(NODE_SDK.parts) :] == NODE_SDK.parts and (path / "node_modules").is_dir():
            return path
    return None


def _add_node_sdk(bot: Path) -> None:
    """Copies the arena's Node.js SDK into a Node.js upload's ``node_modules/pyramid-arena-sdk`` (unless
    the archive brings its own), so that ``require("pyramid-arena-sdk")`` works as ``import pyramid_sdk``
    does for Python: a copy, not a link, since a link would point outside the bot's folder."""
    target = bot / "node_modules" / SDK_PACKAGE
    if target.exists():
        return
    source = node_sdk()
    if source is None:
        raise UploadError(
            "a Node.js upload needs the arena's Node.js SDK with its packages (npm ci --prefix sdk/node in "
            "the referee's checkout), and this referee has none; or bring node_modules in the archive"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns("test"))


def _tail(log: Path) -> str:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return f"; its last output: {lines[-1][:200]!r}" if lines else ""


def _stored_fingerprint(league: League, entrant: str) -> str | None:
    """The entrant's fingerprint as the results database stores it (its stored matches' version)."""
    if not league.database.is_file():
        return None
    try:
        with connected(league.database, write=False) as db:
            row = db.execute("SELECT fingerprint FROM entrants WHERE name = ?", (entrant,)).fetchone()
    except (StoreError, sqlite3.Error):
        return "?"
    return str(row[0]) if row and row[0] else None
