"""A history file cut short (a copy stopped half-way, a full disk): its surviving pages read into a sound copy.

SQLite's header gives the page size and how many pages the file had. Any scan or lookup that reaches a page past
the cut fails, and a tree's interior pages, through which every read goes, may lie late in the file: a cut there
hides whole pages that survive. So each surviving page is read on its own (core/history/pages.py), as SQLite's
`.recover` reads them (Debian's SQLite 3.40 lacks the sqlite_dbpage table `.recover` needs, in its sqlite3 CLI
and in Python's module alike), and each record found is kept as a row of the table whose columns its values
fit, in a new file with the damaged file's own tables.
"""

from __future__ import annotations

import contextlib
import sqlite3
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.history.pages import INDEX_INTERIOR, INDEX_LEAF, TABLE_LEAF, Header, Pages

TYPES = {"TEXT": str, "INTEGER": int}  # a column's declared type -> the values it holds (others: any)


@dataclass(frozen=True)
class Cut:
    """How much of a file survives: its header, the whole pages left, and the bytes left of the page cut through."""

    header: Header
    kept: int
    tail: int

    @property
    def pages(self) -> int:
        return self.header.pages or 0


@dataclass(frozen=True)
class Shape:
    """A table of the damaged file: its name, its columns (name, declared type, NOT NULL, whether it has a default),
    and the page types that hold its rows."""

    name: str
    columns: tuple[tuple[str, str, bool, bool], ...]
    page_types: tuple[int, ...]

    def fits(self, row: list) -> bool:
        """Whether `row` could be one of this table's (a schema row or another index's key cannot)."""
        if not 0 < len(row) <= len(self.columns):
            return False
        for value, (_, declared, not_null, _) in zip(row, self.columns, strict=False):
            wanted = TYPES.get(declared.upper())
            if (value is None and not_null) or (value is not None and wanted and not isinstance(value, wanted)):
                return False
        # A row written before a column was added ends early: SQLite reads the column's default for it.
        return all(default or not not_null for _, _, not_null, default in self.columns[len(row) :])


def cut(path: Path) -> Cut | None:
    """The file's Cut if it is shorter than its header says, else None (whole, or no SQLite header to trust)."""
    with open(path, "rb") as f:
        header = Header.read(f.read(100))
    if header is None or not header.pages or not header.page_size:
        return None
    size = path.stat().st_size
    return (
        Cut(header, size // header.page_size, size % header.page_size)
        if size < header.pages * header.page_size
        else None
    )


@contextlib.contextmanager
def rebuilt(path: Path, cut: Cut, workdir: Path, tables: Sequence[str]) -> Iterator[Path]:
    """A new SQLite file in `workdir` (removed afterwards) holding every row of `tables` found on the pages of
    `path` that survive the cut; with no tables in it where even the schema was lost."""
    with tempfile.TemporaryDirectory(prefix=".salvage-", dir=workdir) as folder, open(path, "rb") as f:
        copy = Path(folder) / path.name
        pages = Pages(f, cut.header, cut.kept)
        with contextlib.closing(sqlite3.connect(copy)) as db:
            shapes = _shapes(db, pages, cut, tables)
            for shape, row in _rows(pages, cut, shapes):
                names = ", ".join(f'"{column[0]}"' for column in shape.columns[: len(row)])
                marks = ", ".join("?" * len(row))
                with contextlib.suppress(sqlite3.Error):  # a row that breaks a constraint: the next one is read
                    db.execute(f'INSERT OR IGNORE INTO "{shape.name}" ({names}) VALUES ({marks})', row)
            db.commit()
        yield copy


def _shapes(db: sqlite3.Connection, pages: Pages, cut: Cut, tables: Sequence[str]) -> list[Shape]:
    """Each of `tables` made in `db` as the damaged file's schema (its first page, read as the others are) defines
    it; SQLite itself will not read a schema from a file shorter than its header says."""
    below = cut.tail if cut.kept == 0 else None
    schema = [row for _, row in pages.records(pages.page(1), at=100, below=below) if len(row) == 5]
    shapes = []
    for type_, name, _, _, sql in schema:
        if type_ != "table" or name not in tables or not isinstance(sql, str):
            continue
        try:
            db.execute(sql)
        except sqlite3.Error:
            continue
        columns = db.execute(f'PRAGMA table_info("{name}")').fetchall()  # cid, name, type, notnull, ...
        index = "WITHOUT ROWID" in sql.upper()  # its rows are kept as an index's keys
        page_types = (INDEX_LEAF, INDEX_INTERIOR) if index else (TABLE_LEAF,)
        shapes.append(Shape(name, tuple((c[1], c[2], bool(c[3]), c[4] is not None) for c in columns), page_types))
    return shapes


def _rows(pages: Pages, cut: Cut, shapes: list[Shape]) -> Iterator[tuple[Shape, list]]:
    """(table, row) for each record on a surviving page (not page 1, the schema's) that fits one of the tables."""
    free = pages.free()
    last = min(cut.kept + (cut.tail > 0), cut.pages)
    for number in range(2, last + 1):
        if number in free:
            continue
        below = cut.tail if number == cut.kept + 1 else None  # the page the cut went through
        for page_type, row in pages.records(pages.page(number), below=below):
            shape = next((s for s in shapes if page_type in s.page_types and s.fits(row)), None)
            if shape is not None:
                yield shape, row
