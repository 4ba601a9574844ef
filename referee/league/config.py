"""League files: YAML → defaults → validation → a typed, frozen :class:`League`.

ruamel.yaml reads the file because it keeps every key's line (so an error can say ``league.yaml:14``)
and, for ``referee submit``, writes it back with its comments. pydantic checks shapes and types with
exact key paths; the few rules pydantic cannot know (does the bot's program exist? enough entrants for a
table?) are checked after it. Every problem becomes one :class:`LeagueError` line.
"""

from __future__ import annotations

import io
import math
import os
import re
import shlex
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import YAMLError

from pyramid_sdk.bot import TimeControl
from pyramid_sdk.rules import Rules, RulesError
from referee.league.location import MadeBy, default_database
from referee.league.modes import (
    Design,
    Format,
    RatingMode,
    Seating,
    Settling,
    Until,
    first_batch_tables,
    most_tables,
    seatings,
)
from referee.match.bots import BotSpec, BotSpecError
from referee.match.faults import MAX_FAULTS
from referee.match.sandbox import Limits, SandboxMode, parse_size
from referee.remote.files import locked_folder
from referee.remote.settings import MAX_MATCHES, MAX_MATCHES_LIMIT, WAIT, RemoteSettings


class LeagueError(ValueError):
    """A league file that cannot be used. The message is one line: where, which key, what to do."""


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$")


def parse_duration(value: object) -> float:
    """Seconds from ``1s``, ``500ms``, ``2m`` or a plain number of seconds.

    >>> parse_duration("500ms"), parse_duration("20s"), parse_duration(1.5)
    (0.5, 20.0, 1.5)
    """
    if isinstance(value, bool):
        raise ValueError("expected a duration like 1s or 500ms")
    if isinstance(value, int | float):
        return float(value)
    match = _DURATION.match(str(value))
    if not match:
        raise ValueError(f"expected a duration like 1s or 500ms, got {value!r}")
    number, unit = float(match.group(1)), match.group(2) or "s"
    return number * {"ms": 0.001, "s": 1.0, "m": 60.0}[unit]


Duration = Annotated[float, BeforeValidator(parse_duration), Field(gt=0, le=3600)]
Size = Annotated[int, BeforeValidator(parse_size), Field(ge=1024**2, le=1024**4)]
Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9][\w.+-]{0,63}$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class _Schedule(_Strict):
    format: Literal["round-robin", "sampled", "gauntlet"] = "round-robin"
    tables_per_entrant: int | None = Field(None, ge=1, le=100_000)
    challengers: list[Name] | None = Field(None, min_length=1)
    tables_per_challenger: int | None = Field(None, ge=1, le=100_000)
    rounds: int = Field(1, ge=1, le=1000)
    seating: Literal["single", "cyclic", "balanced", "all"] = "balanced"
    rotate_seats: bool | None = None
    """Replaced by ``seating``; kept only to say so (see :func:`load_league`)."""
    until: Literal["complete", "settled"] = "complete"
    max_matches: int | None = Field(None, ge=1, le=10_000_000)
    batch_tables: int | None = Field(None, ge=1, le=10_000)
    confidence: float | None = Field(None, gt=0.5, lt=1)
    margin: float | None = Field(None, ge=0, le=50)


class _TimeControl(_Strict):
    model_config = ConfigDict(extra="forbid", frozen=True)
    per_action: Duration = 1.0
    bank: Annotated[float, BeforeValidator(parse_duration), Field(ge=0, le=36000)] = 20.0


class _Faults(_Strict):
    max: int = Field(MAX_FAULTS, ge=1, le=1000)


_DEFAULT_LIMITS = Limits()


class _Limits(_Strict):
    model_config = ConfigDict(extra="forbid", frozen=True)
    memory: Size = _DEFAULT_LIMITS.memory
    processes: int = Field(_DEFAULT_LIMITS.processes, ge=16, le=100_000)
    open_files: int = Field(_DEFAULT_LIMITS.open_files, ge=32, le=1_000_000)
    file_size: Size = _DEFAULT_LIMITS.file_size
    tmp: Size = _DEFAULT_LIMITS.tmp


class _Entrant(_Strict):
    name: Name
    command: str | None = None
    module: str | None = None
    remote: bool = False
    cwd: str = "."
    build: str | None = None
    paths: list[str] = []
    version: str | None = Field(None, min_length=1, max_length=200)


class _Remote(_Strict):
    listen: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    wait: Duration = WAIT
    max_matches: int = Field(MAX_MATCHES, ge=1, le=MAX_MATCHES_LIMIT)


class _League(_Strict):
    name: str = Field(min_length=1, max_length=200)
    seed: int | None = Field(None, ge=0, lt=2**63)
    players: int = Field(4, ge=2, le=4)
    schedule: _Schedule = Field(default_factory=_Schedule)
    rules: dict[str, Any] = {}
    time_control: _TimeControl = Field(default_factory=_TimeControl)
    faults: _Faults = Field(default_factory=_Faults)
    rating: Literal["duplicate", "match"] = "duplicate"
    concurrency: int = Field(1, ge=1, le=64)
    workers: int | None = Field(None, ge=1, le=1024)
    dask: str | None = Field(None, pattern=r"^(tcp|tls|ucx|inproc)://\S+$")
    database: str | None = None
    sandbox: Literal["auto", "required", "none"] = "auto"
    limits: _Limits = Field(default_factory=_Limits)
    remote: _Remote = Field(default_factory=_Remote)
    entrants: list[_Entrant] = Field(min_length=1)


@dataclass(frozen=True, slots=True)
class Entrant:
    name: str
    spec: BotSpec
    build: str | None = None
    version: str | None = None
    """The league file's ``version:`` of the entrant: part of its fingerprint (``versions.py``)."""

    @property
    def in_process(self) -> bool:
        return bool(self.spec.module)


@dataclass(frozen=True, slots=True)
class League:
    """A validated league file; paths are absolute."""

    path: Path
    name: str
    seed: int | None
    """The file's ``seed:``; ``None``: a secret seed, drawn and kept by the results database
    (``Competition.open``) and never written into this value (``referee.results.reading.known_seed``)."""
    rules: Rules
    rounds: int
    seating: Seating
    rating: RatingMode
    time_control: TimeControl
    max_faults: int
    concurrency: int
    database: Path
    """The results database: ``database:``, else ``<league file's stem>.sqlite`` beside the league file
    (or a ``results.sqlite`` this league made before that default: ``location.default_database``)."""
    entrants: tuple[Entrant, ...]
    sandbox: SandboxMode = SandboxMode.AUTO
    limits: Limits = field(default_factory=Limits)
    workers: int | None = None
    """Play on a Dask LocalCluster of this many worker processes (``--workers``)."""
    dask: str | None = None
    """Play on the running Dask cluster whose scheduler is at this address (``--dask``)."""
    design: Design = field(default_factory=Design)
    """Which tables are played: ``schedule.format`` and its keys (``cohorts`` come from the database)."""

    @property
    def schedule_label(self) -> str:
        """Which format produces the leaderboard, as it says so: ``sampled, 6 tables per entrant``."""
        if self.settling is not None:
            return f"{self.design.describe()} until settled, at most {self.settling.max_matches} matches"
        return self.design.describe() + (f", {self.rounds} rounds" if self.rounds > 1 else "")

    settling: Settling | None = None
    """``schedule.until: settled`` and its settings; ``None``: the whole schedule is played."""
    remote: RemoteSettings = field(default_factory=RemoteSettings)
    """The door for remote entrants (``remote:``; ``referee run --listen`` overrides it)."""

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def remote_names(self) -> list[str]:
        """The entrants that play from their authors' machines (docs/REMOTE.md): not sandboxed."""
        return [entrant.name for entrant in self.entrants if entrant.spec.remote]

    def entrant(self, name: str) -> Entrant:
        return next(entrant for entrant in self.entrants if entrant.name == name)


def read_yaml(path: Path) -> Any:
    """The file's data as ruamel's commented maps (which know each key's line)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise LeagueError(f"{path}: cannot read the league file: {exc.strerror or exc}") from None
    try:
        return YAML(typ="rt").load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise LeagueError(f"{path}{line}: not valid YAML: {problem}") from None


def _line_of(data: Any, location: Sequence[int | str]) -> int | None:
    """1-based line of the deepest key of ``location`` that the YAML tree knows."""
    line = None
    node = data
    for key in location:
        lc = getattr(node, "lc", None)
        try:
            if lc is not None:
                line = (lc.key(key) if isinstance(key, str) else lc.item(key))[0] + 1
            node = node[key]
        except (KeyError, IndexError, TypeError, AttributeError):
            break
    return line


def _where(path: Path, data: Any, location: Sequence[int | str]) -> str:
    line = _line_of(data, location)
    keys = ".".join(str(part) if isinstance(part, str) else f"[{part}]" for part in location).replace(
        ".[", "["
    )
    return f"{path}{f':{line}' if line else ''}: {keys or 'file'}"


def _validated(path: Path, data: Any) -> _League:
    """The league file's keys, checked against the schema: a mapping of known keys and typed values."""
    if not isinstance(data, Mapping):
        raise LeagueError(f"{path}: a league file is a mapping of keys like name:, players:, entrants:")
    try:
        raw = _League.model_validate(_plain(data))
    except ValidationError as exc:
        error = exc.errors()[0]
        location = [part for part in error["loc"] if not str(part).startswith("function-")]
        message = _message(error)
        raise LeagueError(f"{_where(path, data, location)}: {message}") from None
    if raw.schedule.rotate_seats is not None:
        seating = "cyclic" if raw.schedule.rotate_seats else "single"
        raise LeagueError(
            f"{_where(path, data, ['schedule', 'rotate_seats'])}: replaced by schedule.seating: write "
            f"seating: {seating} for what this did, or leave both out for the fairer default, balanced "
            "(docs/LEAGUE.md, 'Seatings')"
        )
    return raw


def _entrants(path: Path, data: Any, raw: _League, check_commands: bool) -> list[Entrant]:
    """The league's entrants, each checked: a unique name, one bot, its folder and paths there."""
    entrants = []
    seen: set[str] = set()
    for index, item in enumerate(raw.entrants):
        where: list[int | str] = ["entrants", index]
        if item.name in seen:
            raise LeagueError(f"{_where(path, data, [*where, 'name'])}: duplicate entrant name {item.name!r}")
        if item.name.lower() == "referee":  # its log would be the referee's own, referee.log
            raise LeagueError(
                f"{_where(path, data, [*where, 'name'])}: "
                "the name 'referee' is the referee's own (its log); choose another"
            )
        seen.add(item.name)
        entrants.append(_entrant(path, data, item, where, check_commands))
    return entrants


def _entrant(path: Path, data: Any, item: _Entrant, where: list[int | str], check_commands: bool) -> Entrant:
    if (item.command is not None) + (item.module is not None) + item.remote != 1:
        raise LeagueError(
            f"{_where(path, data, where)}: give exactly one of command:, module: or remote: true"
        )
    if item.remote and item.build is not None:
        raise LeagueError(f"{_where(path, data, [*where, 'build'])}: a remote entrant builds nothing")
    if item.remote:  # no process of the organiser's: nothing to build, check or show (REMOTE.md)
        return Entrant(item.name, BotSpec(item.name, remote=True), None, item.version)
    base = path.parent
    cwd = (base / item.cwd).resolve()
    if not cwd.is_dir():
        raise LeagueError(f"{_where(path, data, [*where, 'cwd'])}: no folder {cwd}")
    extra = tuple((base / extra_path).resolve() for extra_path in item.paths)
    for number, extra_path in enumerate(extra):
        if not extra_path.exists():
            raise LeagueError(f"{_where(path, data, [*where, 'paths', number])}: no such path {extra_path}")
    try:
        spec = BotSpec.parse(item.command or item.module or "", name=item.name, cwd=cwd)
        spec = replace(spec, paths=extra)
        if item.module is not None and not spec.module:
            raise BotSpecError(f"module {item.module!r} must look like package.module:ClassName")
        if check_commands and item.build is None:
            spec.check()
    except BotSpecError as exc:
        key = "command" if item.command is not None else "module"
        raise LeagueError(f"{_where(path, data, [*where, key])}: {exc}") from None
    return Entrant(item.name, spec, item.build, item.version)


def load_league(path: Path | str, check_commands: bool = True, made_by: MadeBy | None = None) -> League:
    """Reads and validates a league file; raises :class:`LeagueError` with one line naming the key.

    ``made_by`` (``referee.results.owner.made_by``) lets a league file that names no database keep
    its results in a ``results.sqlite`` of the old default that it made (``location.default_database``):
    every command that plays or reads a league passes it; a reader of the file alone need not."""
    path = Path(path).resolve()
    data = read_yaml(path)
    raw = _validated(path, data)
    settling = _settling(path, data, raw)
    base = path.parent
    try:
        rules = Rules.for_table(raw.players, raw.rules)
    except RulesError as exc:
        problem = "set players at the top level, not in rules" if exc.field == "players" else exc.problem
        raise LeagueError(f"{_where(path, data, ['rules', exc.field])}: {problem}") from None
    entrants = _entrants(path, data, raw, check_commands)
    if raw.workers is not None and raw.dask is not None:
        raise LeagueError(
            f"{_where(path, data, ['dask'])}: give workers: (a cluster on this machine) or dask: "
            "(a running cluster's scheduler), not both"
        )
    if len(entrants) < raw.players:
        raise LeagueError(
            f"{_where(path, data, ['entrants'])}: "
            f"{len(entrants)} entrants cannot fill a table of {raw.players}"
        )
    design = _design(raw.schedule, [entrant.name for entrant in entrants], raw.players, path, data)
    return League(
        path=path,
        name=raw.name,
        seed=raw.seed,
        rules=rules,
        rounds=raw.schedule.rounds,
        seating=Seating(raw.schedule.seating),
        rating=RatingMode(raw.rating),
        time_control=TimeControl(raw.time_control.per_action, raw.time_control.bank),
        max_faults=raw.faults.max,
        concurrency=raw.concurrency,
        database=(base / raw.database).resolve()
        if raw.database is not None
        else default_database(path, raw.name, made_by),
        entrants=tuple(entrants),
        sandbox=SandboxMode(raw.sandbox),
        limits=Limits(**raw.limits.model_dump()),
        workers=raw.workers,
        dask=raw.dask,
        design=design,
        settling=settling,
        remote=_remote(raw.remote, base),
    )


def _remote(raw: _Remote, base: Path) -> RemoteSettings:
    """The door's settings, with paths from the league file's folder (docs/REMOTE.md)."""
    cert = (base / raw.tls_cert).resolve() if raw.tls_cert else None
    key = (base / raw.tls_key).resolve() if raw.tls_key else None
    return RemoteSettings(raw.listen, cert, key, wait=raw.wait, max_matches=raw.max_matches)


def _design(schedule: _Schedule, names: list[str], players: int, path: Path, data: Any) -> Design:
    """The schedule's format and its keys, checked against each other and against the entrants."""
    chosen = Format(schedule.format)
    only = {
        "tables_per_entrant": (schedule.tables_per_entrant, Format.SAMPLED),
        "challengers": (schedule.challengers, Format.GAUNTLET),
        "tables_per_challenger": (schedule.tables_per_challenger, Format.GAUNTLET),
    }
    for key, (value, owner) in only.items():
        if value is not None and chosen is not owner:
            raise LeagueError(
                f"{_where(path, data, ['schedule', key])}: only for format: {owner}, "
                f"and this schedule's format is {chosen}"
            )
    if chosen is Format.SAMPLED:
        per_entrant = schedule.tables_per_entrant
        if per_entrant is None:
            raise LeagueError(
                f"{_where(path, data, ['schedule', 'format'])}: format: sampled needs "
                "tables_per_entrant: the number of tables each entrant sits at"
            )
        every = most_tables(len(names), players)
        if per_entrant >= every:
            raise LeagueError(
                f"{_where(path, data, ['schedule', 'tables_per_entrant'])}: {per_entrant} is too many: "
                f"{len(names)} entrants at {players} seats give each one {every} different table(s), all of "
                "them a round robin (format: round-robin)"
                + (f"; give at most {every - 1}" if every > 1 else "")
            )
        return Design(chosen, tables_per_entrant=per_entrant)
    if chosen is Format.GAUNTLET:
        if schedule.challengers is None:
            raise LeagueError(
                f"{_where(path, data, ['schedule', 'format'])}: format: gauntlet needs challengers: "
                "the entrants that play the field"
            )
        for number, name in enumerate(schedule.challengers):
            where = _where(path, data, ["schedule", "challengers", number])
            if name not in names:
                raise LeagueError(f"{where}: no entrant named {name!r}")
            if name in schedule.challengers[:number]:
                raise LeagueError(f"{where}: {name!r} is a challenger twice")
        field_size = len(names) - len(schedule.challengers)
        if field_size < players - 1:
            raise LeagueError(
                f"{_where(path, data, ['schedule', 'challengers'])}: the field (the entrants that are no "
                f"challenger) has {field_size}, too few to fill a table of {players} with a challenger"
            )
        count = schedule.tables_per_challenger
        every = math.comb(field_size, players - 1)
        if count is not None and count >= every:
            raise LeagueError(
                f"{_where(path, data, ['schedule', 'tables_per_challenger'])}: {count} is too many: a "
                f"field of {field_size} at {players} seats makes {every} table(s) per challenger; "
                + (f"give at most {every - 1}, or " if every > 1 else "")
                + "leave the key out to play them all"
            )
        return Design(chosen, challengers=tuple(schedule.challengers), tables_per_challenger=count)
    return Design()


def _settling(path: Path, data: Any, raw: _League) -> Settling | None:
    """The ``until: settled`` keys as a :class:`Settling`, or ``None`` for a schedule played whole. Its
    keys belong to ``until: settled`` only, and its first batch must fit under ``max_matches``."""
    schedule = raw.schedule
    keys = ("max_matches", "batch_tables", "confidence", "margin")
    if Until(schedule.until) is Until.COMPLETE:
        for key in keys:
            if getattr(schedule, key) is not None:
                raise LeagueError(
                    f"{_where(path, data, ['schedule', key])}: only for until: settled "
                    "(docs/LEAGUE.md, 'Until settled')"
                )
        return None
    if Format(schedule.format) is not Format.ROUND_ROBIN:
        raise LeagueError(
            f"{_where(path, data, ['schedule', 'until'])}: until: settled chooses its own tables from the "
            f"round robin's; it does not combine with format: {schedule.format}"
        )
    if schedule.rounds != 1:
        raise LeagueError(
            f"{_where(path, data, ['schedule', 'rounds'])}: until: settled plays batches until the ranking "
            "is settled, not rounds; leave rounds out"
        )
    entrants, per_table = len(raw.entrants), len(seatings(raw.players, Seating(schedule.seating)))
    tables = first_batch_tables(entrants, raw.players)
    round_robin = math.comb(entrants, raw.players) * per_table
    max_matches = schedule.max_matches if schedule.max_matches is not None else round_robin
    if max_matches < tables * per_table:
        raise LeagueError(
            f"{_where(path, data, ['schedule', 'max_matches'])}: the first batch, which seats every "
            f"entrant once, is {tables * per_table} matches; allow at least that many"
        )
    given = {
        key: getattr(schedule, key) for key in ("confidence", "margin") if getattr(schedule, key) is not None
    }
    batch_tables = schedule.batch_tables if schedule.batch_tables is not None else tables
    return Settling(max_matches, batch_tables, **given)


def _plain(value: Any) -> Any:
    """ruamel's commented containers as plain dicts and lists, so pydantic's strict mode accepts them."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _message(error: Mapping[str, Any]) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown key (check its spelling; docs/LEAGUE.md lists every key)"
    if kind == "missing":
        return "required key is missing"
    message = str(error["msg"])
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    return f"{message}, got {error['input']!r}" if kind not in ("value_error",) else message


def add_entrant(
    path: Path,
    name: str,
    command: tuple[str, ...],
    cwd: Path,
    paths: tuple[Path, ...] = (),
    replace_existing: bool = False,
) -> None:
    """Appends a command entrant to a league file, keeping its comments and layout; with
    ``replace_existing``, the entrant of that name gets the new command, folder and paths instead (its
    other keys, ``build:`` and ``version:``, stay).

    The new league is written to ``LEAGUE.new`` beside the file, checked as a league, and only then
    renamed over the old file (gomill writes its state files this way): at every moment the league file
    is either the old one or the new, valid one, even if the referee is killed or the disk fills
    mid-write. On any problem the file is left as it was and ``LEAGUE.new`` is removed.
    """
    entry = CommentedMap()
    entry["name"] = name
    entry["command"] = shlex.join(command)
    entry["cwd"] = _relative(cwd, path.parent)
    if paths:
        entry["paths"] = [_relative(extra, path.parent) for extra in paths]

    def change(data: Any) -> None:
        existing = next((item for item in data["entrants"] if item.get("name") == name), None)
        if replace_existing and existing is not None:
            existing.pop("module", None)
            existing.pop("paths", None)
            for key, value in entry.items():
                existing[key] = value
        else:
            data["entrants"].append(entry)

    rewrite(path, change)


def add_remote_entrant(path: Path, name: str) -> None:
    """Appends a remote entrant (``remote: true``) to a league file, as :func:`add_entrant` appends a
    command entrant: comments and layout kept, checked as a league, renamed over the old file. An entrant
    of that name already there raises :class:`LeagueError`, the file left as it was."""

    def change(data: Any) -> None:
        if any(str(item.get("name", "")).lower() == name.lower() for item in data["entrants"]):
            raise LeagueError(f"{path}: an entrant is already named {name!r}")
        entry = CommentedMap()
        entry["name"] = name
        entry["remote"] = True
        data["entrants"].append(entry)

    rewrite(path, change)


def rewrite(path: Path, change: Callable[[Any], None]) -> None:
    """The league file changed by ``change`` (on ruamel's commented maps, so that its comments and layout
    stay), written to ``LEAGUE.new``, checked as a league, and only then renamed over the old file."""
    with locked_folder(path.parent):  # another writer (submit, an entry admitted by serve) waits
        _rewrite(path, change)


def _rewrite(path: Path, change: Callable[[Any], None]) -> None:
    original = path.read_text(encoding="utf-8")
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)  # the "  - name:" style of our examples and docs
    data = yaml.load(original)
    change(data)
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    new = path.with_name(path.name + ".new")
    try:
        with new.open("w", encoding="utf-8") as out:
            out.write(buffer.getvalue())
            out.flush()
            os.fsync(out.fileno())
        shutil.copymode(path, new)
        try:
            load_league(new)
        except LeagueError as exc:  # it names the file it read: name the one the user knows
            raise LeagueError(str(exc).replace(str(new.resolve()), str(path.resolve()))) from None
        os.replace(new, path)
    except OSError as exc:
        new.unlink(missing_ok=True)
        raise LeagueError(f"{path}: cannot write the league file: {exc.strerror or exc}") from None
    except BaseException:
        new.unlink(missing_ok=True)
        raise


def _relative(target: Path, base: Path) -> str:
    """``target`` relative to the league file's folder, unless that climbs more than two levels."""
    relative = os.path.relpath(target, base)
    return relative if not relative.startswith("../../../") else str(target)
