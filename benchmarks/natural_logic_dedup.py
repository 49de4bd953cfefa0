"""natural-logic: evaluating each unique input once vs every pair's two inputs separately.

The method pairs each base example with every alternative meeting a condition, so the same
premise-hypothesis pairs recur across intervention pairs and sets (a base sits in all four
sets; an alternative of one base is the alternative or base of many others). Both sides
score the same pairs with the same subject in this one process:

* per-pair baseline: for every intervention pair, the base input and the alternative
  input are each sent to the model in their own call (the method's loop);
* faithprobe: the runner's path -- the examples the pairs use, deduplicated by id, asked
  through :class:`~faithprobe.subjects.cached_subject.CachedSubject` (request-level deduplication,
  an in-memory cache, so nothing is read from disk) in length-sorted batches.

Reports model inputs scored, forward calls, wall time, their ratios, and TCE, DCE, ratio
and delta computed from each side's predictions, which must be identical. Usage:

    python benchmarks/natural_logic_dedup.py [--bases 10] [--model embedded]
        [--data ../shared/data/nli-xy] [--json benchmarks/results/natural_logic_dedup.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pandas as pd
import torch

from faithprobe.runner import answer_all, result_rows
from faithprobe.subjects import load_subject
from faithprobe.subjects.answer_cache import AnswerCache
from faithprobe.subjects.cached_subject import CachedSubject
from faithprobe.suite_protocol import get_suite
from faithprobe.suites.natural_logic.metrics import causal_effects


class CallCounter:
    """Counts the batches (forward calls) and inputs a subject is sent."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.calls = 0
        self.inputs = 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def answer(self, requests, progress=None):
        self.calls += 1
        self.inputs += len(requests)
        return self.inner.answer(requests, progress)


def effects(suite, pairs, subject, answers) -> list[dict]:
    rows = pd.DataFrame(result_rows(suite, pairs, subject, answers))
    return [
        {k: float(e[k]["value"]) for k in ("tce", "dce", "ratio", "delta")}
        | {"feature": e["feature"]}
        for e in causal_effects(rows, seed=0)
    ]


def same(a: list[dict], b: list[dict]) -> bool:
    """Exactly equal, NaN equal to NaN (an undefined ratio on both sides)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bases", type=int, default=10)
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--data", type=Path, default=Path("../shared/data/nli-xy"))
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args()

    suite = get_suite("natural-logic", {"bases": str(args.bases), "challenge": "none"})
    pairs = suite.pairs(args.data, 0)
    model = load_subject(args.model, batch_size=args.batch_size)

    # faithprobe: unique examples, request-level dedup, batched
    ours = CallCounter(model)
    start = time.perf_counter()
    ours_answers = answer_all(suite, pairs, CachedSubject(ours, AnswerCache(None)), None)
    t_ours = time.perf_counter() - start

    # baseline: both inputs of every pair, one call each
    base = CallCounter(model)
    base_answers: dict[str, object] = {}
    start = time.perf_counter()
    for p in pairs:
        for ex in (p.original, p.intervened):
            base_answers[ex.id] = base.answer([suite.request(ex, model)])[0]
    t_base = time.perf_counter() - start

    e_ours = effects(suite, pairs, model, ours_answers)
    e_base = effects(suite, pairs, model, base_answers)
    result = {
        "model": args.model,
        "bases": args.bases,
        "pairs": len(pairs),
        "batch_size": args.batch_size,
        "torch_threads": torch.get_num_threads(),
        "baseline_inputs": base.inputs,
        "baseline_calls": base.calls,
        "ours_inputs": ours.inputs,
        "ours_calls": ours.calls,
        "inputs_ratio": round(base.inputs / ours.inputs, 2),
        "baseline_seconds": round(t_base, 2),
        "ours_seconds": round(t_ours, 2),
        "speedup": round(t_base / t_ours, 2),
        "effects_identical": same(e_ours, e_base),
        "effects": e_ours,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    if not same(e_ours, e_base):
        raise SystemExit(f"effects differ: {e_ours} vs {e_base}")


if __name__ == "__main__":
    main()
