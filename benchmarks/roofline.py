"""Roofline: the embedded model's best forward throughput on this machine against the
throughput each suite's scoring path achieves on its own requests.

* Roofline: unpadded forwards of random token ids over a sweep of batch sizes x sequence
  lengths (``torch.inference_mode``, no mask, no cache, the vocabulary projection at the
  last position only -- the least work a forward over those tokens can do); the roofline is
  the best tokens/s of the sweep.
* Suites: each suite's distinct candidate-scoring requests, got as a run gets them
  (``get_suite(name)``, ``suite.pairs``, ``suite.sample``, ``suite.request`` on the original
  and intervened example of every pair), scored by ``HFCausal.answer`` (no answer cache;
  tokenisation, batching and Python overhead included). Its throughput counts the tokens the
  model truly needs to process: each request's context tokens plus every candidate token but
  the last (which is predicted, never fed) -- no padding, no repeated context. The ratio is
  that throughput over the roofline. To locate a gap each suite also reports the tokens
  fed to the model's forward, padding included, and the seconds inside it (the rest is
  tokenisation, batching and Python; :mod:`forward_meter`); what remains inside the forward
  is the shapes of its batches, the attention mask and the vocabulary projection at every
  position a candidate token is read from, work this token count leaves out.

Suites: distractors (cloze: generated items, about six mostly one-token candidates),
confidence-shift (multiple choice: Social IQA dev, three multi-token answers) and
natural-logic (two one-token label words after an NLI prompt, on NLI-XY). Faithfulness is
generation (the SQuAD questions it asks are not yes/no), whose decoding steps are a
different roofline: out of scope here.

The sweep and the suites' chunks run in ``--rounds`` turns, alternating which goes first,
so on a shared machine all see the same load; the same torch threads throughout. At the
defaults a chunk is 64 requests, what a run's answer cache hands the model at a time. Target:
at least 60% of the roofline for cloze and multiple-choice scoring. Usage:

    python benchmarks/roofline.py [--limit 256] [--rounds 4] [--threads T] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch
from forward_meter import ForwardMeter

from faithprobe.requests import CandidateScoreRequest
from faithprobe.subjects import load_subject
from faithprobe.suite_protocol import get_suite

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SUITES = {  # name: (kind of scoring, data)
    "distractors": ("cloze", None),
    "confidence-shift": ("multiple-choice", DATA / "socialiqa" / "dev.jsonl"),
    "natural-logic": ("label words (NLI)", DATA / "nli-xy"),
}
TARGETS = {"cloze": 0.6, "multiple-choice": 0.6}
BATCHES = (1, 4, 16, 64)
LENGTHS = (32, 64, 128)
MAX_SWEEP_TOKENS = 2048  # per forward, to keep the sweep modest on a small CPU


def sweep_shapes() -> list[tuple[int, int]]:
    return [(b, n) for b in BATCHES for n in LENGTHS if b * n <= MAX_SWEEP_TOKENS]


def forward_seconds(model, batch: int, length: int) -> float:
    """Wall time of one unpadded forward over ``batch`` x ``length`` random tokens."""
    ids = torch.randint(0, model.config.vocab_size, (batch, length))
    start = time.perf_counter()
    with torch.inference_mode():
        model(input_ids=ids, use_cache=False, logits_to_keep=1)
    return time.perf_counter() - start


def suite_requests(name: str, data, subject, limit: int, seed: int) -> list:
    """The first ``limit`` distinct candidate-scoring requests of the suite's sampled pairs
    (``limit`` is also the suite's sample size)."""
    suite = get_suite(name)
    found: dict[str, CandidateScoreRequest] = {}
    for pair in suite.sample(suite.pairs(data, seed), limit, seed):
        for example in (pair.original, pair.intervened):
            request = suite.request(example, subject)
            if isinstance(request, CandidateScoreRequest):
                found.setdefault(repr(request), request)
    return list(found.values())[:limit]


def needed_tokens(subject, requests) -> int:
    """Tokens the model needs: each request's context and fed candidate tokens."""
    encoded = [subject._encode(r)[0] for r in requests]
    return sum(len(ctx) + sum(len(c) - 1 for c in cands) for ctx, cands in encoded)


def chunks(n: int, rounds: int) -> list[range]:
    bounds = [round(k * n / rounds) for k in range(rounds + 1)]
    return [range(bounds[k], bounds[k + 1]) for k in range(rounds)]


def run_rounds(subject, requests: dict[str, list], rounds: int) -> tuple[dict, dict, dict, dict]:
    """(Seconds per sweep shape, seconds per suite, of which in the model's forward, tokens
    the model was fed per suite), the sweep and the suites' chunks taking turns to go first."""
    shapes = sweep_shapes()
    sweep = dict.fromkeys(shapes, 0.0)
    scoring = dict.fromkeys(requests, 0.0)
    in_model = dict.fromkeys(requests, 0.0)
    fed = dict.fromkeys(requests, 0)
    meter = ForwardMeter(subject.model)
    parts = {name: chunks(len(reqs), rounds) for name, reqs in requests.items()}

    def run_sweep() -> None:
        for b, n in shapes:
            sweep[b, n] += forward_seconds(subject.model, b, n)

    def run_suites(r: int) -> None:
        for name, reqs in requests.items():
            start, model_start, tokens_start = time.perf_counter(), meter.seconds, meter.tokens
            subject.answer([reqs[i] for i in parts[name][r]])
            scoring[name] += time.perf_counter() - start
            in_model[name] += meter.seconds - model_start
            fed[name] += meter.tokens - tokens_start

    for r in range(rounds):
        if r % 2 == 0:
            run_sweep()
            run_suites(r)
        else:
            run_suites(r)
            run_sweep()
        print(f"round {r + 1}/{rounds}", file=sys.stderr)
    return sweep, scoring, in_model, fed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=256, help="requests per suite")
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="torch threads")
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    threads = torch.get_num_threads()

    subject = load_subject(args.model, batch_size=args.batch_size)
    requests = {
        name: suite_requests(name, data, subject, args.limit, args.seed)
        for name, (_, data) in SUITES.items()
    }
    forward_seconds(subject.model, 4, 32)  # warm up
    subject._packs  # noqa: B018 -- settle which path scores (a probe) before the clock runs
    sweep, scoring, in_model, fed = run_rounds(subject, requests, args.rounds)
    if torch.get_num_threads() != threads:
        raise SystemExit(f"torch threads changed {threads} -> {torch.get_num_threads()}")

    table = [
        {"batch": b, "length": n, "tokens_per_s": round(args.rounds * b * n / s, 1)}
        for (b, n), s in sweep.items()
    ]
    best = max(table, key=lambda row: row["tokens_per_s"])
    roofline = best["tokens_per_s"]
    suites = []
    for name, (kind, _) in SUITES.items():
        needed = needed_tokens(subject, requests[name])
        achieved = needed / scoring[name]
        suites.append(
            {
                "suite": name,
                "scoring": kind,
                "requests": len(requests[name]),
                "needed_tokens": needed,
                "forwarded_tokens": fed[name],
                "seconds": round(scoring[name], 2),
                "seconds_in_model_forward": round(in_model[name], 2),
                "tokens_per_s": round(achieved, 1),
                "ratio": round(achieved / roofline, 3),
                "target": TARGETS.get(kind),
            }
        )
    result = {
        "model": args.model,
        "batch_size": args.batch_size,
        "max_batch_tokens": subject.max_batch_tokens,
        "packed_scoring": subject._packs,
        "torch_threads": threads,
        "rounds": args.rounds,
        "roofline_tokens_per_s": roofline,
        "roofline_shape": {"batch": best["batch"], "length": best["length"]},
        "sweep": table,
        "suites": suites,
        "out_of_scope": {"faithfulness": "generation: decoding steps, not scoring forwards"},
    }
    text = json.dumps(result, indent=2)
    print(text)
    for s in suites:
        print(
            f"{s['suite']} ({s['scoring']}): {s['tokens_per_s']:8.1f} tokens/s = "
            f"{100 * s['ratio']:5.1f}% of {roofline:.1f}",
            file=sys.stderr,
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
