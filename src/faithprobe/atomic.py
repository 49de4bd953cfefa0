"""Files written whole or not at all.

Every writer here writes to a temporary sibling of the target (``.NAME.tmp-<pid>``, same
folder, so the same file system), flushes it to disk and renames it over the target with
``os.replace``: a reader, or a run killed half way, sees the old file or the new one, never
a part of either. On an error the temporary file is removed and the target is untouched.

The writers only move bytes; what goes in them (JSON indentation, a final newline) is the
caller's, except :func:`write_json`, the one JSON format of run and model folders.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


@contextmanager
def replacing(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write; when the block ends without an error, the
    file there is flushed to disk and renamed onto ``path``."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        yield tmp
        with tmp.open("rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def open_text(path: str | Path) -> Iterator[IO[str]]:
    """A UTF-8 text file to write ``path`` through, line by line (see :func:`replacing`)."""
    with replacing(path) as tmp, tmp.open("w", encoding="utf-8") as f:
        yield f


def write_text(path: str | Path, text: str) -> None:
    """``text`` as UTF-8."""
    with replacing(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def _clean(value):
    """JSON without NaN: NaN and infinities become null; numpy scalars become Python's."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item"):
        return _clean(value.item())
    return value


def json_text(payload: object) -> str:
    """``payload`` as JSON indented by 2, non-ASCII kept, NaN as null, a final newline."""
    return json.dumps(_clean(payload), indent=2, ensure_ascii=False) + "\n"


def write_json(path: str | Path, payload: object) -> None:
    """``payload`` as :func:`json_text`."""
    write_text(path, json_text(payload))


def write_parquet(path: str | Path, frame) -> None:
    """A pandas frame as Parquet, without its index."""
    with replacing(path) as tmp:
        frame.to_parquet(tmp, index=False)
