"""Reading whole-document JSON datasets (SQuAD, CoQA, HotpotQA) with errors that name the
file, the record (as a path into the document, e.g. ``data[3].paragraphs[0].qas[2]``) and
the field.

The readers check as they read (:func:`get`, :func:`within`); each format's declared schema
(:mod:`faithprobe.datasets.schema`) then checks the whole document once more
(``SCHEMA.check(path, "top level", doc)``), so every declared field is enforced, also those
a reader only passes along."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from faithprobe import json_values
from faithprobe.datasets.jsonl import read_text
from faithprobe.datasets.schema import Field
from faithprobe.errors import DataError, excerpt

_MISSING = object()


def load_json(path: Path) -> Any:
    """The JSON document at ``path``, every value in it one faithprobe can use
    (:mod:`faithprobe.json_values`: finite numbers, writable text), else a DataError naming
    the record and field."""
    try:
        return json_values.loads(read_text(path))
    except json_values.Unfit as err:
        raise err.in_file(path) from None
    except json.JSONDecodeError as err:
        raise DataError(
            path, f"not valid JSON ({err.msg}: line {err.lineno}, column {err.colno})"
        ) from err
    except RecursionError:  # nested deeper than the JSON parser can go
        raise DataError(path, "nested too deeply to be data") from None


def get(path: Path, where: str, obj: Any, name: str, kind, default: Any = _MISSING) -> Any:
    """``obj[name]`` checked against ``kind`` (a type or tuple of types); ``default`` if the
    field is absent and a default is given, else a DataError naming ``where`` and ``name``."""
    if not isinstance(obj, dict):
        raise DataError(path, f"expected a JSON object, got {type(obj).__name__}", record=where)
    if name not in obj:
        if default is not _MISSING:
            return default
        raise DataError(path, "missing", record=where, field=name)
    value = obj[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        expected = " or ".join(k.__name__ for k in kinds)
        raise DataError(
            path, f"expected {expected}, got {type(value).__name__}", record=where, field=name
        )
    return value


def record_id(path: Path, where: str, obj: Any, name: str, seen: set[str]) -> tuple[str, str]:
    """The record's id (field ``name``, a string or number) and ``where`` with the id added;
    a DataError if the id was seen before (``seen`` is updated)."""
    value = str(get(path, where, obj, name, (str, int)))
    where = f"{where} (id {value})"
    if value in seen:
        raise DataError(path, f"duplicate id {excerpt(value)}", record=where, field=name)
    seen.add(value)
    return value, where


def within(path: Path, where: str, value: Any, field: Field) -> Any:
    """``value`` of the declared ``field`` (its name's last part names it in the message),
    checked against the field's allowed values or least value; a DataError naming them if
    it is outside."""
    outside = field.outside(value)
    if outside is not None:
        raise DataError(path, outside, record=where, field=field.name.rsplit(".", 1)[-1])
    return value
