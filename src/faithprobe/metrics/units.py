"""An effect as a function of per-unit means, so two models' effects can be compared on the
same resampled clusters.

Every headline effect of the card is a smooth function of a few means taken over the
step's units (items, pairs, instances): an accuracy drop is a mean of base correctness minus
a mean of attractor correctness, TCE - DCE a difference of two means of prediction changes,
DCE/TCE their ratio, a spread the root of a mean of squared deviations. :class:`Units` holds
those per-unit numbers (one column per mean; NaN where a unit does not enter that mean),
each unit's cluster (what the suite resamples: base item, passage, story) and the formula.
:func:`faithprobe.metrics.comparison.compare_units` resamples the clusters of two such
tables together and reads the difference of the two effects off every resample, which is
what "paired over the same items" means for an effect that is not a plain mean.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


def _root(m: np.ndarray) -> np.ndarray:
    return np.sqrt(np.clip(m[..., 0], 0.0, None))


def _ratio(m: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return m[..., 0] / m[..., 1]


# formula name -> (number of means it takes, the effect as a function of them); the last
# axis of the argument holds the means, so one call evaluates every bootstrap resample
FORMULAS: dict[str, tuple[int, Callable[[np.ndarray], np.ndarray]]] = {
    "mean": (1, lambda m: m[..., 0]),
    "difference": (2, lambda m: m[..., 0] - m[..., 1]),
    "difference_of_differences": (4, lambda m: (m[..., 0] - m[..., 1]) - (m[..., 2] - m[..., 3])),
    "ratio": (2, _ratio),
    "root": (1, _root),
}


@dataclass(frozen=True, eq=False)
class Units:
    """The per-unit numbers an effect is computed from: ``columns[j][i]`` is unit ``i``'s
    contribution to mean ``j`` (NaN: the unit is not in that mean), and ``FORMULAS[formula]``
    turns the means into the effect."""

    formula: str
    unit: tuple[str, ...]  # stable ids: the same unit has the same id for every model
    cluster: tuple[str, ...]
    columns: tuple[tuple[float, ...], ...]

    def __post_init__(self) -> None:
        if self.formula not in FORMULAS:
            raise ValueError(f"unknown formula {self.formula!r}: one of {', '.join(FORMULAS)}")
        width = FORMULAS[self.formula][0]
        if len(self.columns) != width:
            raise ValueError(f"{self.formula} takes {width} columns, got {len(self.columns)}")
        n = len(self.unit)
        if len(self.cluster) != n or any(len(c) != n for c in self.columns):
            raise ValueError("unit, cluster and every column must have one entry per unit")
        if len(set(self.unit)) != n:
            raise ValueError("unit ids must be unique")

    @classmethod
    def build(
        cls,
        formula: str,
        unit: Sequence[Any],
        cluster: Sequence[Any],
        *columns: Sequence[Any],
    ) -> Units:
        """Units from any sequences (ids become strings, None and NaN become NaN)."""
        return cls(
            formula,
            tuple(str(u) for u in unit),
            tuple(str(c) for c in cluster),
            tuple(tuple(_number(x) for x in col) for col in columns),
        )

    @property
    def matrix(self) -> np.ndarray:
        """units x columns."""
        return np.array(self.columns, dtype=float).T.reshape(len(self.unit), len(self.columns))

    def value(self) -> float:
        """The effect on all units."""
        x = self.matrix
        present = ~np.isnan(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            means = np.where(present, x, 0.0).sum(0) / present.sum(0)
        return float(FORMULAS[self.formula][1](means))

    def record(self) -> dict[str, Any]:
        """The units as metrics.json holds them (NaN as None)."""
        return {
            "formula": self.formula,
            "unit": list(self.unit),
            "cluster": list(self.cluster),
            "columns": [[None if math.isnan(x) else x for x in col] for col in self.columns],
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Units:
        return cls.build(record["formula"], record["unit"], record["cluster"], *record["columns"])


def _number(x: Any) -> float:
    if x is None:
        return math.nan
    return float(x)
