"""Tab-separated files with a header line, read as flat records for a declared schema
(:mod:`faithprobe.datasets.schema`).

Files are read without quote processing (MNLI's convention: a ``"`` is text). A record maps
each column of the header to its cell, stripped (a column named twice: the first); an empty
cell (or one a short row lacks) is left out of the record, so that a schema's "required"
says "present and not empty". Blank lines are skipped; record names are ``line N`` (the
header is line 1).
"""

from __future__ import annotations

import csv
from pathlib import Path

from faithprobe.datasets.jsonl import read_text
from faithprobe.errors import DataError

TSVRecord = dict[str, str]


def read_tsv(path: Path) -> tuple[list[str], list[tuple[int, TSVRecord]]]:
    """``(header, [(line, record), ...])`` of the file ``path`` (module docstring)."""
    lines = read_text(path).splitlines()
    rows = csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
    header = [h.strip() for h in next(rows, [])]
    if not any(header):
        raise DataError(path, "is empty (a header line is needed)", record="line 1")
    records = []
    for line, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        record: TSVRecord = {}
        for name, cell in zip(header, row, strict=False):
            if name and cell.strip():
                record.setdefault(name, cell.strip())  # a repeated column: the first one's
        records.append((line, record))
    return header, records


def require_columns(path: Path, header: list[str], columns: list[str]) -> None:
    """A DataError naming the first of ``columns`` the header lacks."""
    missing = [c for c in columns if c not in header]
    if missing:
        raise DataError(path, f"header lacks column(s) {', '.join(missing)}", record="line 1",
                        field=missing[0])  # fmt: skip


def lowered(record: TSVRecord, columns: tuple[str, ...]) -> TSVRecord:
    """``record`` with the cells of ``columns`` (those read case-insensitively) in lower case."""
    return {k: v.lower() if k in columns else v for k, v in record.items()}
