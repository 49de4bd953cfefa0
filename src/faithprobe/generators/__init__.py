"""Synthetic datasets the project authors itself.

:data:`GENERATORS` maps a name to a :class:`Generator`: how to build the items from a seed
and the generator's own options, how to write them, and which features break them down
(the ``faithprobe generate`` command's summary table)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faithprobe.datasets.cloze_jsonl import write_cloze_jsonl
from faithprobe.datasets.squad import write_squad
from faithprobe.errors import UsageError
from faithprobe.generators import comparisons
from faithprobe.generators.comparisons import ComparisonConfig
from faithprobe.generators.distractors import DistractorConfig, generate


@dataclass(frozen=True)
class Generator:
    description: str
    config: type  # a frozen dataclass of the options; raises UsageError on bad values
    build: Callable[[Any, int], list]
    write: Callable[[list, Path], int]
    breakdown: Callable[[Any], dict[str, Any]]  # item -> its condition, column by column

    def items(self, seed: int, **options: Any) -> list:
        """The items for ``seed``; ``options`` are fields of :attr:`config`."""
        try:
            config = self.config(**options)
        except TypeError:
            known = ", ".join(self.config.__dataclass_fields__)
            raise UsageError(
                f"options {sorted(options)} do not all apply; known: {known}"
            ) from None
        return self.build(config, seed)


GENERATORS = {
    "distractors": Generator(
        "cloze items with B-type, T-type and unrelated attractors (Pandia & Ettinger 2021)",
        DistractorConfig,
        generate,
        write_cloze_jsonl,
        lambda i: {
            "setting": i.features["setting"] if i.features["base_id"] else "base",
            "attractor type": i.features["attractor_type"],
            "n": i.features["n_attractors"],
        },
    ),
    "comparisons": Generator(
        "comparison questions over two dated entities, supporting facts or paragraph, as "
        "SQuAD JSON (right-reasons; Ray Choudhury et al. 2022)",
        ComparisonConfig,
        comparisons.generate,
        write_squad,
        lambda i: {
            "domain": i.features["domain"],
            "comparative": i.features["comparative"],
            "condition": i.features["condition"],
        },
    ),
}

__all__ = ["GENERATORS", "ComparisonConfig", "DistractorConfig", "Generator", "generate"]
