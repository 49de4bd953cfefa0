"""Greedy generation throughput: the faithfulness suite's answers one request at a time
against batched, on the same prompts and model in this one process.

The prompts are the generation requests a ``faithfulness`` run on SQuAD dev sends a
causal LM (the default template, at most 24 new tokens, cut at the first newline), distinct,
in the order the runner asks them (by example id), the first ``--requests``: by default
those of a run on the whole file, the 8-10 hour job this speeds up (the questions about a
passage, and their deletion variants, come together); ``--items N`` takes them from a run
limited to N items instead (the suite's seeded sample: fewer prompts share a passage).
Both paths go through ``HFCausal.answer`` with the same model weights:

* per-request: a second subject over the same weights with ``batch_size=1`` and
  ``prefix_cache_bytes=0`` -- the baseline: one request at a time, each prompt read whole
  (one full prefill) and then decoded alone, nothing kept from one request to the next, as
  generation ran before it was batched (whose batches of 16 were no faster than this). It
  runs today's code, so it decodes over the same in-place cache
  (``subjects/hf/kv_growing_cache.py``), which only makes the baseline faster;
* batched: the subject as ``load_subject`` builds it (``batch_size`` 16, faithprobe's
  default, and the default ``PREFIX_CACHE_BYTES`` of prompts' keys and values kept across
  batches and calls): every prompt continues from the longest beginning of it read before
  (in this chunk or an earlier one), beginnings shared within a batch are read first, the
  rest is prefilled in groups of similar length, and all rows decode together, a finished
  row's slot taken at the next step by a prompt prefilled beforehand (see
  ``HFCausal._greedy_rows``, ``_prefill`` and ``subjects/hf/decode_batch.py``).

Requests go in chunks of 64, as ``CachedSubject`` hands a suite run's requests to the model,
and the two paths alternate chunk by chunk (who goes first alternates too), so both see the
same machine load; the batched subject keeps its prefix cache from chunk to chunk, as in a
run. Reports requests/s of each, their ratio (target >= 4x), the prompt tokens each path
read, and the number of requests whose generations (text and token count) differ (must be
0). Usage:

    python benchmarks/generation.py [--data ../shared/data/squad/dev-v1.1.json]
        [--requests 200] [--model embedded] [--batch-size 16] [--json PATH]

Without the SQuAD file it says so and exits without measuring.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

from faithprobe.requests import GenerationRequest
from faithprobe.subjects import load_subject
from faithprobe.suite_protocol import get_suite

SQUAD = Path(__file__).resolve().parents[2] / "shared/data/squad/dev-v1.1.json"
CHUNK = 64  # CachedSubject's default chunk


def faithfulness_requests(data: Path, items: int | None, seed: int) -> list[GenerationRequest]:
    """The distinct generation requests of a ``faithfulness`` run on ``data`` limited to
    ``items`` items (None: all), in the order the runner asks them (by example id)."""
    suite = get_suite("faithfulness")
    pairs = suite.sample(suite.pairs(data, seed), items, seed)
    examples = {}
    for p in pairs:
        examples.setdefault(p.original.id, p.original)
        if not p.dropped:
            examples.setdefault(p.intervened.id, p.intervened)
    requests = (suite.request(examples[i]) for i in sorted(examples))
    return list(dict.fromkeys(r for r in requests if isinstance(r, GenerationRequest)))


def count_prompt_tokens(subject) -> list[int]:
    """A list that the prompt tokens ``subject`` runs through the model (every forward but
    a decoding step's) are added to."""
    read = [0]
    forward = subject._forward

    def counting(ids, mask, positions, cache=None, last_only=False):
        if ids.shape[1] > 1 or cache is None:
            read[0] += int(mask[:, -ids.shape[1] :].sum())
        return forward(ids, mask, positions, cache, last_only)

    subject._forward = counting
    return read


def timed(subject, chunk) -> tuple[list, float]:
    start = time.perf_counter()
    answers = subject.answer(chunk)
    return answers, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SQUAD, help="SQuAD v1.1 dev JSON")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--items", type=int, default=None, help="limit the run to N items")
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args()
    if not args.data.is_file():
        print(f"skipped: no SQuAD dev file at {args.data} (pass --data)")
        return

    requests = faithfulness_requests(args.data, args.items, args.seed)[: args.requests]
    batched = load_subject(args.model, batch_size=args.batch_size)
    single = type(batched)(
        batched.model, batched.tokenizer, name=batched.name, batch_size=1, prefix_cache_bytes=0
    )
    read = {"per_request": count_prompt_tokens(single), "batched": count_prompt_tokens(batched)}
    seconds = {"per_request": 0.0, "batched": 0.0}
    answers = {"per_request": [], "batched": []}
    paths = {"per_request": single, "batched": batched}
    for n, at in enumerate(range(0, len(requests), CHUNK)):
        chunk = requests[at : at + CHUNK]
        for path in sorted(paths, reverse=n % 2 == 1):
            got, took = timed(paths[path], chunk)
            answers[path] += got
            seconds[path] += took

    base, ours = answers["per_request"], answers["batched"]
    differing = sum(a != b for a, b in zip(base, ours, strict=True))
    prompt_tokens = [len(batched.prompt_ids(r.prompt)) for r in requests]
    result = {
        "model": args.model,
        "data": args.data.name,
        "items": args.items,
        "requests": len(requests),
        "batch_size": args.batch_size,
        "torch_threads": torch.get_num_threads(),
        "prompt_tokens_median": statistics.median(prompt_tokens),
        "prompt_tokens_max": max(prompt_tokens),
        "prompt_tokens": sum(prompt_tokens),
        **{f"{p}_prompt_tokens_read": n[0] for p, n in read.items()},
        "generated_tokens": sum(g.n_tokens for g in base),
        **{f"{p}_seconds": round(s, 2) for p, s in seconds.items()},
        **{f"{p}_requests_per_s": round(len(requests) / s, 2) for p, s in seconds.items()},
        "speedup": round(seconds["per_request"] / seconds["batched"], 2),
        "differing_generations": differing,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    if differing:
        raise SystemExit(f"{differing} of {len(requests)} generations differ between the paths")


if __name__ == "__main__":
    main()
