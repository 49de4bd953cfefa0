"""The intervention protocol.

An intervention is a named, pure function of (example, rng, **params) returning an
:class:`~faithprobe.records.Outcome` -- the new examples, or the reason there are none --
plus the metadata a reader needs to judge it: what it changes, what it holds fixed, and
what a faithful model does afterwards. Its randomness comes from
:func:`faithprobe.seeding.rng_for` keyed by (seed, example id, intervention instance), so the
same seed gives the same edits whatever order examples arrive in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from faithprobe.expectations import Expectation
from faithprobe.records import Example, Outcome
from faithprobe.seeding import rng_for

InterventionFn = Callable[..., Outcome]


@dataclass(frozen=True)
class Intervention:
    name: str
    family: str
    changes: str
    holds: str
    expectation: Expectation
    fn: InterventionFn

    def instance_name(self, **params: Any) -> str:
        """The name of this intervention with its parameters, e.g. ``x[n=2,setting=multi]``."""
        if not params:
            return self.name
        inner = ",".join(f"{k}={params[k]}" for k in sorted(params))
        return f"{self.name}[{inner}]"

    def apply(
        self, example: Example, *, seed: int, pool: Sequence[Example] | None = None, **params: Any
    ) -> Outcome:
        """The intervened versions of ``example``, or the reason there are none.
        Interventions that borrow from other instances of the dataset (a donor question or
        answer) draw them from ``pool``, which should be in a fixed order (e.g. sorted by
        id) for results to be reproducible."""
        rng = rng_for(seed, example.id, self.instance_name(**params))
        if pool is not None:
            params = {**params, "pool": pool}
        return self.fn(example, rng, **params)


@dataclass(frozen=True)
class Pair:
    """An original example, one intervened version of it, and what a faithful model does."""

    original: Example
    intervened: Example
    intervention: str
    expectation: Expectation
    # needed when the intervened example is itself a dataset example that several pairs
    # share (an intervention that swaps in another instance, as natural-logic's do)
    pair_id: str | None = None

    @property
    def id(self) -> str:
        return self.pair_id or self.intervened.id

    @property
    def dropped(self) -> str | None:
        """Why the intervention could not be applied (the intervened example is then the
        original marked with the reason, :meth:`~faithprobe.records.Outcome.example_or_dropped`),
        or None."""
        return self.intervened.features.get("dropped")
