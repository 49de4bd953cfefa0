"""JSON read so that every value in it is one faithprobe can use and write again.

Python's JSON reader takes more than faithprobe can use: ``NaN`` and ``Infinity``, a number
such as ``1e400`` that overflows to an infinity, an integer of any size (``10**30``; over
4,300 digits it raises a bare ``ValueError``) and a string holding a lone surrogate
(``"\\ud800"``), which no UTF-8 file can hold, so a run that takes one loses its results when
it writes them. :func:`loads` reads as ``json.loads`` does, then raises :class:`Unfit` at the
first such value, naming where it is in the document (its path, as ``effects[0].value``).

faithprobe writes no such value itself (a missing number is null: :mod:`faithprobe.atomic`),
so a file it wrote that holds one was changed outside it; a data file that holds one cannot
be run. Either way it is refused, never believed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

from faithprobe.errors import DataError
from faithprobe.numbers import INTEGERS

# a surrogate written as an escape: the only way one gets into text decoded as strict UTF-8
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")

Step = str | int


class Unfit(ValueError):
    """A value :func:`loads` refuses: ``steps`` is its path in the document (keys and list
    indices), ``message`` says what is wrong with it."""

    def __init__(self, steps: tuple[Step, ...], message: str) -> None:
        self.steps, self.message = steps, message
        super().__init__(f"{dotted(steps) or 'top level'}: {message}")

    def in_file(self, path: str | Path, record: str | None = None) -> DataError:
        """The refusal as a :class:`DataError` naming the file ``path``, the value's
        container as the record (``effects[0]``; ``top level``) and its key as the field;
        ``record``: what the document is in the file (``line 3`` of JSON lines), the value's
        whole path then the field."""
        if record is not None:
            return DataError(path, self.message, record=record, field=dotted(self.steps) or None)
        parent, name = dotted(self.steps[:-1]) or "top level", dotted(self.steps[-1:])
        return DataError(path, self.message, record=parent, field=name or None)


def dotted(steps: tuple[Step, ...]) -> str:
    """``('effects', 0, 'value')`` as ``effects[0].value``."""
    out = ""
    for step in steps:
        out += f"[{step}]" if isinstance(step, int) else f".{step}" if out else step
    return out


class _Refused:
    """A number :func:`loads` does not take, kept in the document until it is located."""

    def __init__(self, text: str, why: str) -> None:
        self.message = f"{text} is {why}"


def unwritable(text: str) -> str | None:
    """Why ``text`` cannot be written as UTF-8 (a lone surrogate), None when it can."""
    if text.isascii() or (found := _SURROGATE.search(text)) is None:
        return None
    return (
        f"holds a lone surrogate (U+{ord(found.group()):04X} at character {found.start() + 1}), "
        "which no UTF-8 file can hold"
    )


def loads(text: str, constants: Collection[str] = ()) -> Any:
    """``json.loads(text)``, refusing (:class:`Unfit`) NaN, the infinities, numbers that
    overflow to one, integers outside :data:`~faithprobe.numbers.INTEGERS` and strings (keys too) holding a
    lone surrogate; ``constants``: those of ``NaN``, ``Infinity`` and ``-Infinity`` taken as
    the floats they spell (where faithprobe's own writer puts them: the answer cache).
    Malformed JSON raises ``json.JSONDecodeError`` as ``json.loads`` does."""
    refused: list[_Refused] = []

    def refuse(text: str, why: str) -> _Refused:
        refused.append(_Refused(text, why))
        return refused[-1]

    def number(text: str) -> Any:
        value = float(text)
        return value if math.isfinite(value) else refuse(text, "not a finite number")

    def integer(text: str) -> Any:
        low, high = INTEGERS
        if len(text) <= 20 and low <= (value := int(text)) <= high:
            return value
        shown = text if len(text) <= 24 else f"{text[:12]}…({len(text.lstrip('-'))} digits)"
        return refuse(shown, "outside the integers faithprobe reads (-2**63 to 2**63 - 1)")

    doc = json.loads(
        text,
        parse_float=number,
        parse_int=integer,
        parse_constant=lambda name: (
            float(name) if name in constants else refuse(name, "not a finite number")
        ),
    )
    if refused or _SURROGATE_ESCAPE.search(text):
        _first_unfit(doc, ())
    return doc


def _first_unfit(value: Any, steps: tuple[Step, ...]) -> None:
    """Raise :class:`Unfit` for the first refused number or unwritable string in ``value``
    (document order)."""
    if isinstance(value, _Refused):
        raise Unfit(steps, value.message)
    if isinstance(value, str):
        if why := unwritable(value):
            raise Unfit(steps, why)
    elif isinstance(value, dict):
        for key, item in value.items():
            if why := unwritable(key):
                raise Unfit((*steps, key), f"its name {why}")
            _first_unfit(item, (*steps, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _first_unfit(item, (*steps, i))
