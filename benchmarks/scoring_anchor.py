"""The card's scoring requests answered by lm-evaluation-harness and by faithprobe: the
anchor for how fast candidate scoring should be.

The distinct candidate-scoring requests one audit step asks the embedded SmolLM2-135M at a
budget (:mod:`audit_requests`; default the natural-logic step at the small budget with the
full NLI-XY data, the step that takes most of that audit), at most ``--max-requests``:

* lm-eval: each (context, candidate) pair a ``loglikelihood`` instance of its ``HFLM`` on the
  same converted folder (float32, same torch threads, ``--batch-size`` rows), the
  candidate with its separating space as our requests score it;
* faithprobe: ``HFCausal.answer`` of the requests, no answer cache (packed rows, each
  beginning several requests share read once).

Both in this one process, taking turns in ``--rounds`` contiguous chunks so that both see
the same load. Reports seconds and requests/s of each and their ratio, the tokens each
feeds, padding aside (lm-eval: each request's context and the fed tokens of its longest
candidate, as its collator groups a context's candidates into one row; ours: each shared
beginning once, and the candidates' fed tokens), the largest |difference of log-probability| and the requests
whose best candidate differs. Needs ``pip install '.[bench]'``. Usage::

    python benchmarks/scoring_anchor.py [--step natural-logic] [--budget small]
        [--data-dir ../shared/data] [--max-requests 1200] [--rounds 4] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from audit_requests import step_requests  # noqa: E402

from faithprobe.requests import CandidateScoreRequest  # noqa: E402
from faithprobe.subjects import load_subject  # noqa: E402
from faithprobe.subjects.hf import causal as hf_causal  # noqa: E402
from faithprobe.subjects.hf.packed_scoring import groups, layout, shared_pieces  # noqa: E402


def lm_eval_pairs(requests: list[CandidateScoreRequest]) -> list[tuple[str, str]]:
    """(context, continuation) of every candidate, as lm-eval's loglikelihood takes them."""
    for r in requests:
        if r.suffix or r.first_token or r.start:
            raise SystemExit(f"a request lm-eval cannot be given as is: {r!r}")
    return [(r.context, f" {c}") for r in requests for c in r.candidates]


def our_tokens(subject, requests) -> int:
    """Tokens our packed rows feed for ``requests`` answered in one call, padding aside:
    each shared beginning once, and the candidates' fed tokens."""
    found = [group for _, group in groups([subject._encode(r)[0] for r in requests],
                                          subject.max_length)]  # fmt: skip
    pieces = shared_pieces(found, hf_causal.PACKED_ROW_TOKENS)
    return sum(len(layout([found[i] for i in piece]).ids) for piece in pieces)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--step", default="natural-logic")
    parser.add_argument("--budget", default="small")
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--max-requests", type=int, default=1200)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    ours = load_subject("embedded", batch_size=args.batch_size)
    found = step_requests(ours, args.budget, args.data_dir, steps=[args.step])[args.step]
    requests = [r for r in found if isinstance(r, CandidateScoreRequest)][: args.max_requests]
    theirs = HFLM(pretrained=ours.model, tokenizer=ours.tokenizer, batch_size=args.batch_size)

    bounds = [round(k * len(requests) / args.rounds) for k in range(args.rounds + 1)]
    seconds = {"lm_eval": 0.0, "faithprobe": 0.0}
    fed = 0
    scores: dict[str, list[float]] = {"lm_eval": [], "faithprobe": []}
    for k in range(args.rounds):
        chunk = requests[bounds[k] : bounds[k + 1]]
        fed += our_tokens(ours, chunk)
        pairs = lm_eval_pairs(chunk)
        instances = [
            Instance("loglikelihood", {}, pair, i, ("anchor", i, 1)) for i, pair in enumerate(pairs)
        ]
        sides = ["lm_eval", "faithprobe"] if k % 2 == 0 else ["faithprobe", "lm_eval"]
        got = {}
        for side in sides:
            clock = time.perf_counter()
            with torch.inference_mode():
                if side == "lm_eval":
                    got[side] = [ll for ll, _ in theirs.loglikelihood(instances, disable_tqdm=True)]
                else:
                    got[side] = [s for a in ours.answer(chunk) for s in a.logprobs]
            seconds[side] += time.perf_counter() - clock
        for side in seconds:
            scores[side] += got[side]

    per_request = []
    at = 0
    for r in requests:
        n = len(r.candidates)
        per_request.append((scores["lm_eval"][at : at + n], scores["faithprobe"][at : at + n]))
        at += n
    best = lambda xs: max(range(len(xs)), key=xs.__getitem__)  # noqa: E731
    differing = sum(best(a) != best(b) for a, b in per_request)
    gap = max(abs(a - b) for a, b in zip(scores["lm_eval"], scores["faithprobe"], strict=True))
    encode = lambda text: len(ours.tokenizer(text)["input_ids"])  # noqa: E731
    # lm-eval's collator runs requests of one context once, to the longest continuation
    lengths = [encode(r.context) + max(encode(f" {c}") for c in r.candidates) - 1
               for r in requests]  # fmt: skip
    result = {
        "step": args.step,
        "budget": args.budget,
        "requests": len(requests),
        "pairs": len(lengths),
        "torch_threads": torch.get_num_threads(),
        "batch_size": args.batch_size,
        "seconds": {k: round(v, 2) for k, v in seconds.items()},
        "requests_per_s": {k: round(len(requests) / v, 2) for k, v in seconds.items()},
        "speedup": round(seconds["lm_eval"] / seconds["faithprobe"], 2),
        "tokens": {"lm_eval": sum(lengths), "faithprobe": fed},
        "max_abs_logprob_diff": gap,
        "differing_best_candidate": differing,
    }
    for key, value in result.items():
        print(f"{key}: {value}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
