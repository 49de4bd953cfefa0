"""Synthetic datasets the project authors itself.

:data:`GENERATORS` maps a name to a :class:`Generator`: how to build the items from a seed
and the generator's own options, how to write them, and which features break them down
(the ``faithprobe generate`` command's summary table)."""

from __future__ import annotations

import re
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

HEAD_BYTES = 8192  # enough for a generated file's first record


@dataclass(frozen=True)
class Generator:
    name: str
    config: type  # the options' frozen dataclass; raises UsageError on bad values
    build: Callable[[Any, int], list]
    write: Callable[[list, Path], int]
    breakdown: Callable[[Any], dict[str, Any]]  # item -> its condition, column by column
    head: re.Pattern[str]  # how a file this generator wrote begins

    def configure(self, options: Mapping[str, object] | None = None) -> Any:
        """The :attr:`config` ``options`` give (strings from the command line are
        converted), checked: cheap, so a bad option is told before anything is built."""
        return parse(self.config, options, f"generator {self.name!r}")

    def items(self, seed: int, options: Mapping[str, object] | None = None) -> list:
        """The items for ``seed``; ``options`` as :meth:`configure` takes them."""
        return self.build(self.configure(options), seed)

    def wrote(self, path: Path) -> bool:
        """Whether the file at ``path`` begins as this generator's output does (what lets
        ``generate --out`` replace it without ``--force``)."""
        try:
            with open(path, "rb") as f:
                head = f.read(HEAD_BYTES).decode("utf-8", errors="replace")
        except OSError:
            return False
        return self.head.match(head) is not None


def written_by_a_generator(path: Path) -> bool:
    """Whether a generator of :data:`GENERATORS` wrote the file at ``path``."""
    return any(GENERATORS.get(name).wrote(path) for name in GENERATORS.names())


DISTRACTORS = Generator(
    "distractors",
    DistractorConfig,
    generate,
    write_cloze_jsonl,
    lambda i: {
        "setting": i.features["setting"] if i.features["base_id"] else "base",
        "attractor type": i.features["attractor_type"],
        "n": i.features["n_attractors"],
        "filler": len(i.features["filler"]),
        "padding": len(i.features.get("padding", ())),
    },
    re.compile(r'\{"id": "[^\n]*", "candidates": \[[^\n]*\], "features": \{"item_set": "'),
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
    re.compile(r'\{"version": "1\.1", "data": \[\{"title": "[^\n]*"qas": \[\{"id": "cmp-'),
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

__all__ = [
    "GENERATORS",
    "ComparisonConfig",
    "DistractorConfig",
    "Generator",
    "generate",
    "written_by_a_generator",
]
