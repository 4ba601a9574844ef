"""The manifest an uploaded archive carries at its top: which language, how the bot starts, how it builds.

``pyramid.yaml`` (:data:`MANIFEST_NAME`), read as the league file is: ruamel's safe loader → defaults →
pydantic in strict mode → a frozen :class:`Manifest`, and every problem one line naming the key::

    language: python          # python | node: the arena's own interpreter runs it
    command: python bot.py    # how the bot starts, from the archive's top folder
    build: python make.py     # optional: run once, inside the sandbox, with no network
"""

from __future__ import annotations

import enum
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from referee.match.bots import interpreter_family
from referee.uploads.errors import UploadError

MANIFEST_NAME: Final = "pyramid.yaml"
MANIFEST_LIMIT: Final = 16 * 1024
"""Bytes a manifest may have: it is a few lines."""


class Language(enum.StrEnum):
    PYTHON = "python"
    NODE = "node"


class _Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    language: Literal["python", "node"]
    command: str = Field(min_length=1, max_length=1000)
    build: str | None = Field(None, min_length=1, max_length=1000)


@dataclass(frozen=True, slots=True)
class Manifest:
    language: Language
    command: tuple[str, ...]
    build: str | None = None


def read_manifest(folder: Path) -> Manifest:
    """The manifest at the top of an unpacked upload, validated; :class:`UploadError` otherwise."""
    path = folder / MANIFEST_NAME
    if not path.is_file() or path.is_symlink():
        raise UploadError(f"{MANIFEST_NAME}: not at the archive's top (docs/LEAGUE.md, 'Uploading a bot')")
    if path.stat().st_size > MANIFEST_LIMIT:
        raise UploadError(f"{MANIFEST_NAME}: over {MANIFEST_LIMIT} bytes; a manifest is a few lines")
    return parse_manifest(path.read_text(encoding="utf-8", errors="replace"))


def parse_manifest(text: str) -> Manifest:
    """A manifest from its text.

    >>> parse_manifest("language: python\\ncommand: python bot.py\\n")
    Manifest(language=<Language.PYTHON: 'python'>, command=('python', 'bot.py'), build=None)
    >>> parse_manifest("language: rust\\ncommand: ./bot\\n")
    Traceback (most recent call last):
    ...
    referee.uploads.errors.UploadError: pyramid.yaml: language: expected one of 'python' or 'node', got 'rust'
    """
    try:
        data: Any = YAML(typ="safe", pure=True).load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise UploadError(f"{MANIFEST_NAME}{line}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, dict):
        raise UploadError(f"{MANIFEST_NAME}: a mapping of language:, command: and optional build:")
    try:
        raw = _Manifest.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(part) for part in error["loc"]) or "file"
        raise UploadError(f"{MANIFEST_NAME}: {key}: {_message(error)}") from None
    try:
        command = tuple(shlex.split(raw.command))
    except ValueError as exc:
        raise UploadError(f"{MANIFEST_NAME}: command: {exc}") from None
    language = Language(raw.language)
    if not command or interpreter_family(command[0]) != language.value:
        want = "python (or python3)" if language is Language.PYTHON else "node"
        raise UploadError(
            f"{MANIFEST_NAME}: command: a {language} bot's command starts with {want}, got {raw.command!r}"
        )
    return Manifest(language, command, raw.build)


def _message(error: Any) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown key (the keys are language, command and build)"
    if kind == "missing":
        return "required key is missing"
    if kind == "literal_error":
        return f"expected one of 'python' or 'node', got {error['input']!r}"
    return f"{error['msg']}, got {error['input']!r}"
