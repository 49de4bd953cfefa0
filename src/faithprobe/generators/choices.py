"""The check every generator's list options share: each names known values, at least one,
each once. An empty list would build base items only (or nothing at all), and a value given
twice would write every item of it twice under the same id, a file no reader takes; both
are refused when the options are read, before anything is generated."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from faithprobe.errors import UsageError, excerpt


def check_choices(lists: Mapping[str, tuple[Sequence, Sequence]]) -> None:
    """``lists``: option name -> (the values given, the values allowed)."""
    for name, (given, allowed) in lists.items():
        if not given:
            raise UsageError(f"{name}: empty; give at least one of {list(allowed)}")
        if bad := [v for v in given if v not in allowed]:
            raise UsageError(f"{name}: unknown {excerpt(bad)}; choose from {list(allowed)}")
        if twice := list(dict.fromkeys(v for v in given if list(given).count(v) > 1)):
            raise UsageError(f"{name}: {excerpt(twice)} given more than once")
