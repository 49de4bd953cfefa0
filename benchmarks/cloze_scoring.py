"""Cloze scoring throughput: faithprobe's causal scorer against a naive loop.

Both score the same items with the same model in this one process:

* naive: one unbatched forward per (item, candidate) over context + candidate tokens,
  log-probs read off the full logits, no cache;
* ours: ``HFCausal.answer`` -- length-sorted batches, each context run once
  and its key/value cache shared by the candidates, vocabulary projection only where read
  (no answer cache either, so only the scoring itself is compared).

Reports items/s of each, their ratio (target >= 5x) and the largest absolute difference
between the two sets of log-probs (must be < 1e-3). Usage:

    python benchmarks/cloze_scoring.py [--items 240] [--model embedded] [--batch-size 16]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from faithprobe.requests import CandidateScoreRequest
from faithprobe.subjects import load_subject
from faithprobe.suite_protocol import get_suite


def naive_scores(subject, requests: list[CandidateScoreRequest]) -> list[list[float]]:
    model, tok = subject.model, subject.tokenizer
    out = []
    for r in requests:
        ctx = tok(r.context).input_ids
        row = []
        for c in r.candidates:
            cont = tok(" " + c, add_special_tokens=False).input_ids
            with torch.inference_mode():
                logits = model(torch.tensor([ctx + cont])).logits[0]
            logp = torch.log_softmax(logits.float(), dim=-1)
            row.append(sum(float(logp[len(ctx) - 1 + k, t]) for k, t in enumerate(cont)))
        out.append(row)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=240)
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args()

    suite = get_suite("distractors")
    pairs = suite.sample(suite.pairs(None, args.seed), args.items, args.seed)
    requests = sorted(
        {suite.request(p.intervened) for p in pairs if p.intervention != "none"}, key=repr
    )[: args.items]
    subject = load_subject(args.model, batch_size=args.batch_size)
    n_cands = sum(len(r.candidates) for r in requests)

    start = time.perf_counter()
    ours = subject.answer(requests)
    t_ours = time.perf_counter() - start
    start = time.perf_counter()
    naive = naive_scores(subject, requests)
    t_naive = time.perf_counter() - start

    diff = max(
        abs(a - b)
        for o, n in zip(ours, naive, strict=True)
        for a, b in zip(o.logprobs, n, strict=True)
    )
    result = {
        "model": args.model,
        "items": len(requests),
        "candidates": n_cands,
        "batch_size": args.batch_size,
        "torch_threads": torch.get_num_threads(),
        "naive_seconds": round(t_naive, 2),
        "ours_seconds": round(t_ours, 2),
        "naive_items_per_s": round(len(requests) / t_naive, 2),
        "ours_items_per_s": round(len(requests) / t_ours, 2),
        "speedup": round(t_naive / t_ours, 2),
        "max_abs_logprob_diff": diff,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    if diff >= 1e-3:
        raise SystemExit(f"log-probs differ by {diff:.2e} (limit 1e-3)")


if __name__ == "__main__":
    main()
