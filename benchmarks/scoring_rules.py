"""Agreement of the distractors method's scoring rules with ours, on one model.

The distractors suite's generated items (a seeded sample: the base items and the attractor
variants ``--limit`` draws, as ``faithprobe run distractors --limit`` takes them) are scored
under each rule of ``-o scoring=`` / ``-o start=`` by the same subject in this one process,
and each rule's top-1 choice is compared with the default's (the whole candidate's summed
log-probability after the context alone), item by item:

* ``first-token``: the candidate's first token only (Pandia & Ettinger 2021);
* ``sum, start=<|endoftext|>`` and ``first-token, start=<|endoftext|>``: after GPT-2's
  start-of-text token, the method's exact recipe (SmolLM2 has ``<|endoftext|>`` too, id 0,
  its document separator);
* ``first-token, start=bos``: after the model's own BOS token (SmolLM2: ``<|im_start|>``).

Reports per rule the share of items whose top-1 candidate is the default's (Wilson 95%
interval) and each rule's accuracy within the candidate set. Usage:

    python benchmarks/scoring_rules.py [--limit 240] [--model embedded] \
        [--json benchmarks/results/scoring_rules.json]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from faithprobe.metrics.intervals import wilson
from faithprobe.requests import MODEL_START
from faithprobe.subjects import load_subject
from faithprobe.suite_protocol import get_suite

ENDOFTEXT = "<|endoftext|>"
RULES = {  # name: (first_token, start)
    "sum": (False, ""),
    "sum, start=<|endoftext|>": (False, ENDOFTEXT),
    "first-token": (True, ""),
    "first-token, start=<|endoftext|>": (True, ENDOFTEXT),
    "first-token, start=bos": (True, MODEL_START),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=240, help="attractor variants sampled")
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args()

    suite = get_suite("distractors")
    pairs = suite.sampled_pairs(None, args.limit, args.seed)
    items = {e.id: e for p in pairs for e in (p.original, p.intervened) if not p.dropped}
    items = [items[k] for k in sorted(items)]
    default = [suite.request(e) for e in items]
    subject = load_subject(args.model)
    targets = np.array([e.candidates.index(e.target) for e in items])

    choices, seconds = {}, {}
    for name, (first_token, start) in RULES.items():
        requests = [replace(r, first_token=first_token, start=start) for r in default]
        began = time.perf_counter()
        answers = subject.answer(requests)
        seconds[name] = round(time.perf_counter() - began, 1)
        choices[name] = np.array([int(np.argmax(a.logprobs)) for a in answers])

    n = len(items)
    rules = []
    for name, chosen in choices.items():
        same = int((chosen == choices["sum"]).sum())
        low, high = wilson(same, n)
        rules.append(
            {
                "rule": name,
                "agreement_with_sum": round(same / n, 4),
                "agreement_ci95": [round(low, 4), round(high, 4)],
                "items_changed": n - same,
                "accuracy": round(float((chosen == targets).mean()), 4),
                "seconds": seconds[name],
            }
        )
    result = {
        "model": args.model,
        "items": n,
        "base_items": sum(e.features.get("base_id") is None for e in items),
        "limit": args.limit,
        "seed": args.seed,
        "torch_threads": torch.get_num_threads(),
        "rules": rules,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
