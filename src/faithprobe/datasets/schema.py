"""Declared schemas of the files a suite reads with ``--data``: documented and checked.

A :class:`DataSchema` describes one file format: a list of :class:`Field` s (a dotted name
into the record, ``[]`` marking each element of a list, as in ``paragraphs[].qas[].id``;
its type, whether and when it is required, its allowed values, what it means and how it
links records) and of :class:`Rule` s between fields. The same declaration renders the
docs page's table (:meth:`DataSchema.markdown`), prints for ``faithprobe data schema
SUITE`` (:meth:`DataSchema.text`) and checks records at load (:meth:`DataSchema.check`: the
first fault is one :class:`~faithprobe.errors.DataError` naming the file, the record, the
field and the allowed values), so the documentation cannot drift from what is enforced.
(A reader of a whole-document format may check as it reads instead; its suite's tests then
give every declared field a wrong value and expect that one line.)

A format's schema lives beside its reader; a suite lists the formats it reads in a
``schema`` module of its package that registers them in :data:`SCHEMAS` under the suite's
name; the registry finds those modules itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faithprobe import markdown
from faithprobe.errors import DataError, excerpt
from faithprobe.registry import SUITE_GROUP, Registry, import_declared

Record = Mapping[str, Any]


@dataclass(frozen=True)
class Kind:
    """A field's type: its name in the docs and the test a value must pass."""

    name: str
    test: Callable[[Any], bool]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


TEXT = Kind("string", lambda v: isinstance(v, str))
TEXT_OR_NULL = Kind("string or null", lambda v: v is None or isinstance(v, str))
INTEGER = Kind("integer", _is_int)
TEXTS = Kind(
    "list of strings", lambda v: isinstance(v, list | tuple) and all(isinstance(x, str) for x in v)
)
OBJECT = Kind("object", lambda v: isinstance(v, Mapping))
OBJECTS = Kind(
    "list of objects", lambda v: isinstance(v, list) and all(isinstance(x, Mapping) for x in v)
)
BOOLEAN = Kind("true or false", lambda v: isinstance(v, bool))
NUMBER = Kind("number", lambda v: isinstance(v, int | float) and not isinstance(v, bool))
TEXT_OR_INTEGER = Kind("string or integer", lambda v: isinstance(v, str) or _is_int(v))


@dataclass(frozen=True)
class Condition:
    """When a field is required: a test of the record and how the docs say it."""

    says: str
    holds: Callable[[Record], bool]


@dataclass(frozen=True)
class Field:
    """One field: ``name`` is dotted (``features.setting``); ``required`` is True, False or
    a :class:`Condition`; ``allowed`` lists the only values accepted (empty: any of the
    type); ``minimum`` bounds an integer; ``values`` says in words which values a
    :class:`Rule` accepts where neither can (``0 up to the number of choices − 1``);
    ``links`` says which other record it names."""

    name: str
    kind: Kind
    meaning: str
    required: bool | Condition = False
    allowed: tuple[Any, ...] = ()
    minimum: int | None = None
    links: str = ""
    values: str = ""

    def needed(self, record: Record) -> bool:
        if isinstance(self.required, Condition):
            return self.required.holds(record)
        return self.required

    def says_required(self) -> str:
        if isinstance(self.required, Condition):
            return self.required.says
        return "yes" if self.required else "no"

    def outside(self, value: Any) -> str | None:
        """The message for a ``value`` outside the allowed values or below the least one
        (None when it is allowed)."""
        if (self.allowed and value not in self.allowed) or (
            self.minimum is not None and value < self.minimum
        ):
            return f"{excerpt(value)} is not allowed (allowed values: {self.says_values()})"
        return None

    def says_values(self) -> str:
        if self.values:
            return self.values
        if self.allowed:
            return ", ".join(_shown(v) for v in self.allowed)
        if self.minimum is not None:
            return f"≥ {self.minimum}"
        return "any"


@dataclass(frozen=True)
class Rule:
    """A check between fields: ``fault(record)`` is the message when the record breaks it
    (None when it keeps it); ``field`` is the one the message names; ``says`` is the rule
    as the docs state it."""

    field: str
    says: str
    fault: Callable[[Record], str | None]


@dataclass(frozen=True)
class DataSchema:
    """What one file format's records hold (module docstring)."""

    name: str  # the format, e.g. "cloze items (JSON lines)"
    record: str  # what a record is, e.g. "one cloze item per JSON line"
    fields: tuple[Field, ...]
    rules: tuple[Rule, ...] = ()
    links: str = ""  # how records link to one another, in a sentence or two

    def check(self, path: str | Path, name: str, record: Record) -> None:
        """Raise a :class:`DataError` for the first field or rule ``record`` (called
        ``name`` in the message) breaks."""
        for f in self.fields:
            for where, present, value in locate(record, f.name):
                if not present:
                    if f.needed(record):
                        raise DataError(
                            path, f"missing (required{_when(f)})", record=name, field=where
                        )
                    continue
                if not f.kind.test(value):
                    got = f"{excerpt(value)} is not a {f.kind.name}"
                    raise DataError(path, got, record=name, field=where)
                outside = f.outside(value)
                if outside is not None:
                    raise DataError(path, outside, record=name, field=where)
        for rule in self.rules:
            fault = rule.fault(record)
            if fault is not None:
                raise DataError(path, f"{fault} ({rule.says})", record=name, field=rule.field)

    def markdown(self) -> str:
        """The schema as the docs page shows it: a table of fields, the rules, the links."""
        rows = [
            (
                f"`{f.name}`",
                markdown.text(f.kind.name),
                markdown.text(f.says_required()),
                markdown.text(f.says_values()),
                markdown.text(" ".join(x for x in (f.meaning, f.links) if x)),
            )
            for f in self.fields
        ]
        header = ("field", "type", "required", "allowed values", "meaning")
        lines = [f"**{markdown.text(self.name)}**: {markdown.text(self.record)}.", ""]
        lines += markdown.table(header, rows)
        if self.rules:
            lines += ["", "Rules between fields:", ""]
            lines += [f"- {markdown.text(r.says)}" for r in self.rules]
        if self.links:
            lines += ["", f"Links: {markdown.text(self.links)}"]
        return "\n".join(lines) + "\n"

    def text(self) -> str:
        """The schema as plain text, one block per field (``faithprobe data schema``)."""
        lines = [f"{self.name}: {self.record}.", ""]
        for f in self.fields:
            lines.append(f"{f.name}  ({f.kind.name}; required: {f.says_required()})")
            lines.append(f"    allowed: {f.says_values()}")
            lines += [f"    {x}" for x in (f.meaning, f.links) if x]
        if self.rules:
            lines += ["", "rules:"] + [f"  - {r.says}" for r in self.rules]
        if self.links:
            lines += ["", f"links: {self.links}"]
        return "\n".join(lines) + "\n"


def locate(record: Record, dotted: str) -> list[tuple[str, bool, Any]]:
    """Every place the field ``dotted`` names in ``record``: ``(where, present, value)``,
    ``where`` with each ``[]`` given its index (``qas[2].id``). A place under a parent that is
    absent or of the wrong type is skipped: the parent's own field reports it."""
    places: list[tuple[str, Any]] = [("", record)]
    *parents, last = dotted.split(".")
    for part in parents:
        name, each = part.removesuffix("[]"), part.endswith("[]")
        places = [
            (f"{where}{name}", value[name])
            for where, value in places
            if isinstance(value, Mapping) and name in value
        ]
        if each:
            places = [
                (f"{where}[{i}]", item)
                for where, items in places
                if isinstance(items, list)
                for i, item in enumerate(items)
            ]
        places = [(f"{where}.", value) for where, value in places]
    found = []
    for where, value in places:
        if isinstance(value, Mapping):
            present = last in value
            found.append((f"{where}{last}", present, value.get(last)))
    return found


def _shown(value: Any) -> str:
    return "null" if value is None else str(value)


def _when(f: Field) -> str:
    return f" {f.required.says}" if isinstance(f.required, Condition) else ""


def _discover(registry: Registry) -> None:
    """The formats the suites declare (a ``schema`` module in a suite's package)."""
    import_declared(SUITE_GROUP, "schema")


SCHEMAS: Registry[tuple[DataSchema, ...]] = Registry("data schema", discover=_discover)


def schemas_for(suite: str) -> tuple[DataSchema, ...]:
    """The formats suite ``suite`` reads with ``--data`` (empty if it declares none)."""
    return SCHEMAS.get(suite) if suite in SCHEMAS else ()


def declared() -> Sequence[str]:
    """The suites that declare their formats."""
    return SCHEMAS.names()


def suite_markdown(suite: str) -> str:
    """Every format of ``suite`` as its docs page shows them, one after another."""
    return "\n".join(s.markdown() for s in schemas_for(suite))


def suite_text(suite: str) -> str:
    """Every format of ``suite`` as plain text (``faithprobe data schema SUITE``)."""
    head = f"--data formats of the {suite} suite\n\n"
    return head + "\n".join(s.text() for s in schemas_for(suite))
