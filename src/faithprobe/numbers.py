"""The one check of a number a user gives: finite and within its declared range.

A range is declared once, beside the option (a typer option through :func:`number_option`,
a backend setting or suite option through :func:`faithprobe.options.option`), and read
from there by the check, by ``--help`` and by ``faithprobe list``. NaN and the infinities
are refused everywhere: no count, time or fraction faithprobe takes is meant by them, and
each has ended a run in a traceback (``time.monotonic() + inf``, ``sleep(nan)``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

Bound = int | float | None
NAMES = {int: "an integer", float: "a number"}
HOUR, DAY = 3600, 86400  # seconds: the longest waits faithprobe's options take


def spelled(low: Bound, high: Bound) -> str:
    """The range as words: ``from 0.01 to 3600``, ``at least 1``, ``any finite number``."""
    if low is not None and high is not None:
        return f"from {low:g} to {high:g}"
    if low is not None:
        return f"at least {low:g}"
    if high is not None:
        return f"at most {high:g}"
    return "any finite number"


def out_of_range(value: float, low: Bound, high: Bound) -> str | None:
    """Why ``value`` is refused (NaN, an infinity, outside ``[low, high]``), None if not."""
    if (
        not math.isfinite(value)
        or (low is not None and value < low)
        or (high is not None and value > high)
    ):
        return f"expected a number {spelled(low, high)}"
    return None


def number_argument(kind: type, low: Bound, high: Bound) -> Callable[[str], Any]:
    """A typer ``parser`` reading a ``kind`` (int or float) and refusing it at parse, in
    click's one line naming the option, when :func:`out_of_range` says so."""

    def parse(text: str) -> Any:
        import typer  # the command line's; the checks above serve library callers too

        try:
            value = kind(text)
        except (TypeError, ValueError):
            raise typer.BadParameter(f"{text!r}: expected {NAMES[kind]}") from None
        if problem := out_of_range(value, low, high):
            raise typer.BadParameter(f"{text!r}: {problem}")
        return value

    parse.__name__ = kind.__name__
    return parse


def ranged(low: Bound, high: Bound, kind: type = float) -> dict[str, Any]:
    """The typer option settings of a number in ``[low, high]``: checked at parse
    (:func:`number_argument`), the range shown by ``--help``."""
    return {"parser": number_argument(kind, low, high), "min": low, "max": high}


def number_option(low: Bound, high: Bound, kind: type = float, **kwargs: Any):
    """A typer option holding a number in ``[low, high]`` (:func:`ranged`)."""
    import typer

    return typer.Option(**ranged(low, high, kind), **kwargs)
