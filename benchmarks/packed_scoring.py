"""Packed candidate scoring against the per-candidate path it replaced, and both against
float64.

Both paths are ``HFCausal.answer`` on the same model in this one process (no answer
cache), on each suite's own candidate-scoring requests: multiple choice (Social IQA dev,
``ChoicePrompt``, as the confidence-shift suite asks) and cloze (the distractors suite's
intervened requests, as ``cloze_scoring.py`` gets them):

* packed: each request a stretch ``context + cand_1[:-1] + cand_2[:-1] + ...`` of a row it
  may share with other requests, under a block mask, the vocabulary projected only where
  a candidate token is read (the default wherever the model passes the probe);
* per-candidate: the context once, its key/value cache copied per candidate, the
  candidates right-padded (``_packs`` forced off).

The requests are scored in ``--rounds`` chunks, the two paths taking turns to go first, so
on a shared machine both see the same load. Reports each path's seconds and their ratio,
the largest |log-prob difference| between them, and for the first ``--reference`` requests
each path's largest |difference| from one float64 forward per candidate over the same
tokens (a copy of the model in float64: the exact value up to float64 rounding). Usage:

    python benchmarks/packed_scoring.py [--limit 256] [--rounds 4] [--threads T]
        [--reference 48] [--json OUT]
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path

import torch

from faithprobe.datasets.multiple_choice import read_socialiqa
from faithprobe.multiple_choice_prompts import ChoicePrompt
from faithprobe.requests import CandidateScoreRequest
from faithprobe.subjects import load_subject
from faithprobe.suite_protocol import get_suite

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "socialiqa" / "dev.jsonl"


def multiple_choice_requests(data: Path, limit: int) -> list[CandidateScoreRequest]:
    prompt = ChoicePrompt()
    examples = read_socialiqa(data)[:limit]
    return [CandidateScoreRequest(prompt.render(ex.prompt), ex.choices) for ex in examples]


def cloze_requests(limit: int, seed: int = 0) -> list[CandidateScoreRequest]:
    suite = get_suite("distractors")
    pairs = suite.sample(suite.pairs(None, seed), limit, seed)
    found = {suite.request(p.intervened) for p in pairs if p.intervention != "none"}
    return sorted(found, key=repr)[:limit]


def chunks(n: int, rounds: int) -> list[range]:
    bounds = [round(k * n / rounds) for k in range(rounds + 1)]
    return [range(bounds[k], bounds[k + 1]) for k in range(rounds)]


def timed_interleaved(sides: dict, requests, rounds: int) -> tuple[dict, dict]:
    """(seconds, log-probs) of each side's ``answer`` over ``requests`` in alternating
    rounds."""
    seconds = dict.fromkeys(sides, 0.0)
    logprobs = {name: [] for name in sides}
    for r, part in enumerate(chunks(len(requests), rounds)):
        names = list(sides) if r % 2 == 0 else list(reversed(sides))
        for name in names:
            start = time.perf_counter()
            answers = sides[name].answer([requests[i] for i in part])
            seconds[name] += time.perf_counter() - start
            logprobs[name] += [list(a.logprobs) for a in answers]
    return seconds, logprobs


def float64_scores(model64, subject, requests) -> list[list[float]]:
    """One float64 forward per candidate over the tokens ``subject`` scores it on."""
    out = []
    for r in requests:
        ctx, cands = subject._encode(r)[0]
        row = []
        for tokens in cands:
            with torch.inference_mode():
                logits = model64(torch.tensor([ctx + tokens[:-1]])).logits[0]
            logp = torch.log_softmax(logits, -1)
            row.append(sum(float(logp[len(ctx) - 1 + k, t]) for k, t in enumerate(tokens)))
        out.append(row)
    return out


def largest_difference(a: list[list[float]], b: list[list[float]]) -> float:
    return max(
        abs(x - y) for ra, rb in zip(a, b, strict=False) for x, y in zip(ra, rb, strict=True)
    )


def compare(name, requests, packed, old, model64, args) -> dict:
    seconds, logprobs = timed_interleaved({"packed": packed, "old": old}, requests, args.rounds)
    truth = float64_scores(model64, packed, requests[: args.reference])
    encoded = [packed._encode(r)[0] for r in requests]
    return {
        "suite": name,
        "requests": len(requests),
        "candidates": sum(len(c) for _, c in encoded),
        "packed_seconds": round(seconds["packed"], 2),
        "old_seconds": round(seconds["old"], 2),
        "speedup": round(seconds["old"] / seconds["packed"], 3),
        "max_abs_logprob_diff_packed_vs_old": largest_difference(
            logprobs["packed"], logprobs["old"]
        ),
        "float64_reference_requests": len(truth),
        "max_abs_diff_from_float64": {
            side: largest_difference(logprobs[side], truth) for side in ("packed", "old")
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=256, help="requests per suite")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="Social IQA jsonl")
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--reference", type=int, default=48, help="requests checked in float64")
    parser.add_argument("--threads", type=int, default=None, help="torch threads")
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    packed = load_subject(args.model, batch_size=args.batch_size)
    if not packed._packs:
        raise SystemExit(f"{args.model} does not pass the packing probe")
    old = copy.copy(packed)
    old._packs = False  # the cached property, forced to the per-candidate path
    model64 = copy.deepcopy(packed.model).double()
    suites = {
        "multiple-choice (Social IQA)": multiple_choice_requests(args.data, args.limit),
        "cloze (distractors)": cloze_requests(args.limit),
    }
    results = []
    for name, requests in suites.items():
        results.append(compare(name, requests, packed, old, model64, args))
        print(json.dumps(results[-1]), file=sys.stderr)
    result = {
        "model": args.model,
        "batch_size": args.batch_size,
        "rounds": args.rounds,
        "torch_threads": torch.get_num_threads(),
        "suites": results,
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
