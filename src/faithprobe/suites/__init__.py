"""Registry of suites, one per published method."""

from __future__ import annotations

from faithprobe.errors import UsageError
from faithprobe.suites.base import Suite
from faithprobe.suites.distractors import DistractorsSuite

SUITES: dict[str, type[Suite]] = {"distractors": DistractorsSuite}


def get_suite(name: str) -> Suite:
    try:
        return SUITES[name]()
    except KeyError:
        raise UsageError(f"unknown suite {name!r}; known: {', '.join(sorted(SUITES))}") from None


__all__ = ["SUITES", "Suite", "get_suite"]
