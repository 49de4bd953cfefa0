"""Cloze items as JSON lines, one object per line::

    {"id": "...", "context": "...", "target": "...", "candidates": ["...", ...],
     "suffix": ".", "features": {...}}

``suffix`` and ``features`` are optional. Errors name the file, the line and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from faithprobe import atomic
from faithprobe.datasets.jsonl import field, iter_records, string_list
from faithprobe.errors import DataError, excerpt
from faithprobe.records import ClozeExample


def read_cloze_jsonl(path: str | Path) -> list[ClozeExample]:
    path = Path(path)
    items: list[ClozeExample] = []
    seen: set[str] = set()
    for line_no, record in iter_records(path):
        item_id = field(path, line_no, record, "id", str)
        if item_id in seen:
            raise DataError(
                path, f"duplicate id {excerpt(item_id)}", record=f"line {line_no}", field="id"
            )
        seen.add(item_id)
        context = field(path, line_no, record, "context", str)
        target = field(path, line_no, record, "target", str)
        candidates = string_list(path, line_no, record, "candidates")
        if target not in candidates:
            raise DataError(
                path,
                f"target {excerpt(target)} is not among the candidates",
                record=f"line {line_no}",
                field="target",
            )
        suffix = field(path, line_no, record, "suffix", str, required=False) or ""
        features = field(path, line_no, record, "features", dict, required=False) or {}
        items.append(ClozeExample(item_id, context, target, tuple(candidates), suffix, features))
    return items


def write_cloze_jsonl(items: Iterable[ClozeExample], path: str | Path) -> int:
    """Write atomically (:mod:`faithprobe.atomic`); return the record count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with atomic.open_text(path) as f:
        for item in items:
            record = {
                "id": item.id,
                "context": item.context,
                "suffix": item.suffix,
                "target": item.target,
                "candidates": list(item.candidates),
                "features": item.features,
            }
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
            n += 1
    return n
