"""One recipe trained with several seeds (``faithprobe train <recipe> --seeds 0,1,2``), its
scores averaged as the methods report them (the mean over three runs, with their standard
deviation).

Each seed trains into its own model folder, ``<out>/seed-<N>``, exactly as ``--seed N
--out <out>/seed-<N>`` would; then ``<out>/seeds.json`` and ``<out>/seeds.md`` hold, for
every score the recipe records in its ``training.json`` (``scores``: dev or held-out
accuracy, EM/F1/unk% per variant, macro-F1 ...), the value of each seed, their mean and
their sample standard deviation (n - 1). The seeds' folders are ordinary model folders:
``faithprobe run --model <out>/seed-0 --model <out>/seed-1 ...`` evaluates them.

Resuming: running the same command again skips a seed whose folder holds a model that
command trained (its ``training.json`` records the command line and the seed), resumes one
with checkpoints, and trains the rest; a folder made by another command is refused as
``--out`` always is (``--overwrite`` trains it again).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from faithprobe import markdown
from faithprobe.atomic import write_json, write_text
from faithprobe.datasets.splits import SUMMARY
from faithprobe.errors import UsageError

SEEDS_FILE = "seeds.json"
SEEDS_TABLE = "seeds.md"


def parse_seeds(text: str) -> tuple[int, ...]:
    """``0,1,2`` -> (0, 1, 2): distinct whole numbers from 0 to 2**32 - 1, two or more."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not all(p.isdigit() for p in parts):
        raise UsageError(f"--seeds {text!r}: expected comma-separated whole numbers, e.g. 0,1,2")
    seeds = tuple(int(p) for p in parts)
    if len(seeds) < 2 or len(set(seeds)) != len(seeds):
        raise UsageError(f"--seeds {text!r}: give two or more different seeds")
    if max(seeds) > 2**32 - 1:
        raise UsageError(f"--seeds {text!r}: a seed must be at most {2**32 - 1}")
    return seeds


def seed_folder(out: Path, seed: int) -> Path:
    return Path(out) / f"seed-{seed}"


def trained_by(folder: Path, command: str, seed: int) -> bool:
    """Whether ``folder`` holds a model that ``command`` trained with ``seed``."""
    path = folder / SUMMARY
    if not path.is_file():
        return False
    summary = json.loads(path.read_text())
    return summary.get("seed") == seed and (summary.get("extra") or {}).get("command") == command


def aggregate(summaries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per score that every summary records (in the first one's order): each seed's value,
    their mean and sample standard deviation."""
    seeds = [s["seed"] for s in summaries]
    names = [
        n for n in summaries[0].get("scores") or {} if all(n in s["scores"] for s in summaries)
    ]
    scores = {}
    for name in names:
        values = [s["scores"][name]["value"] for s in summaries]
        known = [v for v in values if v is not None]
        scores[name] = {
            "values": values,
            "mean": statistics.fmean(known) if known else None,
            "sd": statistics.stdev(known) if len(known) > 1 else None,
            "n": len(known),
        }
    return {"seeds": seeds, "scores": scores, "sd": "sample standard deviation (n - 1)"}


def table_rows(record: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the aggregate: one row per score, mean ± sd and each seed's value."""
    header = ["score", "mean ± sd", *(f"seed {s}" for s in record["seeds"])]

    def number(value: float | None) -> str:
        return "–" if value is None else f"{value:.4f}"

    rows = [
        [name, f"{number(score['mean'])} ± {number(score['sd'])}", *map(number, score["values"])]
        for name, score in record["scores"].items()
    ]
    return header, rows


def write_seeds(out: Path, folders: Sequence[Path], command: str) -> dict[str, Any]:
    """Aggregate the seeds' ``training.json`` into ``<out>/seeds.json`` and ``seeds.md``."""
    summaries = [json.loads((folder / SUMMARY).read_text()) for folder in folders]
    record = {
        "command": command,
        "folders": [str(f) for f in folders],
        **aggregate(summaries),
    }
    write_json(Path(out) / SEEDS_FILE, record)
    header, rows = table_rows(record)
    escaped = [[markdown.text(cell) for cell in row] for row in rows]
    write_text(Path(out) / SEEDS_TABLE, "\n".join(markdown.table(header, escaped)) + "\n")
    return record
