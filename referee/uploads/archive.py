"""Unpacking an author's archive (``.zip`` or ``.tar.gz``) into a folder of its own, refusing whatever
could reach outside that folder or fill the disk.

An archive comes from a stranger, so every entry is judged before a byte of it is written: its name
(no absolute path, no ``..``, no drive or backslash tricks, no duplicate), its kind (regular files and
folders only: no symlink, hard link, device or FIFO), and the sizes: the archive's own, the total the
entries declare, the number of entries, and what decompression actually yields (a zip bomb can lie in its
declared sizes; each file is read through a counter that stops at its declared size and at the total
cap). A ``.tar.gz`` is decompressed through the same counter before tar reads a header, so a gzip bomb
stops at the cap too. The first refusal is one :class:`UploadError` line naming the entry.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Final

from referee.uploads.errors import UploadError

CHUNK: Final = 64 * 1024


@dataclass(frozen=True, slots=True)
class Caps:
    """The limits on one archive (docs/LEAGUE.md, "Uploading a bot")."""

    archive: int = 16 * 1024**2
    """Bytes of the archive itself."""
    unpacked: int = 128 * 1024**2
    """Bytes of all its files together, unpacked."""
    files: int = 2000
    """Entries (files and folders)."""


@dataclass(frozen=True, slots=True)
class _Entry:
    name: str
    directory: bool
    size: int
    executable: bool
    open: Callable[[], IO[bytes]]


def unpack(source: bytes | Path, into: Path, caps: Caps = Caps()) -> list[Path]:
    """Unpacks the archive ``source`` (its bytes, or a file) into the empty or new folder ``into``;
    returns the files written, relative to it. Raises :class:`UploadError` on the first entry refused
    (``into`` may then hold part of the archive: the caller unpacks into a folder it throws away)."""
    data = source if isinstance(source, bytes) else _read_capped(source, caps.archive)
    if len(data) > caps.archive:
        raise UploadError(f"archive: {len(data)} bytes is over the cap of {_size(caps.archive)}")
    into.mkdir(parents=True, exist_ok=True)
    if any(into.iterdir()):
        raise UploadError(f"{into}: not an empty folder to unpack into")
    if data[:4] == b"PK\x03\x04" or data[:4] == b"PK\x05\x06":
        return _write_all(_zip_entries(data, caps), into, caps)
    if data[:2] == b"\x1f\x8b":
        with tempfile.TemporaryFile() as tar_bytes:
            _gunzip(data, tar_bytes, caps)
            tar_bytes.seek(0)
            return _write_all(_tar_entries(tar_bytes, caps), into, caps)
    raise UploadError("archive: neither a .zip nor a .tar.gz file")


def _read_capped(path: Path, cap: int) -> bytes:
    try:
        size = path.stat().st_size
        if size > cap:
            raise UploadError(f"archive: {path} is {size} bytes, over the cap of {_size(cap)}")
        return path.read_bytes()
    except OSError as exc:
        raise UploadError(f"archive: cannot read {path}: {exc.strerror or exc}") from None


def _gunzip(data: bytes, out: IO[bytes], caps: Caps) -> None:
    """Decompresses a gzip stream into ``out``, stopping at the unpacked cap (plus tar's headers)."""
    limit = caps.unpacked + 512 * (caps.files + 4) + 10240
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    written = 0
    view = memoryview(data)
    try:
        for start in range(0, len(data), CHUNK):
            piece: bytes = bytes(view[start : start + CHUNK])
            while piece:
                chunk = inflater.decompress(piece, CHUNK)
                written += len(chunk)
                if written > limit:
                    raise UploadError(
                        f"archive: a zip bomb: it unpacks to over {_size(caps.unpacked)}, the cap"
                    )
                out.write(chunk)
                piece = inflater.unconsumed_tail
        out.write(inflater.flush())
    except zlib.error as exc:
        raise UploadError(f"archive: not a valid .tar.gz: {exc}") from None


def _zip_entries(data: bytes, caps: Caps) -> Iterator[_Entry]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError) as exc:
        raise UploadError(f"archive: not a valid .zip: {exc}") from None
    infos = archive.infolist()
    _count(len(infos), caps)
    declared = 0
    for info in infos:
        mode = info.external_attr >> 16
        kind = stat.S_IFMT(mode)
        if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
            raise UploadError(f"archive: entry {info.filename!r}: {_kind_name(mode)}s are not allowed")
        if info.flag_bits & 0x1:
            raise UploadError(f"archive: entry {info.filename!r}: encrypted entries are not allowed")
        declared += info.file_size
        if declared > caps.unpacked:
            raise UploadError(f"archive: a zip bomb: its entries declare over {_size(caps.unpacked)}")
    for info in infos:
        yield _Entry(
            info.filename,
            info.is_dir(),
            info.file_size,
            bool((info.external_attr >> 16) & 0o111),
            lambda info=info: archive.open(info),  # type: ignore[misc]
        )


def _tar_entries(tar_bytes: IO[bytes], caps: Caps) -> Iterator[_Entry]:
    try:
        archive = tarfile.open(fileobj=tar_bytes, mode="r:")  # noqa: SIM115 (read by the entries after)
        members = archive.getmembers()
    except tarfile.TarError as exc:
        raise UploadError(f"archive: not a valid .tar.gz: {exc}") from None
    _count(len(members), caps)
    declared = 0
    for member in members:
        if member.issym() or member.islnk():
            what = "symlink" if member.issym() else "hard link"
            raise UploadError(
                f"archive: entry {member.name!r}: a {what} (to {member.linkname!r}); {what}s are not allowed"
            )
        if not (member.isfile() or member.isdir()):
            raise UploadError(f"archive: entry {member.name!r}: only files and folders are allowed")
        declared += member.size
        if declared > caps.unpacked:
            raise UploadError(f"archive: a zip bomb: its entries declare over {_size(caps.unpacked)}")
    for member in members:

        def opened(member: tarfile.TarInfo = member) -> IO[bytes]:
            stream = archive.extractfile(member)
            assert stream is not None  # a regular file, checked above
            return stream

        yield _Entry(member.name, member.isdir(), member.size, bool(member.mode & 0o111), opened)


def _write_all(entries: Iterator[_Entry], into: Path, caps: Caps) -> list[Path]:
    """Writes the entries below ``into``, each name checked and each file's bytes counted as they come."""
    written: list[Path] = []
    seen: set[PurePosixPath] = set()
    total = 0
    root = into.resolve()
    for entry in entries:
        if entry.directory and not entry.name.strip("./"):
            continue  # the archive's top folder itself (``tar -C src -czf bot.tar.gz .``)
        relative = safe_name(entry.name)
        if relative in seen:
            raise UploadError(f"archive: entry {entry.name!r}: appears twice")
        seen.add(relative)
        target = root.joinpath(*relative.parts)
        for parent in reversed(target.parents):  # no folder on the way may be a file or a link
            if parent != root and root in parent.parents and parent.exists() and not parent.is_dir():
                raise UploadError(f"archive: entry {entry.name!r}: a file of the archive is in its way")
        if entry.directory:
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            descriptor = os.open(target, flags, 0o755 if entry.executable else 0o644)
        except FileExistsError:
            raise UploadError(f"archive: entry {entry.name!r}: a folder is in its way") from None
        try:
            total = _copy(entry, descriptor, total, caps)
        except (zipfile.BadZipFile, tarfile.TarError, zlib.error, EOFError, OSError) as exc:
            raise UploadError(f"archive: entry {entry.name!r}: cannot be unpacked: {exc}") from None
        written.append(Path(*relative.parts))
    return written


def _copy(entry: _Entry, descriptor: int, total: int, caps: Caps) -> int:
    """Copies one entry's bytes into the open file, counted against its declared size and the total cap;
    returns the new total."""
    with os.fdopen(descriptor, "wb") as out, entry.open() as stream:
        size = 0
        while chunk := stream.read(CHUNK):
            size += len(chunk)
            total += len(chunk)
            if size > entry.size or total > caps.unpacked:
                raise UploadError(
                    f"archive: a zip bomb: entry {entry.name!r} unpacks to more than it declares"
                    if size > entry.size
                    else f"archive: a zip bomb: it unpacks to over {_size(caps.unpacked)}, the cap"
                )
            out.write(chunk)
    return total


def safe_name(name: str) -> PurePosixPath:
    """The entry's path inside the folder, or :class:`UploadError` for one that could leave it.

    >>> safe_name("bot/./main.py")
    PurePosixPath('bot/main.py')
    >>> safe_name("../etc/passwd")
    Traceback (most recent call last):
    ...
    referee.uploads.errors.UploadError: archive: entry '../etc/passwd': climbs out of the folder (..)
    """
    if "\0" in name or "\\" in name:
        raise UploadError(f"archive: entry {name!r}: a NUL or backslash in its name")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise UploadError(f"archive: entry {name!r}: an absolute path")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise UploadError(f"archive: entry {name!r}: climbs out of the folder (..)")
    if not parts:
        raise UploadError(f"archive: entry {name!r}: an empty name")
    return PurePosixPath(*parts)


def _count(entries: int, caps: Caps) -> None:
    if entries > caps.files:
        raise UploadError(f"archive: {entries} entries is over the cap of {caps.files}")


def _kind_name(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device file"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    return "special file"


def _size(size: int) -> str:
    for unit, factor in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} bytes"
