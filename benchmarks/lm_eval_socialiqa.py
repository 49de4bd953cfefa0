"""Social IQA scoring: faithprobe's causal scorer against EleutherAI's lm-evaluation-harness.

Both score the same Social IQA dev instances with the same model (the embedded
SmolLM2-135M, converted safetensors folder) in this one process, same torch threads:

* lm-eval: a local task (``benchmarks/lm_eval_tasks``: lm-eval's own ``social_iqa`` prompt
  ``"Q: {{context}} {{question}}\\nA:"``, target delimiter ``" "``, choices answerA..C,
  metrics ``acc`` and ``acc_norm``) loaded through ``TaskManager(include_path=...)``, its ``hf`` model on the
  folder (float32, cpu), run by ``lm_eval.simple_evaluate`` with ``log_samples=True``;
* ours: ``HFCausal.answer`` over
  ``CandidateScoreRequest(ChoicePrompt().render(prompt), choices)`` for the examples of
  ``read_socialiqa``, no answer cache; prediction = argmax of the summed log-probs (``acc``)
  and of the confidence-shift suite's ``per-char`` scores (``acc_norm``).

The instances are scored in ``--rounds`` contiguous chunks, the two sides taking turns to
go first, so that on a shared machine both see the same load. Scoring time is the wall
clock of the scoring call only (lm-eval's ``loglikelihood``,
tokenisation included; our ``answer``, tokenisation included); the end-to-end
times add task building / reading and metrics, the totals add model loading too. Reports
both accuracies, ``acc`` and ``acc_norm`` (each must agree within 0.2 points, or one
instance on a small ``--limit``; instances whose ``acc_norm`` differs are counted),
the instances whose predicted choice differs, the largest per-choice |log-prob difference|,
how many (context, choice) pairs the two tokenise differently, instances/s of each and
their ratio ours / lm-eval (target >= 1.5x). Needs ``pip install '.[bench]'``. Usage:

    python benchmarks/lm_eval_socialiqa.py [--limit N] [--batch-size 16] [--threads T]
        [--rounds 8] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402
from forward_meter import ForwardMeter  # noqa: E402

from faithprobe.datasets.multiple_choice import read_socialiqa  # noqa: E402
from faithprobe.multiple_choice_prompts import ChoicePrompt  # noqa: E402
from faithprobe.requests import CandidateScoreRequest  # noqa: E402
from faithprobe.subjects.gguf.embedded import converted  # noqa: E402
from faithprobe.subjects.hf.causal import HFCausal  # noqa: E402
from faithprobe.suites.confidence_shift.normalisation import choice_scores  # noqa: E402

HERE = Path(__file__).resolve().parent
TASKS_DIR = HERE / "lm_eval_tasks"
TASK = "faithprobe_socialiqa"
DEFAULT_DATA = HERE.parent.parent / "shared" / "data" / "socialiqa" / "dev.jsonl"


def argmax(values) -> int:
    """First index of the largest value (numpy's and lm-eval's tie-break)."""
    return max(range(len(values)), key=lambda i: (values[i], -i))


def load_faithprobe(folder: Path, batch_size: int):
    start = time.perf_counter()
    subject = HFCausal.from_pretrained(folder, name="embedded", batch_size=batch_size)
    return subject, time.perf_counter() - start


def load_lm_eval(folder: Path, batch_size: int):
    """lm-eval's ``hf`` model on the folder; its ``loglikelihood`` wrapped in a timer."""
    from lm_eval.api.registry import get_model

    start = time.perf_counter()
    lm = get_model("hf").create_from_arg_string(
        f"pretrained={folder},dtype=float32", {"batch_size": batch_size, "device": "cpu"}
    )
    load = time.perf_counter() - start
    timed = {"scoring_s": 0.0, "n_requests": 0}
    inner = lm.loglikelihood

    def loglikelihood(requests, *args, **kwargs):  # the scoring call only
        start = time.perf_counter()
        out = inner(requests, *args, **kwargs)
        timed["scoring_s"] += time.perf_counter() - start
        timed["n_requests"] += len(requests)
        return out

    lm.loglikelihood = loglikelihood
    return lm, timed, load


def evaluate_lm_eval(lm, manager, indices: list[int]) -> tuple[dict, list[dict]]:
    """``simple_evaluate`` on the task's instances ``indices``; (results, logged samples)."""
    import lm_eval

    results = lm_eval.simple_evaluate(
        model=lm,
        tasks=[TASK],
        task_manager=manager,
        samples={TASK: indices},
        log_samples=True,
        bootstrap_iters=0,
    )
    return results["results"][TASK], results["samples"][TASK]


def chunks(n: int, rounds: int) -> list[list[int]]:
    rounds = max(1, min(rounds, n))
    bounds = [round(k * n / rounds) for k in range(rounds + 1)]
    return [list(range(bounds[k], bounds[k + 1])) for k in range(rounds)]


def token_diagnostics(lm, subject, requests, batch_size: int, ours_fed: int) -> dict:
    """Compare the two tokenisations and count the tokens each forwards, padding included.

    lm-eval encodes context + " " + choice whole and splits at the context's length; ours
    encodes the context and " " + choice apart. lm-eval runs each (context, choice) row in
    full, rows sorted longest first in batches of ``batch_size``; ours packs each instance
    (context and every choice but its last token) into rows shared with other instances,
    left-padded, and ``ours_fed`` is what its forwards were fed (:mod:`forward_meter`)."""
    mismatched, lm_rows, ours_encoded = [], [], []
    for i, r in enumerate(requests):
        ctx, cands = subject._encode(r)[0]
        ours_encoded.append((ctx, cands))
        for j, choice in enumerate(r.candidates):
            lctx, lcont = lm._encode_pair(r.context, " " + choice)
            lm_rows.append(len(lctx) + len(lcont) - 1)
            if (lctx, lcont) != (ctx, cands[j]):
                mismatched.append(
                    {
                        "instance": i,
                        "choice": j,
                        "ours": [ctx[-3:], cands[j]],
                        "lm_eval": [lctx[-3:], lcont],
                    }
                )
    lm_rows.sort(reverse=True)
    lm_tokens = sum(
        len(lm_rows[k : k + batch_size]) * lm_rows[k] for k in range(0, len(lm_rows), batch_size)
    )
    needed = sum(len(ctx) + sum(len(t) - 1 for t in cands) for ctx, cands in ours_encoded)
    return {
        "tokenisation_mismatched_pairs": len(mismatched),
        "tokenisation_mismatch_examples": mismatched[:5],
        "forwarded_tokens": {
            "lm_eval": lm_tokens,
            "ours": ours_fed,
            "ours_without_padding": needed,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="first N instances (all 1,954)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="Social IQA jsonl")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument(
        "--threads", type=int, default=None, help="torch threads (default: torch's)"
    )
    parser.add_argument(
        "--rounds", type=int, default=8, help="interleave the two in this many chunks"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args()

    if args.threads:
        torch.set_num_threads(args.threads)
    folder = converted()
    threads = torch.get_num_threads()
    import lm_eval
    from lm_eval.tasks import TaskManager

    subject, ours_load = load_faithprobe(folder, args.batch_size)
    subject._packs  # noqa: B018 -- settle the scoring path (a probe) before counting
    meter = ForwardMeter(subject.model)
    lm, lm_timed, lm_load = load_lm_eval(folder, args.batch_size)

    start = time.perf_counter()
    examples = read_socialiqa(args.data)[: args.limit]
    prompt = ChoicePrompt()
    requests = [CandidateScoreRequest(prompt.render(ex.prompt), ex.choices) for ex in examples]
    ours_e2e = time.perf_counter() - start
    start = time.perf_counter()
    manager = TaskManager(include_path=str(TASKS_DIR), metadata={"socialiqa_jsonl": str(args.data)})
    lm_index = time.perf_counter() - start

    n = len(examples)
    ours_logprobs: list[list[float] | None] = [None] * n
    samples: dict[int, dict] = {}
    lm_correct = 0.0
    ours_scoring = lm_e2e = 0.0
    for r, indices in enumerate(chunks(n, args.rounds)):
        for side in ("ours", "lm_eval") if r % 2 == 0 else ("lm_eval", "ours"):
            start = time.perf_counter()
            if side == "ours":
                scores = subject.answer([requests[i] for i in indices])
                ours_scoring += time.perf_counter() - start
                for i, sc in zip(indices, scores, strict=True):
                    ours_logprobs[i] = list(sc.logprobs)
                ours_e2e += time.perf_counter() - start
            else:
                metrics, logged = evaluate_lm_eval(lm, manager, indices)
                lm_e2e += time.perf_counter() - start
                lm_correct += metrics["acc,none"] * len(indices)
                samples.update((s["doc_id"], s) for s in logged)
        print(f"round {r + 1}: {indices[-1] + 1}/{n} instances", file=sys.stderr)
    if torch.get_num_threads() != threads:
        raise SystemExit(f"torch threads changed {threads} -> {torch.get_num_threads()}")

    start = time.perf_counter()
    ours_preds = [argmax(lp) for lp in ours_logprobs]
    golds = [ex.label for ex in examples]
    ours_acc = sum(p == g for p, g in zip(ours_preds, golds, strict=True)) / n
    ours_norm_correct = [
        argmax(list(choice_scores(lp, [1] * len(lp), ex.choices, "per-char"))) == ex.label
        for lp, ex in zip(ours_logprobs, examples, strict=True)
    ]
    ours_e2e += time.perf_counter() - start

    if sorted(samples) != list(range(n)):
        raise SystemExit("lm-eval did not log exactly the instances asked for")
    logged = [samples[i] for i in range(n)]
    lm_logprobs = [[float(x[0]) for x in s["filtered_resps"]] for s in logged]
    lm_preds = [argmax(lp) for lp in lm_logprobs]
    if [int(s["target"]) for s in logged] != golds:
        raise SystemExit("lm-eval's gold choices differ from faithprobe's")
    ours = {"acc": ours_acc, "preds": ours_preds, "logprobs": ours_logprobs,
            "acc_norm": sum(ours_norm_correct) / n}  # fmt: skip
    lm_norm_correct = [bool(s["acc_norm"]) for s in logged]
    theirs = {
        "acc": lm_correct / n,
        "acc_norm": sum(lm_norm_correct) / n,
        "acc_from_samples": sum(int(s["acc"]) for s in logged) / n,
        "preds": lm_preds,
        "logprobs": lm_logprobs,
    }

    differ = [i for i in range(n) if ours["preds"][i] != theirs["preds"][i]]
    diffs = [
        abs(a - b)
        for o, t in zip(ours["logprobs"], theirs["logprobs"], strict=True)
        for a, b in zip(o, t, strict=True)
    ]
    tokens = token_diagnostics(lm, subject, requests, args.batch_size, meter.tokens)
    gap = ours["acc"] - theirs["acc"]
    speed = {"ours": n / ours_scoring, "lm_eval": n / lm_timed["scoring_s"]}
    import transformers

    result = {
        "model": f"embedded SmolLM2-135M-Instruct ({folder.name}, float32)",
        "data": f"socialiqa/{args.data.name}",
        "instances": n,
        "scored_pairs": lm_timed["n_requests"],
        "batch_size": args.batch_size,
        "rounds": len(chunks(n, args.rounds)),
        "device": "cpu",
        "torch_threads": threads,
        "versions": {
            "lm_eval": lm_eval.__version__,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        },
        "lm_eval_acc": round(theirs["acc"], 6),
        "ours_acc": round(ours["acc"], 6),
        "acc_gap_points": round(100 * gap, 4),
        "lm_eval_acc_reported_equals_samples": abs(theirs["acc"] - theirs["acc_from_samples"])
        < 1e-9,
        "lm_eval_acc_norm": round(theirs["acc_norm"], 6),
        "ours_acc_norm_per_char": round(ours["acc_norm"], 6),
        "acc_norm_differing_instances": sum(
            a != b for a, b in zip(ours_norm_correct, lm_norm_correct, strict=True)
        ),
        "differing_predictions": len(differ),
        "differing_instances": differ[:50],
        "max_abs_logprob_diff": max(diffs),
        "mean_abs_logprob_diff": sum(diffs) / len(diffs),
        **tokens,
        "lm_eval_scoring_seconds": round(lm_timed["scoring_s"], 2),
        "ours_scoring_seconds": round(ours_scoring, 2),
        "lm_eval_instances_per_s": round(speed["lm_eval"], 2),
        "ours_instances_per_s": round(speed["ours"], 2),
        "speedup": round(speed["ours"] / speed["lm_eval"], 2),
        "lm_eval_end_to_end_seconds": round(lm_e2e, 2),
        "ours_end_to_end_seconds": round(ours_e2e, 2),
        "speedup_end_to_end": round(lm_e2e / ours_e2e, 2),
        "lm_eval_task_index_seconds": round(lm_index, 2),
        "lm_eval_load_seconds": round(lm_load, 2),
        "ours_load_seconds": round(ours_load, 2),
        "lm_eval_total_seconds": round(lm_load + lm_index + lm_e2e, 2),
        "ours_total_seconds": round(ours_load + ours_e2e, 2),
        "notes": (
            "Scoring = the scoring call only (tokenisation included), model load excluded; "
            "end-to-end adds reading the data / building the task and metrics; total adds "
            "model load and, for lm-eval, its TaskManager indexing its task library "
            "(listed apart). The instances are scored in contiguous rounds, the two "
            "alternating which goes first, so both see the same load on a shared machine. "
            "batch_size counts (context, choice) rows for lm-eval, packed rows for ours "
            "(each holding one or more instances: context and choices)."
        ),
    }
    text = json.dumps(result, indent=2)
    print(text)
    print(
        f"\n{n} instances: acc lm-eval {100 * theirs['acc']:.2f}% / ours {100 * ours['acc']:.2f}%"
        f" (gap {100 * gap:+.2f} pts), {len(differ)} predictions differ, max |dlogp| "
        f"{max(diffs):.2e}; {speed['lm_eval']:.1f} vs {speed['ours']:.1f} instances/s "
        f"-> {result['speedup']:.2f}x",
        file=sys.stderr,
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")
    tolerance = max(0.002, 1 / n)  # 0.2 points, or one instance on a small --limit
    if abs(gap) > tolerance + 1e-12:
        raise SystemExit(f"accuracies differ by {100 * gap:+.2f} points (limit 0.2)")
    norm_gap = ours["acc_norm"] - theirs["acc_norm"]
    if abs(norm_gap) > tolerance + 1e-12:
        raise SystemExit(f"acc_norm differs by {100 * norm_gap:+.2f} points (limit 0.2)")


if __name__ == "__main__":
    main()
