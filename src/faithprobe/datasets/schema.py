"""Declared schemas of the records a suite reads with ``--data``: documented and checked.

A :class:`DataSchema` is a list of :class:`Field` s (a dotted name into the record, its
type, whether and when it is required, its allowed values, what it means and how it links
records) and of :class:`Rule` s between fields. The same declaration renders the docs
page's table (:meth:`DataSchema.markdown`), prints for ``faithprobe data schema SUITE``
(:meth:`DataSchema.text`) and checks each record at load (:meth:`DataSchema.check`: the
first fault is one :class:`~faithprobe.errors.DataError` naming the file, the record, the
field and the allowed values), so the documentation cannot drift from what is enforced.

A suite declares its schema in a ``schema`` module of its package that registers it in
:data:`SCHEMAS` under the suite's name; the registry finds those modules itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faithprobe import markdown
from faithprobe.errors import DataError, excerpt
from faithprobe.registry import Registry, import_submodules

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


@dataclass(frozen=True)
class Condition:
    """When a field is required: a test of the record and how the docs say it."""

    says: str
    holds: Callable[[Record], bool]


@dataclass(frozen=True)
class Field:
    """One field: ``name`` is dotted (``features.setting``); ``required`` is True, False or
    a :class:`Condition`; ``allowed`` lists the only values accepted (empty: any of the
    type); ``minimum`` bounds an integer; ``links`` says which other record it names."""

    name: str
    kind: Kind
    meaning: str
    required: bool | Condition = False
    allowed: tuple[Any, ...] = ()
    minimum: int | None = None
    links: str = ""

    def needed(self, record: Record) -> bool:
        if isinstance(self.required, Condition):
            return self.required.holds(record)
        return self.required

    def says_required(self) -> str:
        if isinstance(self.required, Condition):
            return self.required.says
        return "yes" if self.required else "no"

    def says_values(self) -> str:
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
    """What one suite's ``--data`` records hold (module docstring)."""

    suite: str
    record: str  # what a record is, e.g. "one cloze item per JSON line"
    fields: tuple[Field, ...]
    rules: tuple[Rule, ...] = ()
    links: str = ""  # how records link to one another, in a sentence or two

    def check(self, path: str | Path, name: str, record: Record) -> None:
        """Raise a :class:`DataError` for the first field or rule ``record`` (called
        ``name`` in the message) breaks."""
        for f in self.fields:
            present, value = lookup(record, f.name)
            if not present:
                if f.needed(record):
                    raise DataError(
                        path, f"missing (required{_when(f)})", record=name, field=f.name
                    )
                continue
            if not f.kind.test(value):
                got = f"{excerpt(value)} is not a {f.kind.name}"
                raise DataError(path, got, record=name, field=f.name)
            outside = (f.allowed and value not in f.allowed) or (
                f.minimum is not None and value < f.minimum
            )
            if outside:
                got = f"{excerpt(value)} is not allowed (allowed values: {f.says_values()})"
                raise DataError(path, got, record=name, field=f.name)
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
        lines = [f"Records: {markdown.text(self.record)}.", ""]
        lines += markdown.table(header, rows)
        if self.rules:
            lines += ["", "Rules between fields:", ""]
            lines += [f"- {markdown.text(r.says)}" for r in self.rules]
        if self.links:
            lines += ["", f"Links: {markdown.text(self.links)}"]
        return "\n".join(lines) + "\n"

    def text(self) -> str:
        """The schema as plain text, one block per field (``faithprobe data schema``)."""
        lines = [f"--data schema of the {self.suite} suite: {self.record}.", ""]
        for f in self.fields:
            lines.append(f"{f.name}  ({f.kind.name}; required: {f.says_required()})")
            lines.append(f"    allowed: {f.says_values()}")
            lines += [f"    {x}" for x in (f.meaning, f.links) if x]
        if self.rules:
            lines += ["", "rules:"] + [f"  - {r.says}" for r in self.rules]
        if self.links:
            lines += ["", f"links: {self.links}"]
        return "\n".join(lines) + "\n"


def lookup(record: Record, dotted: str) -> tuple[bool, Any]:
    """(whether ``record`` holds the dotted field, its value)."""
    value: Any = record
    for part in dotted.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return False, None
        value = value[part]
    return True, value


def _shown(value: Any) -> str:
    return "null" if value is None else str(value)


def _when(f: Field) -> str:
    return f" {f.required.says}" if isinstance(f.required, Condition) else ""


def _discover(registry: Registry) -> None:
    """The schemas the suites declare (a ``schema`` module in a suite's package)."""
    import_submodules("faithprobe.suites", only="schema")


SCHEMAS: Registry[DataSchema] = Registry("data schema", discover=_discover)


def schema_for(suite: str) -> DataSchema | None:
    """The schema suite ``suite`` declares, or None."""
    return SCHEMAS.get(suite) if suite in SCHEMAS else None


def declared() -> Sequence[str]:
    """The suites that declare a schema."""
    return SCHEMAS.names()
