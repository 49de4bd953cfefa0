"""Reading text files and JSON lines with errors that name the file, the line and the
field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from faithprobe import json_values
from faithprobe.datasets.schema import DataSchema
from faithprobe.errors import DataError

BOM = "\ufeff"


def read_text(path: Path, tab_separated: bool = False) -> str:
    """The file's text, read as UTF-8. Refused in one line: a FIFO or a device (which would
    hang or never end), a folder, bytes that are not UTF-8 (the line they are on and, in a
    ``tab_separated`` file, the column's name), and a byte-order mark at the start (a TSV's
    first column would be named ``\ufeffsentence``, and JSON takes none: the file is to be
    saved as UTF-8 without one)."""
    if path.exists() and not path.is_file() and not path.is_dir():
        raise DataError(path, "not a regular file (a FIFO, a device or a socket)")
    if path.is_dir():
        raise DataError(path, "is a folder, not a file")
    try:
        data = path.read_bytes()
    except OSError as err:
        raise DataError(path, f"cannot read: {err.strerror or err}") from err
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        field = _column_at(data, err.start) if tab_separated and line > 1 else None
        raise DataError(path, f"not UTF-8 text (byte {data[err.start]:#04x}: {err.reason})",
                        record=f"line {line}", field=field) from None  # fmt: skip
    refuse_byte_order_mark(path, text)
    return text


def _column_at(data: bytes, at: int) -> str | None:
    """The header's name of the tab-separated column that byte ``at`` is in (None past it)."""
    header = data.partition(b"\n")[0].decode("utf-8", "replace").split("\t")
    column = data[data.rfind(b"\n", 0, at) + 1 : at].count(b"\t")
    return header[column].strip() if column < len(header) else None


def refuse_byte_order_mark(path: Path, text: str) -> None:
    """One line refusing a text that begins with a byte-order mark (see ``read_text``)."""
    if text.startswith(BOM):
        raise DataError(path, "begins with a byte-order mark (U+FEFF): save it as UTF-8 "
                        "without one", record="line 1")  # fmt: skip


def iter_records(path: Path) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for every non-blank line; blank lines are skipped."""
    n = 0
    for line_no, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json_values.loads(line)
        except json_values.Unfit as err:
            raise err.in_file(path, f"line {line_no}") from None
        except json.JSONDecodeError as err:
            raise DataError(
                path, f"not valid JSON ({err.msg}: column {err.colno})", record=f"line {line_no}"
            ) from err
        if not isinstance(record, dict):
            raise DataError(path, "expected a JSON object", record=f"line {line_no}")
        n += 1
        yield line_no, record
    if n == 0:
        raise DataError(path, "holds no records")


def checked_records(path: Path, schema: DataSchema) -> Iterator[tuple[int, dict]]:
    """:func:`iter_records`, each record checked against ``schema`` (named ``line N`` in
    the message) before it is handed on."""
    for line, record in iter_records(path):
        schema.check(path, f"line {line}", record)
        yield line, record


def field(path: Path, line: int, record: dict, name: str, kind, required: bool = True):
    """``record[name]`` checked against ``kind`` (a type or tuple of types)."""
    if name not in record:
        if required:
            raise DataError(path, "missing", record=f"line {line}", field=name)
        return None
    value = record[name]
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _kinds(kind)):
        expected = " or ".join(k.__name__ for k in _kinds(kind))
        raise DataError(
            path,
            f"expected {expected}, got {type(value).__name__}",
            record=f"line {line}",
            field=name,
        )
    return value


def _kinds(kind) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def string_list(path: Path, line: int, record: dict, name: str) -> list[str]:
    """A required non-empty list of non-empty strings."""
    values = field(path, line, record, name, list)
    if not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise DataError(
            path,
            "must be a non-empty list of non-empty strings",
            record=f"line {line}",
            field=name,
        )
    return values
