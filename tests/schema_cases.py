"""Bad-value cases generated from a declared ``--data`` schema
(:mod:`faithprobe.datasets.schema`), so a field declared later is covered without a new
case: every field with allowed values (or a least value) given a value outside them, every
required field removed, each at the first place the field occurs in a good record."""

from __future__ import annotations

import copy
import re
from typing import Any

from faithprobe.datasets.schema import DataSchema, Field, locate

WRONG = "wrong-value"  # no schema allows it
_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def bounded(schema: DataSchema) -> list[Field]:
    """The fields with allowed values or a least value."""
    return [f for f in schema.fields if f.allowed or f.minimum is not None]


def required(schema: DataSchema) -> list[Field]:
    """The fields every record must hold (not those required only under a condition)."""
    return [f for f in schema.fields if f.required is True]


def outside(field: Field) -> Any:
    """A value of the field's type that its allowed values (or least value) exclude."""
    if field.allowed:
        return WRONG if isinstance(field.allowed[0], str) else -987
    assert field.minimum is not None
    return field.minimum - 1


def first_place(record: Any, field: Field) -> str:
    """Where ``field`` first occurs in ``record`` (``data[0].paragraphs[0].context``)."""
    places = [where for where, present, _ in locate(record, field.name) if present]
    assert places, f"the good record holds no {field.name}"
    return places[0]


def _steps(where: str) -> list[str | int]:
    return [name if name else int(index) for name, index in _STEP.findall(where)]


def with_value(record: Any, where: str, value: Any) -> Any:
    """A copy of ``record`` with the value at ``where`` replaced."""
    changed = copy.deepcopy(record)
    *parents, last = _steps(where)
    node = changed
    for step in parents:
        node = node[step]
    node[last] = value
    return changed


def without(record: Any, where: str) -> Any:
    """A copy of ``record`` with the field at ``where`` removed."""
    changed = copy.deepcopy(record)
    *parents, last = _steps(where)
    node = changed
    for step in parents:
        node = node[step]
    del node[last]
    return changed


# -- text faithprobe cannot write and numbers it cannot take (test_cli_fuzz_formats) --------

SURROGATE = "a\ud800b"  # a lone surrogate: JSON can spell it (\ud800), no UTF-8 file hold it
BOM = "\ufeff"  # a byte-order mark at the start of a text file
NOT_UTF8_BYTES = b"caf\xed\xa0\x80"  # a surrogate encoded as UTF-8 would be: not UTF-8
_NUMBER = re.compile(r'"@@number (.+?)@@"')


def unfit_numbers() -> list[tuple[str, str]]:
    """(label, stand-in) of each number faithprobe refuses in a JSON file; a stand-in is a
    string :func:`number_literal` turns into the number's literal once the JSON is written."""
    literals = [("1e400", "1e400"), ("nan", "NaN"), ("-infinity", "-Infinity"),
                ("31-digits", "1" + "0" * 30)]  # fmt: skip
    return [(label, f"@@number {literal}@@") for label, literal in literals]


def number_literal(text: str) -> str:
    """JSON ``text`` with each stand-in of :func:`unfit_numbers` written as its literal."""
    return _NUMBER.sub(lambda m: m.group(1), text)
