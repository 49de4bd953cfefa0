"""Registry of interventions: names map to :class:`Intervention` objects.

Modules register their interventions with :func:`register` when they are imported. The
registry finds them itself: before the first lookup it imports every module of this package
and the ``interventions`` module of any suite package that has one
(:func:`faithprobe.registry.import_declared`), so a new intervention is a new module, not
an edit to a list.
"""

from __future__ import annotations

from faithprobe.expectations import Expectation
from faithprobe.interventions.base import Intervention, InterventionFn, Pair
from faithprobe.registry import SUITE_GROUP, Registry, import_declared, import_submodules

__all__ = ["INTERVENTIONS", "Intervention", "Pair", "available", "get", "register"]


def _discover(_: Registry) -> None:
    import_submodules(__name__)
    import_declared(SUITE_GROUP, "interventions")


INTERVENTIONS: Registry[Intervention] = Registry("intervention", discover=_discover)


def register(name: str, *, family: str, changes: str, holds: str, expectation: Expectation):
    """Decorator: register ``fn(example, rng, **params) -> Outcome`` under ``name``."""

    def wrap(fn: InterventionFn) -> InterventionFn:
        INTERVENTIONS.add(
            name, Intervention(name, family, changes, holds, expectation, fn), description=changes
        )
        return fn

    return wrap


def get(name: str) -> Intervention:
    return INTERVENTIONS.get(name)


def available() -> list[Intervention]:
    return [INTERVENTIONS.get(name) for name in sorted(INTERVENTIONS.names())]
