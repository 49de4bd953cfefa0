"""Saliency throughput and agreement: the attributors as faithprobe runs them against
Captum at its own defaults, on the same inputs and model in this one process.

faithprobe does not reimplement Integrated Gradients or Occlusion; it calls Captum
(``LayerIntegratedGradients``, ``Occlusion``) and chooses how many perturbed inputs go
through the model at once, which bounds memory:

* IG -- ours: ``internal_batch_size`` 16 (a batch of 16 interpolated inputs, forward and
  backward); Captum's default (``internal_batch_size=None``) runs all ``n_steps`` inputs
  as one batch, memory growing with ``n_steps``; and one step at a time (1), the tightest
  bound.
* Occlusion -- ours: ``perturbations_per_eval`` 32 (as the extractive QA subject sets it,
  its ``batch_size``); Captum's default (1) runs each occluded copy alone.

For each configuration: seconds per input, the speed ratio of ours to the alternative, and
the largest absolute difference of the saliency from ours (batching must change nothing but
rounding: < 1e-4). Inputs are the ``right-reasons`` suite's own: generated comparison items
(short) and, when the file is there, Quoref questions (contexts of a full 384-token window).

    python benchmarks/saliency.py [--model runs/qa-rr] [--items 12] [--long-items 3] [--steps 50]

``--model`` is an extractive QA folder (default: the embedded MiniLM with a seeded,
untrained QA head -- timing and agreement do not need a trained head).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from faithprobe.generators.comparisons import ComparisonConfig, generate
from faithprobe.requests import SaliencyRequest
from faithprobe.subjects.hf.attribution import IntegratedGradients, Occlusion

QUOREF = Path(__file__).resolve().parents[2] / "shared/data/quoref/quoref-dev-v0.1.json"


def load(model: str | None):
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer, set_seed

    from faithprobe.training.common import resolve_base

    path = Path(model) if model else resolve_base(None).path
    set_seed(0)
    return (
        AutoModelForQuestionAnswering.from_pretrained(path).float().eval(),
        AutoTokenizer.from_pretrained(path),
    )


def inputs(n: int, n_long: int) -> dict[str, list[SaliencyRequest]]:
    items = generate(ComparisonConfig(pairs_per_domain=2), 0)[::4][:n]
    out = {"comparison": [SaliencyRequest(i.question, i.context) for i in items]}
    if QUOREF.is_file():
        from faithprobe.datasets.qa_formats import read_qa

        quoref = read_qa(QUOREF, "squad")[::97][:n_long]
        out["quoref"] = [SaliencyRequest(q.question, q.context) for q in quoref]
    return out


def timed(attributor, requests) -> tuple[float, list[tuple[float, ...]]]:
    attributor.attribute(requests[:1])  # warm-up
    start = time.perf_counter()
    results = attributor.attribute(requests)
    return (time.perf_counter() - start) / len(requests), [r.saliency for r in results]


def max_diff(a, b) -> float:
    return max(abs(x - y) for ra, rb in zip(a, b, strict=True) for x, y in zip(ra, rb, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="extractive QA folder")
    parser.add_argument("--items", type=int, default=12, help="comparison inputs")
    parser.add_argument("--long-items", type=int, default=3, help="Quoref inputs (full window)")
    parser.add_argument("--steps", type=int, default=50, help="IG interpolation points")
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args()

    model, tokenizer = load(args.model)
    configurations = {
        "integrated-gradients": (
            ("ours: internal_batch_size 16", IntegratedGradients, {"internal_batch_size": 16}),
            (f"captum default: all {args.steps} steps at once", IntegratedGradients,
             {"internal_batch_size": args.steps}),
            ("one step at a time", IntegratedGradients, {"internal_batch_size": 1}),
        ),
        "occlusion": (
            ("ours: perturbations_per_eval 32", Occlusion, {"batch_size": 32}),
            ("captum default: perturbations_per_eval 1", Occlusion, {"batch_size": 1}),
        ),
    }  # fmt: skip
    rows = []
    for kind, requests in inputs(args.items, args.long_items).items():
        lengths = [len(tokenizer(r.question, r.context, truncation="only_second",
                                 max_length=384).input_ids) for r in requests]  # fmt: skip
        for method, configs in configurations.items():
            ours = None
            for label, cls, options in configs:
                extra = {"n_steps": args.steps} if cls is IntegratedGradients else {}
                seconds, saliency = timed(cls(model, tokenizer, **extra, **options), requests)
                ours = ours or (seconds, saliency)
                rows.append({
                    "inputs": kind, "n": len(requests),
                    "mean_tokens": round(sum(lengths) / len(lengths), 1),
                    "method": method, "configuration": label,
                    "seconds_per_input": round(seconds, 4),
                    "ours_speedup": round(seconds / ours[0], 2),
                    "max_abs_diff_from_ours": max_diff(saliency, ours[1]),
                })  # fmt: skip
                print(json.dumps(rows[-1]))
    result = {
        "model": args.model or "embedded MiniLM-L6 (seeded untrained QA head)",
        "ig_steps": args.steps,
        "torch_threads": torch.get_num_threads(),
        "rows": rows,
    }
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    worst = max(r["max_abs_diff_from_ours"] for r in rows)
    if worst >= 1e-4:
        raise SystemExit(f"saliency differs across batch sizes by {worst:.2e} (limit 1e-4)")


if __name__ == "__main__":
    main()
