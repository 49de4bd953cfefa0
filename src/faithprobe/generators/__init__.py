"""Synthetic datasets the project authors itself.

:data:`GENERATORS` maps a name to a :class:`Generator`: how to build the items from a seed
and the generator's own options, how to write them, and which features break them down
(the ``faithprobe generate`` command's summary table)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faithprobe.datasets.cloze_jsonl import write_cloze_jsonl
from faithprobe.datasets.squad import write_squad
from faithprobe.generators import comparisons
from faithprobe.generators.comparisons import ComparisonConfig
from faithprobe.generators.distractors import DistractorConfig, generate
from faithprobe.options import parse
from faithprobe.registry import Registry


@dataclass(frozen=True)
class Generator:
    name: str
    config: type  # the options' frozen dataclass; raises UsageError on bad values
    build: Callable[[Any, int], list]
    write: Callable[[list, Path], int]
    breakdown: Callable[[Any], dict[str, Any]]  # item -> its condition, column by column

    def items(self, seed: int, options: Mapping[str, object] | None = None) -> list:
        """The items for ``seed``; ``options`` are fields of :attr:`config` (strings from
        the command line are converted)."""
        return self.build(parse(self.config, options, f"generator {self.name!r}"), seed)


DISTRACTORS = Generator(
    "distractors",
    DistractorConfig,
    generate,
    write_cloze_jsonl,
    lambda i: {
        "setting": i.features["setting"] if i.features["base_id"] else "base",
        "attractor type": i.features["attractor_type"],
        "n": i.features["n_attractors"],
    },
)
COMPARISONS = Generator(
    "comparisons",
    ComparisonConfig,
    comparisons.generate,
    write_squad,
    lambda i: {
        "domain": i.features["domain"],
        "comparative": i.features["comparative"],
        "condition": i.features["condition"],
    },
)

GENERATORS: Registry[Generator] = Registry("generator")
GENERATORS.add(
    DISTRACTORS.name,
    DISTRACTORS,
    description="cloze items with B-type, T-type and unrelated attractors (Pandia & "
    "Ettinger 2021), as cloze JSON lines",
)
GENERATORS.add(
    COMPARISONS.name,
    COMPARISONS,
    description="comparison questions over two dated entities, supporting facts or "
    "paragraph, as SQuAD JSON (right-reasons; Ray Choudhury et al. 2022)",
)

__all__ = ["GENERATORS", "ComparisonConfig", "DistractorConfig", "Generator", "generate"]
