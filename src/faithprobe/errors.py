"""Errors a user can act on: each names what was wrong and where."""

from __future__ import annotations

from pathlib import Path


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
    """An argument that makes no sense (unknown suite, bad option value)."""
