"""Options declared once, as a frozen dataclass, and read from ``-o KEY=VALUE``.

A suite or a generator declares its options as the fields of a frozen dataclass, each made
with :func:`option` (a default, one line of help, and for a name from a fixed list its
choices). Everything else reads that one declaration: :func:`parse` turns the command line's
strings into the fields' types and checks the choices, :func:`describe` lists them for
``faithprobe list``, and :func:`record` gives the values a run keeps (``metrics.json``,
``run.json``). A dataclass's ``__post_init__`` checks values that need more than a type and
its choices (a range, one option against another) and raises
:class:`~faithprobe.errors.UsageError`.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from faithprobe.errors import UsageError, excerpt
from faithprobe.json_values import unwritable
from faithprobe.numbers import Bound, out_of_range, spelled

T = TypeVar("T")
TRUE, FALSE = ("true", "1", "yes"), ("false", "0", "no")


def option(
    default: Any,
    help: str,
    choices: Iterable[object] | None = None,
    range: tuple[Bound, Bound] | None = None,
) -> Any:
    """A dataclass field holding an option: its ``default``, its one-line ``help``, for
    an option naming values from a fixed list its ``choices`` (see :func:`check_choice`)
    and for a number its ``range`` (least, most; None: no bound), checked by :func:`parse`
    with NaN and the infinities (refused in every number option, ranged or not)."""
    metadata: dict[str, Any] = {"help": help}
    if range is not None:
        metadata["range"] = range
    if choices is not None:
        metadata["choices"] = choices = tuple(choices)
        if any(v not in choices for v in _chosen(default)):
            raise ValueError(f"default {default!r} is not among the choices {_listed(choices)}")
    return dataclasses.field(default=default, metadata=metadata)


def _chosen(value: object) -> tuple:
    """The values ``value`` names: a tuple's elements, none for None, else itself."""
    return () if value is None else value if isinstance(value, tuple) else (value,)


def _listed(choices: Sequence[object]) -> str:
    return ", ".join(map(repr, choices))


def check_among(value: object, choices: Iterable[object], given: str) -> None:
    """The one "choose from" check of a name a user gives outside an options dataclass (a
    flag, a data set, a budget): refuses ``value`` unless it is one of ``choices``, in one
    line that starts with ``given`` (what was given, e.g. ``--budget 'x'``) and lists them."""
    choices = tuple(choices)
    if value not in choices:
        raise UsageError(f"{given}: choose from {', '.join(map(str, choices))}")


def check_choice(owner: str, key: str, value: object, choices: Sequence[object]) -> None:
    """Refuses ``value`` of the option ``key`` of ``owner`` unless it is one of ``choices``.
    None passes (an optional option left empty); a tuple names one or more of them, each
    once: an empty or repeated selection would build nothing, or the same items twice."""
    chosen = _chosen(value)
    if value is not None and not chosen:
        raise UsageError(f"{owner} option {key} is empty: choose one or more of {_listed(choices)}")
    for v in chosen:
        if v not in choices:
            raise UsageError(f"{owner} option {key}={excerpt(v)}: choose from {_listed(choices)}")
    if twice := [v for i, v in enumerate(chosen) if v in chosen[:i]]:
        raise UsageError(f"{owner} option {key}={excerpt(twice[0])}: given more than once")


def listed(text: str, key: str, owner: str = "") -> tuple[str, ...]:
    """The comma-separated items of ``text``, the value of the option ``key`` (of ``owner``,
    as :func:`parse` names it), stripped; none for an empty text. An empty item
    (``early,,filler``, a comma at either end) or an item given twice is refused: a list
    is read whole or not at all."""
    return _once(_items(text, key, owner), key, owner)


def _items(text: str, key: str, owner: str) -> tuple[str, ...]:
    """:func:`listed` without the check for items given twice."""
    if not text.strip():
        return ()
    items = tuple(part.strip() for part in text.split(","))
    if "" in items:
        where = items.index("") + 1
        raise UsageError(
            f"{_said(key, owner)}={excerpt(text)}: item {where} is empty (a comma too many?)"
        )
    return items


def _once(values: tuple, key: str, owner: str) -> tuple:
    """``values``, none of them given twice."""
    if twice := [v for i, v in enumerate(values) if v in values[:i]]:
        raise UsageError(f"{_said(key, owner)}={excerpt(twice[0])}: given more than once")
    return values


def _said(key: str, owner: str) -> str:
    return f"{owner} option {key}" if owner else f"option {key}"


def _types(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _scalar(kind: Any, raw: str, key: str) -> Any:
    if kind is bool:
        if raw.lower() not in TRUE + FALSE:
            raise ValueError(raw)
        return raw.lower() in TRUE
    if kind is str and (why := unwritable(raw)):
        raise UsageError(f"option {key}={excerpt(raw)}: {why}: it could not be written to run.json")
    if kind in (int, float, str):
        return kind(raw)
    raise TypeError(f"option {key}: no command-line form for {kind!r}")


def _convert(kind: Any, raw: object, key: str, owner: str) -> Any:
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
        items = tuple(_scalar(args[0], p, key) for p in _items(raw, key, owner))
        return _once(items, key, owner)
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
            values[key] = _convert(kinds[key], raw, key, owner)
        except ValueError:
            raise UsageError(
                f"option {key}={excerpt(raw)}: expected {_type_name(kinds[key])}"
            ) from None
        if (choices := fields[key].metadata.get("choices")) is not None:
            check_choice(owner, key, values[key], choices)
    options = cls(**values)
    check_numbers(options)
    return options


def check_numbers(options: object) -> None:
    """Refuse a number option (or a number in a tuple option) of the options dataclass
    instance ``options`` that is NaN, infinite or outside its declared range (called by
    :func:`parse`, and by a dataclass's ``__post_init__`` for library callers)."""
    for f in dataclasses.fields(options):
        value = getattr(options, f.name)
        bounds = f.metadata.get("range", (None, None))
        for number in value if isinstance(value, tuple) else (value,):
            is_number = isinstance(number, int | float) and not isinstance(number, bool)
            if is_number and (problem := out_of_range(number, *bounds)):
                raise UsageError(f"option {f.name}={excerpt(number)}: {problem}")


def describe(cls: type) -> Iterator[tuple[str, object, str]]:
    """(name, default, help) of every option of ``cls``; the help of an option with choices
    ends by listing them."""
    kinds = _types(cls)
    for f in dataclasses.fields(cls):
        text = f.metadata.get("help", "")
        if (choices := f.metadata.get("choices")) is not None:
            many = "one or more" if typing.get_origin(kinds[f.name]) is tuple else "one"
            text += f"; {many} of {_listed(choices)}"
        if (bounds := f.metadata.get("range")) is not None:
            text += f"; {spelled(*bounds)}"
        yield f.name, f.default, text


def bounds(cls: type, name: str) -> tuple[Bound, Bound]:
    """The range declared for the option ``name`` of ``cls`` ((None, None) if none)."""
    field = next(f for f in dataclasses.fields(cls) if f.name == name)
    return field.metadata.get("range", (None, None))


def record(options: object) -> dict[str, Any]:
    """The option values as plain JSON data (tuples as lists)."""
    return {
        f.name: list(v) if isinstance(v := getattr(options, f.name), tuple) else v
        for f in dataclasses.fields(options)
    }
