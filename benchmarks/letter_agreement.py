"""Letter answers against candidate scores, on the same items: how far a model asked the
options by letter (as a chat-only model is, :mod:`faithprobe.asking.letters`) agrees with
the same model's candidate scores, in each candidate-scoring step of the audit.

One model answers both ways: SmolLM2 (``embedded``) behind faithprobe's OpenAI-compatible
server, ``faithprobe serve --model embedded``, which serves ``/v1/completions`` with echo
and logprobs (the candidates' scores) and ``/v1/chat/completions`` with ``top_logprobs``
(the letters). Each step (distractors, natural-logic, confidence-shift) runs at the audit's
budget (its items and options) twice on the same pairs: with ``-o answer=scores`` (through
``openai:embedded``'s completions API, or the local model: below), and with ``-o
answer=letter`` through ``openai:embedded,api=chat`` (the chat-only model the card's chat
audit asks). A server is started
here in process unless ``--letters-url`` names a running one (e.g. a ``--chat-only`` server
that ``faithprobe audit --model openai:embedded,api=chat,base_url=URL --cache-dir DIR``
already asked: with the same ``--cache-dir`` its answers are read from the cache, the same
requests under the same fingerprint); ``--scores-url`` names the server for the scores
(one serving completions), and with ``--letters-url`` alone the scores are the local
model's in process: the same weights, whose scores the endpoint returns within 1e-4 in
log-probability (``tests/test_openai_subject.py``), at a fraction of the cost of one echo
request per candidate. Every input the pairs use is one item; per step:

* ``agreement``: the share of items whose reply names the option the scores rank first (a
  reply naming none does not agree), with a 95% cluster-bootstrap interval over the step's
  original items (an input and the inputs made from it are one cluster);
* ``agreement_answered``: the same over the items whose reply named an option;
* ``agreement_probabilities``: the share whose likeliest letter (from the top_logprobs at
  the reply's first token) is the scores' top choice, over the items with letter
  probabilities;
* ``control``: the agreement a constant-letter answerer gets, the best one: the largest
  share of items whose scores' top choice sits at one position;
* ``no_answer``: the share of replies naming no option, with its interval;
* ``letter_text_conflict``: the share of replies that open with one option's letter and go
  on with another option's text ("A. False" where A is True; the letter is what is read);
* each mode's competence on the step (accuracy on its original items, and the best constant
  answer's), from the step's metrics.

    python benchmarks/letter_agreement.py --data-dir ../shared/data \\
        --out /tmp/letter-agreement [--budget small] [--json benchmarks/results/letter_agreement.json]
        [--letters-url http://127.0.0.1:8765/v1 [--scores-url http://127.0.0.1:8766/v1]]
        [--cache-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from faithprobe.audit.plan import declared_steps, step_data
from faithprobe.catalog.locate import data_roots
from faithprobe.metrics.intervals import clustered_mean
from faithprobe.multiple_choice_prompts import LETTERS
from faithprobe.records import NLI_LABELS
from faithprobe.runner import RunConfig, run
from faithprobe.subjects import load_subject
from faithprobe.subjects.endpoint.subject import EndpointConfig, OpenAISubject
from faithprobe.suites.natural_logic.options import DEFAULT_LABEL_WORDS, split_label_words

STEPS = ("distractors", "natural-logic", "confidence-shift")
MODES = ("scores", "letter")
MODEL = "embedded"


def _index(value, options) -> float:
    """The position of ``value`` among ``options``; NaN for no answer."""
    return float(list(options).index(value)) if isinstance(value, str) else np.nan


def _argmax(values) -> float:
    """The position of the largest finite value; NaN where there is none."""
    if values is None:
        return np.nan
    x = np.asarray([np.nan if v is None else v for v in values], dtype=float)
    return float(np.nanargmax(x)) if np.isfinite(x).any() else np.nan


# suite -> per side of a row (prefix "original_" or ""), (chosen position, likeliest
# position by the answer's probabilities)
READERS: dict[str, Callable[[pd.Series, str], tuple[float, float]]] = {
    "distractors": lambda r, side: (
        _index(r[f"{side}prediction"], r["candidates"]), _argmax(r[f"{side}scores"])),
    "natural-logic": lambda r, side: (
        _index(r[f"{side}prediction"], NLI_LABELS),
        np.nan if pd.isna(r[f"{side}p_entailment"]) else float(r[f"{side}p_entailment"] < 0.5)),
    "confidence-shift": lambda r, side: (
        float(r[f"{side}prediction"]) if r[f"{side}prediction"] >= 0 else np.nan,
        _argmax(r[f"{side}confidences"])),
}  # fmt: skip
# suite -> per side of a row, the options the input listed by letter
OPTIONS: dict[str, Callable[[pd.Series, str], Sequence[str]]] = {
    "distractors": lambda r, side: r["candidates"],
    "natural-logic": lambda r, side: split_label_words(DEFAULT_LABEL_WORDS),
    "confidence-shift": lambda r, side: r[f"{side}choices"],
}
# the sides of a row that hold an input of their own (a distractors row's original is a base
# item, which its own "none" row holds as well)
SIDES = {"distractors": ("",), "natural-logic": ("original_", ""), "confidence-shift": (
    "original_", "")}  # fmt: skip


def conflicting(reply, options: Sequence[str]) -> bool:
    """Whether ``reply`` opens with one option's letter and goes on with another option's
    text ("A. False" where A is "True")."""
    found = re.match(r"^\W*([A-Z])[).:]\s*(.+?)\W*$", reply) if isinstance(reply, str) else None
    if found is None:
        return False
    texts = [o.strip().lower() for o in options]
    named = [j for j, t in enumerate(texts) if t == found.group(2).strip().lower()]
    return bool(named) and LETTERS.index(found.group(1)) not in named


def items(results: pd.DataFrame, suite: str) -> pd.DataFrame:
    """One row per input: its id, cluster (the original item), chosen position, likeliest
    position by probabilities (NaN: none) and whether its reply's letter and text name
    different options."""
    out = []
    for _, r in results.iterrows():
        for side in SIDES[suite]:
            choice, likeliest = READERS[suite](r, side)
            input_id = r["original_id"] if side else r["intervened_id"]
            conflict = conflicting(r.get(f"{side}reply"), OPTIONS[suite](r, side))
            out.append((input_id, r["original_id"], choice, likeliest, conflict))
    frame = pd.DataFrame(out, columns=["id", "cluster", "choice", "likeliest", "conflict"])
    return frame.drop_duplicates("id").set_index("id")


def _share(values: pd.Series, clusters: pd.Series, seed: int) -> dict:
    est = clustered_mean(values.astype(float), clusters, seed=seed, proportion=True)
    return {"value": est.value, "ci_low": est.ci_low, "ci_high": est.ci_high, "n": est.n,
            "n_clusters": est.n_clusters}  # fmt: skip


def agreement(scores: pd.DataFrame, letters: pd.DataFrame, seed: int) -> dict:
    """The figures of the module docstring for one step's two item tables."""
    both = scores.add_suffix("_scores").join(letters.add_suffix("_letters"), how="inner")
    top = both["choice_scores"]
    said = both["choice_letters"]
    clusters = both["cluster_scores"]
    answered = said.notna()
    with_p = both["likeliest_letters"].notna()
    positions = top.value_counts(normalize=True)
    return {
        "items": len(both),
        "agreement": _share(said == top, clusters, seed),
        "agreement_answered": _share((said == top)[answered], clusters[answered], seed),
        "agreement_probabilities": _share(
            (both["likeliest_letters"] == top)[with_p], clusters[with_p], seed
        ),
        "items_with_probabilities": int(with_p.sum()),
        "control": {"value": float(positions.max()), "position": int(positions.idxmax())},
        "no_answer": _share(~answered, clusters, seed),
        "letter_text_conflict": _share(both["conflict_letters"], clusters, seed),
    }


def step_run(step, mode: str, subject, roots, args) -> tuple[pd.DataFrame, dict, float]:
    """``step`` at the budget with ``-o answer=mode``, asked of ``subject``: its results,
    metrics and seconds."""
    data = step_data(step, roots, args.budget)
    if data.reason:
        raise SystemExit(f"{step.name}: {data.reason}")
    limit, options = step.size(args.budget)
    config = RunConfig(suite=step.suite, data=data.path, limit=limit, seed=args.seed,
                       out=args.out / step.name / mode, cache_dir=args.cache_dir,
                       options={**options, "answer": mode})  # fmt: skip
    clock = time.perf_counter()
    finished = run(config, subjects=[subject])
    return finished.results, finished.metrics, time.perf_counter() - clock


def competence(metrics: dict) -> dict:
    (record,) = metrics["competence"]
    return {k: record[k] for k in ("value", "ci_low", "ci_high", "baseline", "baseline_answer",
                                   "competent", "n")}  # fmt: skip


def measure(scores, letters_url: str, args) -> dict:
    """The figures of every step: ``scores`` answers the candidates (a subject), the chat
    endpoint at ``letters_url`` the letters."""
    subjects = {
        "scores": scores,
        "letter": OpenAISubject(
            MODEL, EndpointConfig(letters_url, api="chat", concurrency=args.concurrency)
        ),
    }
    roots = data_roots(args.data_dir)
    found = {}
    for step in (s for s in declared_steps() if s.name in STEPS):
        runs = {mode: step_run(step, mode, subjects[mode], roots, args) for mode in MODES}
        tables = {mode: items(res, step.suite) for mode, (res, _, _) in runs.items()}
        found[step.name] = {
            **agreement(tables["scores"], tables["letter"], args.seed),
            "answer_modes": {m: runs[m][1]["answer_modes"][0]["answer_mode"] for m in MODES},
            "competence": {m: competence(runs[m][1]) for m in MODES},
            "seconds": {m: round(runs[m][2], 1) for m in MODES},
        }
        print(step.name, json.dumps(found[step.name], indent=1), flush=True)
    return found


def scores_subject(url: str | None, args):
    """The model answering the candidates' scores: ``openai:embedded`` at ``url`` (its
    completions API), or the local model where there is none."""
    if url is None:
        return load_subject(MODEL)
    return OpenAISubject(MODEL, EndpointConfig(url, concurrency=args.concurrency))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=Path("runs/letter-agreement"))
    parser.add_argument("--budget", default="small", choices=("small", "default"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--letters-url", help="a running `faithprobe serve --model embedded`")
    parser.add_argument(
        "--scores-url",
        help="one serving completions for the scores (default: "
        "the local model, with --letters-url; else the server started here)",
    )
    parser.add_argument("--cache-dir", type=Path, help="the answer cache (default: OUT/cache)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    args.cache_dir = args.cache_dir or args.out / "cache"
    if args.letters_url:
        found = measure(scores_subject(args.scores_url, args), args.letters_url, args)
    else:
        from faithprobe.serving import OpenAIServer

        with OpenAIServer(load_subject(MODEL), model_name=MODEL) as server:
            found = measure(scores_subject(server.url, args), server.url, args)
    if args.json:
        args.json.write_text(json.dumps({"budget": args.budget, "seed": args.seed,
                                         "steps": found}, indent=1) + "\n")  # fmt: skip


if __name__ == "__main__":
    main()
