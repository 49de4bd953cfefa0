"""Cloze items as JSON lines, one object per line::

    {"id": "...", "context": "...", "target": "...", "candidates": ["...", ...],
     "suffix": ".", "features": {...}}

``suffix`` and ``features`` are optional. Errors name the file, the line and the field.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from faithprobe.errors import DataError
from faithprobe.examples import ClozeExample


def _field(path: Path, line: int, record: dict, name: str, kind: type, required: bool = True):
    if name not in record:
        if required:
            raise DataError(path, "missing", record=f"line {line}", field=name)
        return None
    value = record[name]
    if not isinstance(value, kind):
        raise DataError(
            path,
            f"expected {kind.__name__}, got {type(value).__name__}",
            record=f"line {line}",
            field=name,
        )
    return value


def read_cloze_jsonl(path: str | Path) -> list[ClozeExample]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise DataError(path, f"cannot read: {err}") from err
    items: list[ClozeExample] = []
    seen: set[str] = set()
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataError(path, f"not valid JSON ({err.msg})", record=f"line {line_no}") from err
        if not isinstance(record, dict):
            raise DataError(path, "expected a JSON object", record=f"line {line_no}")
        item_id = _field(path, line_no, record, "id", str)
        if item_id in seen:
            raise DataError(path, f"duplicate id {item_id!r}", record=f"line {line_no}", field="id")
        seen.add(item_id)
        context = _field(path, line_no, record, "context", str)
        target = _field(path, line_no, record, "target", str)
        candidates = _field(path, line_no, record, "candidates", list)
        if not candidates or not all(isinstance(c, str) and c for c in candidates):
            raise DataError(
                path,
                "must be a non-empty list of non-empty strings",
                record=f"line {line_no}",
                field="candidates",
            )
        if target not in candidates:
            raise DataError(
                path,
                f"target {target!r} is not among the candidates",
                record=f"line {line_no}",
                field="target",
            )
        suffix = _field(path, line_no, record, "suffix", str, required=False) or ""
        features = _field(path, line_no, record, "features", dict, required=False) or {}
        items.append(ClozeExample(item_id, context, target, tuple(candidates), suffix, features))
    if not items:
        raise DataError(path, "holds no records")
    return items


def write_cloze_jsonl(items: Iterable[ClozeExample], path: str | Path) -> int:
    """Write atomically (a temporary file renamed into place); return the record count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    with tmp.open("w", encoding="utf-8") as f:
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
    os.replace(tmp, path)
    return n
