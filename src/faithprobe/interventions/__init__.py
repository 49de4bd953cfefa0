"""Registry of interventions: names map to :class:`Intervention` objects.

Modules in this package register their interventions when imported; :func:`get` and
:func:`available` import them all first.
"""

from __future__ import annotations

import importlib

from faithprobe.expectations import Expectation
from faithprobe.interventions.base import Intervention, InterventionFn, Pair

__all__ = ["Intervention", "Pair", "available", "get", "register"]

_REGISTRY: dict[str, Intervention] = {}
_MODULES = (
    "attractors",
    "no_correct_choice",
    "feature_swaps",
    "deletion",
    "negation",
    "comparative",
    "coreference",
)


def register(name: str, *, family: str, changes: str, holds: str, expectation: Expectation):
    """Decorator: register ``fn(example, rng, **params) -> Outcome`` under ``name``."""

    def wrap(fn: InterventionFn) -> InterventionFn:
        if name in _REGISTRY:
            raise ValueError(f"intervention {name!r} registered twice")
        _REGISTRY[name] = Intervention(name, family, changes, holds, expectation, fn)
        return fn

    return wrap


def _load_all() -> None:
    for module in _MODULES:
        importlib.import_module(f"{__name__}.{module}")


def get(name: str) -> Intervention:
    _load_all()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise KeyError(f"unknown intervention {name!r}; known: {known}") from None


def available() -> list[Intervention]:
    _load_all()
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]
