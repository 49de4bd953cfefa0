"""Registry of suites, one per published method."""

from __future__ import annotations

from collections.abc import Mapping

from faithprobe.errors import UsageError, excerpt
from faithprobe.suite import Suite
from faithprobe.suites.confidence_shift import ConfidenceShiftSuite
from faithprobe.suites.distractors import DistractorsSuite
from faithprobe.suites.faithfulness import FaithfulnessSuite
from faithprobe.suites.natural_logic import NaturalLogicSuite
from faithprobe.suites.right_reasons import RightReasonsSuite

SUITES: dict[str, type[Suite]] = {
    "distractors": DistractorsSuite,
    "confidence-shift": ConfidenceShiftSuite,
    "natural-logic": NaturalLogicSuite,
    "faithfulness": FaithfulnessSuite,
    "right-reasons": RightReasonsSuite,
}


def _parse(cls: type[Suite], key: str, raw) -> object:
    if key not in cls.options:
        known = ", ".join(sorted(cls.options)) or "none"
        raise UsageError(
            f"suite {excerpt(cls.name)} has no option {excerpt(key)}; its options: {known}"
        )
    kind = cls.options[key][0]
    if not isinstance(raw, str) or kind is str:
        return raw
    try:
        if kind is bool:
            if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(raw)
            return raw.lower() in ("true", "1", "yes")
        return kind(raw)
    except ValueError:
        raise UsageError(f"option {key}={excerpt(raw)}: expected {kind.__name__}") from None


def get_suite(name: str, options: Mapping[str, object] | None = None) -> Suite:
    """The suite ``name``, configured by ``options`` (strings from the command line are
    converted to the option's type)."""
    try:
        cls = SUITES[name]
    except KeyError:
        raise UsageError(
            f"unknown suite {excerpt(name)}; known: {', '.join(sorted(SUITES))}"
        ) from None
    return cls(**{k: _parse(cls, k, v) for k, v in (options or {}).items()})


__all__ = ["SUITES", "Suite", "get_suite"]
