"""SQLite's file format, read page by page: the rows a b-tree page holds, without the tree around it.

https://www.sqlite.org/fileformat.html. A table's leaf page (0x0D) holds rows; an index's pages, leaf (0x0A) and
interior (0x02) alike, hold keys, and a WITHOUT ROWID table's rows are such keys; a table's interior page (0x05)
holds only rowids. A row too long for its page goes on in a chain of overflow pages. Only the first `kept` pages
are read: a row that needs a page past them is not returned.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

MAGIC = b"SQLite format 3\x00"
TABLE_LEAF, INDEX_LEAF, INDEX_INTERIOR, TABLE_INTERIOR = 0x0D, 0x0A, 0x02, 0x05
ROWS = (TABLE_LEAF, INDEX_LEAF, INDEX_INTERIOR)  # the page types whose cells are records
INT_BYTES = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}  # serial type -> bytes of a big-endian signed integer
CODECS = {1: "utf-8", 2: "utf-16-le", 3: "utf-16-be"}


@dataclass(frozen=True)
class Header:
    """The 100-byte file header's page size, page count (None where stale), free-list start and text encoding."""

    page_size: int
    pages: int | None
    reserved: int
    free_trunk: int
    codec: str

    @classmethod
    def read(cls, data: bytes) -> Header | None:
        """The header, or None if `data` does not begin with one."""
        if len(data) < 100 or not data.startswith(MAGIC):
            return None
        size = int.from_bytes(data[16:18], "big")
        valid = data[92:96] == data[24:28]  # else SQLite takes the page count from the file's size
        return cls(
            page_size=65536 if size == 1 else size,
            pages=int.from_bytes(data[28:32], "big") if valid else None,
            reserved=data[20],
            free_trunk=int.from_bytes(data[32:36], "big"),
            codec=CODECS.get(int.from_bytes(data[56:60], "big"), "utf-8"),
        )


class Pages:
    """The first `kept` pages of an open SQLite file."""

    def __init__(self, f: BinaryIO, header: Header, kept: int) -> None:
        self.f, self.header, self.kept = f, header, kept
        self.usable = header.page_size - header.reserved

    def page(self, number: int) -> bytes:
        self.f.seek((number - 1) * self.header.page_size)
        return self.f.read(self.header.page_size)

    def free(self) -> set[int]:
        """The free pages that the surviving trunk pages list (old content, never rows to bring back)."""
        trunk, free = self.header.free_trunk, set()
        while 1 < trunk <= self.kept and trunk not in free:
            free.add(trunk)
            data = self.page(trunk)
            count = min(int.from_bytes(data[4:8], "big"), (self.usable - 8) // 4)
            free.update(int.from_bytes(data[8 + 4 * i : 12 + 4 * i], "big") for i in range(count))
            trunk = int.from_bytes(data[:4], "big")
        return free

    def records(self, data: bytes, at: int = 0, below: int | None = None) -> Iterator[tuple[int, list]]:
        """(page type, values) of each record the page `data` holds, its header at `at`; with `below`, only those
        whose cell begins and ends before that byte (a page the cut went through)."""
        page_type = data[at] if len(data) > at else 0
        if page_type not in ROWS:
            return
        head = at + (12 if page_type == INDEX_INTERIOR else 8)
        count = int.from_bytes(data[at + 3 : at + 5], "big")
        limit = len(data) if below is None else below
        if head + 2 * count > limit:
            return
        cells = [int.from_bytes(data[head + 2 * i : head + 2 * i + 2], "big") for i in range(count)]
        starts = sorted(set(cells)) + [len(data)]
        end = dict(zip(starts, starts[1:], strict=False))  # a cell ends at most where the next one begins
        for cell in cells:
            if head + 2 * count <= cell and end[cell] <= limit:
                with_values = self._record(data, cell + 4 * (page_type == INDEX_INTERIOR), page_type)
                if with_values is not None:
                    yield page_type, with_values

    def _record(self, data: bytes, at: int, page_type: int) -> list | None:
        try:
            size, at = varint(data, at)
            if page_type == TABLE_LEAF:
                _, at = varint(data, at)  # the rowid
            payload = self._payload(data, at, size, page_type)
            return None if payload is None else values(payload, self.header.codec)
        except (IndexError, ValueError, struct.error):
            return None

    def _payload(self, data: bytes, at: int, size: int, page_type: int) -> bytes | None:
        u = self.usable
        most = u - 35 if page_type == TABLE_LEAF else (u - 12) * 64 // 255 - 23  # the most a cell keeps on its page
        if size <= most:
            return bytes(data[at : at + size])
        least = (u - 12) * 32 // 255 - 23
        local = least + (size - least) % (u - 4)
        local = local if local <= most else least
        out, seen = bytearray(data[at : at + local]), set()
        following = int.from_bytes(data[at + local : at + local + 4], "big")
        while len(out) < size:
            if not 1 < following <= self.kept or following in seen:
                return None  # on a lost page, or a chain gone wrong
            seen.add(following)
            page = self.page(following)
            out += page[4:u]
            following = int.from_bytes(page[:4], "big")
        return bytes(out[:size])


def varint(data: bytes, at: int) -> tuple[int, int]:
    """SQLite's variable-length integer at `at`: (its value, where the next field begins)."""
    value = 0
    for i in range(8):
        byte = data[at + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    return (value << 8) | data[at + 8], at + 9


def values(record: bytes, codec: str) -> list:
    """A record's values: None, int, float, bytes or str, by each one's serial type."""
    end, at = varint(record, 0)
    types = []
    while at < end:
        serial, at = varint(record, at)
        types.append(serial)
    out: list = []
    for serial in types:
        width = INT_BYTES.get(serial, 8 if serial == 7 else (serial - 12) // 2 if serial >= 12 else 0)
        raw = record[end : end + width]
        if len(raw) < width or serial in (10, 11):
            raise ValueError("a record cut short, or of a reserved type")
        end += width
        if serial in INT_BYTES:
            out.append(int.from_bytes(raw, "big", signed=True))
        elif serial == 7:
            out.append(struct.unpack(">d", raw)[0])
        elif serial >= 12:
            out.append(raw.decode(codec) if serial % 2 else bytes(raw))
        else:
            out.append({0: None, 8: 0, 9: 1}[serial])
    return out
