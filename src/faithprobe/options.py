"""Options declared once, as a frozen dataclass, and read from ``-o KEY=VALUE``.

A suite or a generator declares its options as the fields of a frozen dataclass, each made
with :func:`option` (a default and one line of help). Everything else reads that one
declaration: :func:`parse` turns the command line's strings into the fields' types,
:func:`describe` lists them for ``faithprobe list``, and :func:`record` gives the values a
run keeps (``metrics.json``, ``run.json``). A dataclass's ``__post_init__`` checks values
that need more than a type (a name from a fixed list, a range) and raises
:class:`~faithprobe.errors.UsageError`.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

from faithprobe.errors import UsageError, excerpt

T = TypeVar("T")
TRUE, FALSE = ("true", "1", "yes"), ("false", "0", "no")


def option(default: Any, help: str) -> Any:
    """A dataclass field holding an option: its ``default`` and its one-line ``help``."""
    return dataclasses.field(default=default, metadata={"help": help})


def _types(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _scalar(kind: Any, raw: str, key: str) -> Any:
    if kind is bool:
        if raw.lower() not in TRUE + FALSE:
            raise ValueError(raw)
        return raw.lower() in TRUE
    if kind in (int, float, str):
        return kind(raw)
    raise TypeError(f"option {key}: no command-line form for {kind!r}")


def _convert(kind: Any, raw: object, key: str) -> Any:
    """``raw`` as a value of the annotation ``kind``: strings are parsed, anything else is
    taken as given (library use). ``str | None`` takes an empty string as None, and a
    tuple of scalars is written comma-separated (``counts=1,2``)."""
    if not isinstance(raw, str):
        return tuple(raw) if typing.get_origin(kind) is tuple else raw
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (types.UnionType, typing.Union):
        rest = [a for a in args if a is not type(None)]
        if raw == "" and len(rest) < len(args):
            return None
        kind = rest[0]
        origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is tuple:
        parts = [p.strip() for p in raw.split(",") if p.strip()]
        return tuple(_scalar(args[0], p, key) for p in parts)
    return _scalar(kind, raw, key)


def _type_name(kind: Any) -> str:
    """How a value of ``kind`` is written on the command line, for error messages."""
    args = [a for a in typing.get_args(kind) if a is not type(None) and a is not Ellipsis]
    if typing.get_origin(kind) is tuple:
        return f"comma-separated {_type_name(args[0])}s"
    if typing.get_origin(kind) in (types.UnionType, typing.Union):
        return f"{_type_name(args[0])} (or empty for none)"
    return kind.__name__


def parse(cls: type[T], given: Mapping[str, object] | None, owner: str) -> T:
    """An instance of the options dataclass ``cls`` from ``given`` (strings from the
    command line or typed values); ``owner`` names whose options they are in errors (e.g.
    ``"suite 'distractors'"``)."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    kinds = _types(cls)
    values = {}
    for key, raw in (given or {}).items():
        if key not in fields:
            known = ", ".join(fields) or "none"
            raise UsageError(f"{owner} has no option {excerpt(key)}; its options: {known}")
        try:
            values[key] = _convert(kinds[key], raw, key)
        except ValueError:
            raise UsageError(
                f"option {key}={excerpt(raw)}: expected {_type_name(kinds[key])}"
            ) from None
    return cls(**values)


def describe(cls: type) -> Iterator[tuple[str, object, str]]:
    """(name, default, help) of every option of ``cls``."""
    for f in dataclasses.fields(cls):
        yield f.name, f.default, f.metadata.get("help", "")


def record(options: object) -> dict[str, Any]:
    """The option values as plain JSON data (tuples as lists)."""
    return {
        f.name: list(v) if isinstance(v := getattr(options, f.name), tuple) else v
        for f in dataclasses.fields(options)
    }
