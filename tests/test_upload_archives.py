"""Archives and manifests of uploaded bots (referee.uploads): what unpacks, and every refusal as one line
naming the entry. In-process only: no build, no sandbox (tests/test_uploads.py plays those)."""

from __future__ import annotations

import io
import os
import stat
import struct
import tarfile
import zipfile
from pathlib import Path

import pytest

from referee.uploads.archive import Caps, unpack
from referee.uploads.errors import UploadError
from referee.uploads.manifest import Language, parse_manifest, read_manifest
from referee.uploads.versions import tree_hash

MANIFEST = b"language: python\ncommand: python bot.py\nbuild: python make.py\n"


def a_zip(files: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return buffer.getvalue()


def a_tar(members: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for info, data in members:
            info.size = len(data) if info.isfile() else 0
            archive.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return buffer.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.mode = 0o755 if name.endswith("bot.py") else 0o644
    return info


def refused_with(archive: bytes, into: Path, caps: Caps | None = None) -> str:
    with pytest.raises(UploadError) as caught:
        unpack(archive, into / "bot", caps or Caps())
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_zip_and_a_tar_gz_unpack_to_the_same_files_and_the_same_version(tmp_path):
    files = {"pyramid.yaml": MANIFEST, "bot.py": b"print('hi')\n", "lib/helper.py": b"X = 1\n"}
    written = unpack(a_zip(files), tmp_path / "z")
    assert sorted(map(str, written)) == ["bot.py", "lib/helper.py", "pyramid.yaml"]
    top = member(".", tarfile.DIRTYPE)  # tar -C src -czf bot.tar.gz . starts with the folder itself
    tar = a_tar([(top, b""), *((member(name), data) for name, data in files.items())])
    unpack(tar, tmp_path / "t")
    for name, data in files.items():
        assert (tmp_path / "z" / name).read_bytes() == data == (tmp_path / "t" / name).read_bytes()
    assert (tmp_path / "t" / "bot.py").stat().st_mode & 0o100  # the executable bit is kept
    assert read_manifest(tmp_path / "z").language is Language.PYTHON
    (tmp_path / "t" / "bot.py").chmod(0o644)
    assert tree_hash(tmp_path / "z") == tree_hash(tmp_path / "t")
    (tmp_path / "t" / "bot.py").write_bytes(b"print('other')\n")
    assert tree_hash(tmp_path / "z") != tree_hash(tmp_path / "t")


def test_a_zip_bomb_is_refused_by_its_declared_size(tmp_path):
    bomb = a_zip({"pyramid.yaml": MANIFEST, "zeros": bytes(3 * 1024**2)})
    assert len(bomb) < 20_000
    message = refused_with(bomb, tmp_path, Caps(unpacked=2 * 1024**2))
    assert message == "archive: a zip bomb: its entries declare over 2 MiB"
    assert not (tmp_path / "bot" / "zeros").exists()


def test_a_zip_bomb_that_lies_about_its_size_is_refused_by_what_it_unpacks_to(tmp_path):
    honest = a_zip({"zeros": bytes(3 * 1024**2)})
    size = struct.pack("<I", 3 * 1024**2)
    lying = honest.replace(size, struct.pack("<I", 100))  # local header and central directory
    assert lying != honest
    message = refused_with(lying, tmp_path)
    assert message.startswith("archive: a zip bomb: entry 'zeros' unpacks to more than it declares") or (
        "'zeros': cannot be unpacked" in message
    )
    assert (tmp_path / "bot" / "zeros").stat().st_size <= 100 + 65536


def test_a_gzip_bomb_stops_at_the_cap(tmp_path):
    tar = a_tar([(member("zeros"), bytes(3 * 1024**2))])
    message = refused_with(tar, tmp_path, Caps(unpacked=1024**2))
    assert message.startswith("archive: a zip bomb: it unpacks to over 1 MiB")


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("../evil.py", "climbs out of the folder (..)"),
        ("bot/../../evil.py", "climbs out of the folder (..)"),
        ("/etc/cron.d/evil", "an absolute path"),
        ("C:/evil", "an absolute path"),
        ("bot\\..\\evil", "a NUL or backslash in its name"),
    ],
)
def test_names_that_leave_the_folder_are_refused_in_a_zip_and_a_tar(tmp_path, name, problem):
    assert refused_with(a_zip({name: b"x"}), tmp_path / "z") == f"archive: entry {name!r}: {problem}"
    assert (
        refused_with(a_tar([(member(name), b"x")]), tmp_path / "t") == f"archive: entry {name!r}: {problem}"
    )
    assert not list(tmp_path.rglob("evil*"))


def test_links_and_devices_are_refused(tmp_path):
    out = refused_with(a_zip({"bot.py": b"x"}, links={"secret": "/etc/shadow"}), tmp_path / "z")
    assert out == "archive: entry 'secret': symlinks are not allowed"
    out = refused_with(a_tar([(member("secret", tarfile.SYMTYPE, "../../league.yaml"), b"")]), tmp_path / "s")
    assert out == "archive: entry 'secret': a symlink (to '../../league.yaml'); symlinks are not allowed"
    out = refused_with(a_tar([(member("hard", tarfile.LNKTYPE, "/etc/passwd"), b"")]), tmp_path / "h")
    assert out == "archive: entry 'hard': a hard link (to '/etc/passwd'); hard links are not allowed"
    out = refused_with(a_tar([(member("tty", tarfile.CHRTYPE), b"")]), tmp_path / "d")
    assert out == "archive: entry 'tty': only files and folders are allowed"
    for folder in ("z", "s", "h", "d"):
        assert not (tmp_path / folder / "bot").exists() or not any((tmp_path / folder / "bot").iterdir())


def test_an_archive_over_the_caps_is_refused(tmp_path):
    archive = a_zip({"pyramid.yaml": MANIFEST, "weights.bin": os.urandom(50_000)})
    assert refused_with(archive, tmp_path / "a", Caps(archive=4096)) == (
        f"archive: {len(archive)} bytes is over the cap of 4 KiB"
    )
    many = a_zip({f"f{i}.py": b"" for i in range(30)})
    assert refused_with(many, tmp_path / "b", Caps(files=20)) == "archive: 30 entries is over the cap of 20"
    path = tmp_path / "big.zip"
    path.write_bytes(archive)
    with pytest.raises(UploadError, match=r"^archive: .*big\.zip is \d+ bytes, over the cap of 4 KiB$"):
        unpack(path, tmp_path / "c", Caps(archive=4096))
    assert (
        refused_with(b"not an archive at all", tmp_path / "d") == "archive: neither a .zip nor a .tar.gz file"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("command: python bot.py\n", "pyramid.yaml: language: required key is missing"),
        (
            "language: rust\ncommand: ./bot\n",
            "pyramid.yaml: language: expected one of 'python' or 'node', got 'rust'",
        ),
        (
            "language: python\ncommand: python bot.py\nrun: x\n",
            "pyramid.yaml: run: unknown key (the keys are language, command and build)",
        ),
        (
            "language: node\ncommand: python bot.py\n",
            "pyramid.yaml: command: a node bot's command starts with node, got 'python bot.py'",
        ),
        ("language: python\ncommand: 'python \"bot.py'\n", "pyramid.yaml: command: No closing quotation"),
        ("- a list\n", "pyramid.yaml: a mapping of language:, command: and optional build:"),
        ("language: [python\n", "pyramid.yaml:2: not valid YAML: "),
    ],
)
def test_a_bad_manifest_is_one_line_naming_its_key(text, message):
    with pytest.raises(UploadError) as caught:
        parse_manifest(text)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_an_archive_without_a_manifest_at_its_top_is_refused(tmp_path):
    unpack(a_zip({"sub/pyramid.yaml": MANIFEST}), tmp_path / "bot")
    with pytest.raises(UploadError, match=r"^pyramid.yaml: not at the archive's top"):
        read_manifest(tmp_path / "bot")
