"""What a representation analysis is asked to do: the models (``NAME=PATH``), the data and
the sample. Kept apart from :mod:`~faithprobe.representations.analysis` (torch, pandas) so
the command line can declare its options without importing either."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from faithprobe.datasets.coqa import COQA_RULES, DEFAULT_HISTORY_TURNS
from faithprobe.errors import UsageError, excerpt
from faithprobe.json_values import unwritable
from faithprobe.subjects.hf.qa_windows import DEFAULT_MAX_LENGTH

DEFAULT_LIMIT = 500
# the summary token compared: the model's convention, the first ([CLS], <s>) or the last (XLNet)
POOLINGS = ("auto", "first", "last")


@dataclass(frozen=True)
class NamedEncoder:
    name: str
    path: str


def parse_named_encoder(value: str) -> NamedEncoder:
    """``NAME=PATH`` or ``PATH`` (named after the folder)."""
    name, sep, path = value.partition("=")
    if not sep:
        name, path = Path(value.rstrip("/")).name, value
    name, path = name.strip(), path.strip()
    if not name or not path:
        raise UsageError(f"--model {value!r}: expected NAME=PATH or PATH (e.g. OT=models/qa-ot)")
    if why := unwritable(value):  # its name and path go into the report
        raise UsageError(f"--model {excerpt(value)}: {why}")
    return NamedEncoder(name, path)


def parse_named_encoders(values: Sequence[str]) -> list[NamedEncoder]:
    specs = [parse_named_encoder(v) for v in values]
    if len(specs) < 2:
        raise UsageError("give two or more models to compare (--model OT=... --model IBT=...)")
    names = Counter(s.name for s in specs)
    if twice := sorted(n for n, c in names.items() if c > 1):
        raise UsageError(f"model names must differ: {', '.join(twice)} named more than once")
    return specs


@dataclass(frozen=True)
class AnalysisConfig:
    models: list[NamedEncoder]
    data: Path
    heldout_of: str = ""
    limit: int | None = DEFAULT_LIMIT
    seed: int = 0
    max_length: int = DEFAULT_MAX_LENGTH
    batch_size: int = 16
    pooling: str = POOLINGS[0]  # one of POOLINGS
    # CoQA, read as the faithfulness suite reads it (its options history_turns, coqa_rules)
    history_turns: int = DEFAULT_HISTORY_TURNS
    coqa_rules: str = COQA_RULES[0]
