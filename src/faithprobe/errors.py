"""Errors a user can act on: each names what was wrong and where.

The command line prints these as one plain line and exits with status 2; any other
exception is a bug and keeps its traceback. Values from data or arguments are echoed
through :func:`excerpt`, so a 5 MB field makes a message of a readable length.
"""

from __future__ import annotations

from pathlib import Path

EXCERPT_CHARS = 80


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """``repr(value)`` cut to about ``limit`` characters, saying how long it was. The cut is
    in the middle: a long path keeps its folder's beginning and its file's name."""
    text = repr(value)
    if len(text) <= limit:
        return text
    size = f" ({len(value):,} characters)" if isinstance(value, str) else ""
    tail = (limit - 1) * 2 // 5
    return f"{text[: limit - 1 - tail]}…{text[len(text) - tail :]}{size}"


class FaithprobeError(Exception):
    """Base class for errors reported to the user without a traceback."""


class DataError(FaithprobeError):
    """A bad input file or record: names the file, the record and the field."""

    def __init__(
        self,
        path: str | Path,
        message: str,
        *,
        record: int | str | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path)
        self.record = record
        self.field = field
        where = [self.path]
        if record is not None:
            where.append(f"record {record}")
        if field is not None:
            where.append(f"field '{field}'")
        super().__init__(f"{': '.join(where)}: {message}")


class ModelError(FaithprobeError):
    """A model that cannot be found or loaded."""


class UsageError(FaithprobeError):
    """An argument or option that makes no sense (unknown suite, bad option value, a model
    asked for what it cannot answer, an output folder that is not ours)."""
