"""Third-party OpenAI-compatible servers against the model in process: the rows of the
compatibility table in docs/models.md ("Servers faithprobe has been tried against").

Each ``--server NAME=URL`` serves the embedded SmolLM2 (llama-cpp-python's server on its
GGUF, LiteLLM's proxy in front of ``faithprobe serve``, ...) under the model name
``--served-name``. For each API mode (``completions``: candidate scores; ``chat``: letters)
the script asks the server, through faithprobe's ``openai:`` client, the small audit's
requests of the three candidate-scoring steps (the card's items, :mod:`audit_requests`),
at most ``--max-requests`` per step:

* **the self-check** first: passed or refused, its line, and the seconds it took;
* **items per second** where it passed (requests answered per second of wall time, at the
  client's default concurrency of 4);
* **agreement with the model in process**: candidate scores against the embedded model's
  own (the same best candidate; the largest and median |difference| of a candidate's
  log-probability); letters against the same letter requests answered by the
  embedded model behind ``faithprobe serve`` started here (the same letter read from the
  reply, and the same likeliest letter in ``top_logprobs``); each beside the control a
  constant answerer gets (the largest share of items whose best candidate, or likeliest
  letter, sits at one position).

    python benchmarks/endpoint_servers.py --server llama-cpp-python=http://127.0.0.1:8811/v1 \\
        [--server litellm=http://127.0.0.1:4000/v1] [--served-name smollm2] \\
        [--data-dir ../shared/data] [--max-requests 120] [--json OUT.json]

Every answer is asked anew (no answer cache). Prints each server and mode's figures as JSON;
``--json`` keeps them all.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter

from audit_requests import step_requests

from faithprobe.errors import ModelError
from faithprobe.requests import CandidateScores, LetterChoice
from faithprobe.serving import OpenAIServer
from faithprobe.subjects import load_subject
from faithprobe.subjects.endpoint.subject import EndpointConfig, OpenAISubject

STEPS = ("distractors", "natural-logic", "confidence-shift")


def client(url: str, name: str, api: str) -> OpenAISubject:
    return OpenAISubject(name, EndpointConfig(url, api=api, timeout=120.0, max_retries=2))


def best(values) -> int | None:
    found = [(v, i) for i, v in enumerate(values or ()) if v is not None]
    return max(found)[1] if found else None


def agreement(reference: list, answers: list) -> dict:
    """How far ``answers`` agree with ``reference`` (the model in process)."""
    same, deltas, replies = 0, [], 0
    positions = Counter(best(a.logprobs) for a in reference)
    for a, b in zip(reference, answers, strict=True):
        same += best(a.logprobs) == best(b.logprobs)
        if isinstance(a, CandidateScores):
            deltas += [abs(x - y) for x, y in zip(a.logprobs, b.logprobs, strict=True)]
        elif isinstance(a, LetterChoice):
            replies += a.text == b.text
    n = len(reference)
    scores = isinstance(reference[0], CandidateScores)
    return {
        "n": n,
        "agreement": same / n,
        # a constant answerer's agreement: the best single position's share
        "constant_agreement": max(positions.values()) / n,
        "same_reply": None if scores else replies / n,
        "max_abs_delta": max(deltas) if deltas else None,
        "median_abs_delta": statistics.median(deltas) if deltas else None,
    }


def measure(subject: OpenAISubject, by_step: dict, reference) -> dict:
    """The self-check's outcome, then each step's speed and agreement with
    ``reference(step)``, the model in process."""
    first = next(iter(by_step.values()))[:1]
    clock = time.perf_counter()
    try:
        subject.answer(first)  # the self-check runs before the first answer
    except ModelError as err:
        return {"self_check": "refused", "line": str(err),
                "seconds": round(time.perf_counter() - clock, 1)}  # fmt: skip
    checked = {k: v for k, v in (subject.describe().get("self_check") or {}).items()}
    figures = {"self_check": "passed", "checks": checked, "steps": {}}
    for step, requests in by_step.items():
        clock = time.perf_counter()
        answers = subject.answer(requests)
        seconds = time.perf_counter() - clock
        figures["steps"][step] = {
            "items_per_second": len(requests) / seconds,
            **agreement(reference(step), answers),
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", action="append", default=[], metavar="NAME=URL")
    parser.add_argument("--served-name", default="smollm2")
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--max-requests", type=int, default=120)
    parser.add_argument("--apis", default="completions,chat")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    local = load_subject(args.model)
    served = OpenAIServer(local, model_name=args.served_name).start()  # letters in process
    by_api = {}
    for api in args.apis.split(","):
        asked = step_requests(client(served.url, args.served_name, api), data_dir=args.data_dir,
                              steps=STEPS)  # fmt: skip
        by_api[api] = {s: r[: args.max_requests] for s, r in asked.items()}
    # the model in process: its own scores, and its letters through faithprobe serve
    answerers = {"completions": local, "chat": client(served.url, args.served_name, "chat")}
    references: dict = {}

    def reference(api: str, step: str) -> list:
        if (api, step) not in references:
            references[api, step] = answerers[api].answer(by_api[api][step])
        return references[api, step]

    results: dict = {}
    for server in args.server:
        name, _, url = server.partition("=")
        for api, by_step in by_api.items():
            key = f"{name} api={api}"
            results[key] = measure(client(url, args.served_name, api), by_step,
                                   lambda step, api=api: reference(api, step))  # fmt: skip
            print(key, json.dumps(results[key], indent=1, default=str), flush=True)
    served.stop()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, default=str)


if __name__ == "__main__":
    main()
