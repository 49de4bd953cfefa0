"""The one check of a number a user gives: finite and within its declared range.

A range is declared once, beside the option (a typer option through :func:`number_option`,
a backend setting or suite option through :func:`faithprobe.options.option`), and read
from there by the check, by ``--help`` and by ``faithprobe list``. NaN and the infinities
are refused everywhere: no count, time or fraction faithprobe takes is meant by them, and
each has ended a run in a traceback (``time.monotonic() + inf``, ``sleep(nan)``). An
integer lies in :data:`INTEGERS` whatever its own range says (what numpy, pandas and SQLite
hold: ``max_new_tokens`` of 30 digits was taken, and overflowed where torch met it); the
command line's integer options without a most of their own are given that one
(:func:`bound_integers`), so every integer option has a stated range.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

Bound = int | float | None
NAMES = {int: "an integer", float: "a number"}
HOUR, DAY = 3600, 86400  # seconds: the longest waits faithprobe's options take
INTEGERS = (-(2**63), 2**63 - 1)  # the integers faithprobe takes anywhere (module docstring)
TOKENS = 10_000_000  # the most tokens a length option takes: no model reads more
SEEDS = (0, 2**32 - 1)  # numpy's legacy seeding (transformers.set_seed) takes no more


def integer_range(low: Bound, high: Bound) -> tuple[int | float, int | float]:
    """An integer option's range ``[low, high]`` within :data:`INTEGERS`."""
    least, most = INTEGERS
    return (least if low is None else max(low, least), most if high is None else min(high, most))


def spelled(low: Bound, high: Bound) -> str:
    """The range as words: ``from 0.01 to 3600``, ``at least 1``, ``any finite number``."""
    if low is not None and high is not None:
        return f"from {_shown(low)} to {_shown(high)}"
    if low is not None:
        return f"at least {_shown(low)}"
    if high is not None:
        return f"at most {_shown(high)}"
    return "any finite number"


def _shown(bound: int | float) -> str:
    """An integer in full (``9223372036854775807``), another number as ``%g`` has it."""
    return str(bound) if isinstance(bound, int) else f"{bound:g}"


def out_of_range(value: float, low: Bound, high: Bound) -> str | None:
    """Why ``value`` is refused (NaN, an infinity, outside ``[low, high]``, an integer
    outside :data:`INTEGERS`), None if not."""
    if isinstance(value, int) and not isinstance(value, bool):
        low, high = integer_range(low, high)
    if (
        not math.isfinite(value)
        or (low is not None and value < low)
        or (high is not None and value > high)
    ):
        return f"expected a number {spelled(low, high)}"
    return None


def bound_integers(command: Any) -> None:
    """Give every integer option of the typer command ``command`` (and of its subcommands)
    without a least or most of its own (or a parser, which checks its own) the one of
    :data:`INTEGERS`: a 30-digit value is then refused in click's one line, and ``--help``
    shows the range."""
    import typing

    for sub in getattr(command, "commands", {}).values():
        bound_integers(sub)
    for param in getattr(command, "params", ()):
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or descriptor.parameter_info.parser is not None:
            continue
        kind = descriptor.annotation
        while args := [a for a in typing.get_args(kind) if a is not type(None)]:
            kind = args[0]  # int | None, list[int]: int
        if kind is int:
            info = descriptor.parameter_info
            info.min, info.max = integer_range(info.min, info.max)
            param.min, param.max = info.min, info.max
            param._runtime_param = None  # typer builds its check from these on first use


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
