"""Run files in a .zip, as History downloads several runs and takes them back: writing one, and reading one safely.

Reading streams each member against limits counted on the bytes actually read, never on the sizes the zip's
headers claim: each member at most MAX_FILE_BYTES (the importer's limit for one file), the whole zip at most
MAX_ZIP_BYTES unzipped, and at most MAX_ZIP_FILES .json members. One member is in memory at a time, and the caller
imports it before the next is read: 200 members of 6 MB zeros (1.2 MB zipped) had taken the server to +900 MB,
and 200 valid runs to 28 s and more (bench/zip_import.py).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from core.history.limits import MAX_FILE_BYTES, SIZE_WORDS, printable
from core.language.i18n import _

MAX_ZIP_FILES = 200  # .json members in one .zip; History's own downloads hold the runs picked
MAX_ZIP_BYTES = 100 * 2**20  # unzipped, all members together: 200 of the tutorial's runs are about 40 MB
CHUNK = 2**16


class ArchiveError(ValueError):
    """The .zip as a whole cannot be read; the message is one sentence."""


@dataclass(frozen=True)
class Member:
    """One .json member: its bytes, or the sentence saying why it was not read (too large)."""

    name: str
    data: bytes | None
    problem: str | None = None


def zip_files(files: dict[str, str | bytes]) -> bytes:
    """Several named text files as one .zip (several runs' JSON files, each importable again)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return out.getvalue()


def zip_folder(folder: Path) -> bytes:
    """A .zip of everything under `folder`, inside one folder of its name (a log directory, to unzip and open)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            z.write(path, f"{folder.name}/{path.relative_to(folder).as_posix()}")
    return buffer.getvalue()


def zip_members(data: bytes) -> Iterator[Member]:
    """The .json members of a .zip, one at a time, each within the limits; ArchiveError for the zip as a whole."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise ArchiveError(
            _("this is not a readable .zip file; upload the .json files it held, or the .zip as downloaded")
        ) from None
    with archive:
        members = [m for m in archive.infolist() if not m.is_dir() and m.filename.lower().endswith(".json")]
        if not members:
            raise ArchiveError(_("the .zip holds no .json file; it must hold run or sweep files (.json)"))
        if len(members) > MAX_ZIP_FILES:
            said = _("the .zip holds {count} .json files; at most {limit} are allowed")
            raise ArchiveError(said.format(count=len(members), limit=MAX_ZIP_FILES))
        total = 0
        for info in members:
            name = printable(info.filename)
            data_read, over = _read(archive, info, min(MAX_FILE_BYTES, MAX_ZIP_BYTES - total))
            total += len(data_read)
            if over and total >= MAX_ZIP_BYTES:
                said = _(
                    "the .zip unzips to more than {limit:,} bytes in all (at {name}); the limit is "
                    "{mib:g} MiB: import its runs in several smaller .zip files"
                )
                raise ArchiveError(said.format(limit=MAX_ZIP_BYTES, name=name, mib=MAX_ZIP_BYTES / 2**20))
            if over:
                said = _("it unzips to more than {limit:,} bytes; a file is at most {words}")
                yield Member(name, None, said.format(limit=MAX_FILE_BYTES, words=SIZE_WORDS))
            else:
                yield Member(name, data_read)


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> tuple[bytes, bool]:
    """Up to `limit` bytes of a member, read in chunks; (bytes, whether there was more)."""
    out = bytearray()
    try:
        with archive.open(info) as fh:
            while len(out) <= limit:
                chunk = fh.read(min(CHUNK, limit + 1 - len(out)))
                if not chunk:
                    return bytes(out), False
                out += chunk
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError) as err:  # RuntimeError: encrypted
        said = _("{name} in the .zip cannot be read ({problem})")
        raise ArchiveError(said.format(name=printable(info.filename), problem=err)) from None
    return bytes(out[:limit]), True
