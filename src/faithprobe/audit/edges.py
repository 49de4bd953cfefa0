"""The edges of the card's faithful regions: each a named tolerance with a default and a
sentence on where that default comes from, declared by the suite whose headline uses it
(the ``edges`` of its :class:`~faithprobe.metrics.headline.Headline`), and movable per
audit with ``--edge NAME=VALUE`` (recorded in run.json and metrics.json)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from faithprobe.errors import UsageError, excerpt
from faithprobe.registry import load_target
from faithprobe.suite_protocol import SUITES


def suite_edges(suite: str) -> dict[str, tuple[float, str]]:
    """The edges suite ``suite`` declares: name -> (default bound, where it comes from)."""
    target = SUITES.get(suite).headline
    return dict(load_target(target).edges) if target else {}


@dataclass(frozen=True)
class Edges:
    """The edges of an audit's steps and the bounds ``--edge`` moved."""

    declared: Mapping[str, tuple[float, str]]
    overrides: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def defaults(cls, suites: Sequence[str]) -> Edges:
        declared: dict[str, tuple[float, str]] = {}
        for suite in suites:
            declared.update(suite_edges(suite))
        return cls(declared)

    @classmethod
    def parse(cls, given: Sequence[str], suites: Sequence[str]) -> Edges:
        """``--edge NAME=VALUE`` strings against the edges of ``suites``; a name no step
        uses, a name given twice, or a value that is no finite number, is one plain error."""
        edges = cls.defaults(suites)
        overrides: dict[str, float] = {}
        for text in given:
            name, sep, value = text.partition("=")
            name = name.strip()
            if not sep:
                raise UsageError(f"--edge {excerpt(text)}: give NAME=VALUE")
            if name not in edges.declared:
                raise UsageError(
                    f"--edge {excerpt(name)}: no step has this edge; edges: "
                    + ", ".join(sorted(edges.declared))
                )
            if name in overrides:
                raise UsageError(f"--edge {excerpt(name)} is given twice: give it once")
            try:
                bound = float(value)
            except ValueError:
                bound = math.nan
            if not math.isfinite(bound):
                raise UsageError(f"--edge {excerpt(text)}: {excerpt(value)} is not a number")
            overrides[name] = bound
        return cls(edges.declared, overrides)

    def records(self) -> dict[str, dict]:
        """Per edge: the bound in force, its default, where the default comes from and
        whether ``--edge`` moved it (metrics.json's ``edges``)."""
        return {
            name: {
                "bound": self.overrides.get(name, default),
                "default": default,
                "source": source,
                "overridden": name in self.overrides,
            }
            for name, (default, source) in sorted(self.declared.items())
        }
