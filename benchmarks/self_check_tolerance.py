"""The endpoint self-check's tolerance (:data:`faithprobe.subjects.endpoint.self_check.
TOLERANCE`), measured: how far an honest server's two numbers for one token can lie apart,
and how far a server whose echo is shifted by one puts them.

For each probe text P (the opening words of SQuAD passages, 5 to 60 words) the greedy next
token t is read from a forward pass over P (what ``max_tokens=1`` generation reports), and
compared with

* **honest**: t's log-probability echoed from a forward pass over P + t (position len(P) - 1
  of the longer pass), in float32 and in bfloat16: the rounding of two passes of different
  length, all that separates the two numbers on a correct server;
* **shifted by one**: log p(t | P, t), the value a server reading each token's log-probability
  from the logits of the next position reports (llama-cpp-python on a model without a
  start token).

    python benchmarks/self_check_tolerance.py [--model embedded] [--data-dir ../shared/data]
        [--probes 60] [--json OUT.json]

Prints the largest and 99th-percentile |honest difference| per dtype, and how many shifted
values fall within a few tolerances of the generated one.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import torch

from faithprobe.subjects import load_subject

TOLERANCES = (0.01, 0.05, 0.1, 0.2, 0.5)


def probe_texts(squad: Path, n: int) -> list[str]:
    """The opening 5 to 60 words of ``n`` SQuAD passages (six per article, a seeded cut)."""
    data = json.loads(squad.read_text(encoding="utf-8"))["data"]
    texts = []
    for article in data:
        for paragraph in article["paragraphs"][:6]:
            words = paragraph["context"].split()
            cut = random.Random(len(texts)).randint(5, min(60, len(words) - 1))
            texts.append(" ".join(words[:cut]))
            if len(texts) == n:
                return texts
    return texts


def differences(model, tokenizer, texts: list[str]) -> tuple[list[float], list[float]]:
    """Per text: |echoed - generated| and |shifted - generated| for the greedy token."""
    honest, shifted = [], []
    with torch.inference_mode():
        for text in texts:
            ids = tokenizer(text).input_ids
            last = torch.log_softmax(model(torch.tensor([ids])).logits[0, -1].float(), -1)
            token = int(last.argmax())
            rows = torch.log_softmax(model(torch.tensor([ids + [token]])).logits[0].float(), -1)
            generated = float(last[token])
            honest.append(abs(float(rows[len(ids) - 1, token]) - generated))
            shifted.append(abs(float(rows[len(ids), token]) - generated))
    return honest, shifted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--probes", type=int, default=60)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)  # a shared machine: one thread is faster than two contending

    subject = load_subject(args.model)
    texts = probe_texts(args.data_dir / "squad" / "dev-v1.1.json", args.probes)
    figures = {"probes": len(texts)}
    for dtype in (torch.float32, torch.bfloat16):
        honest, shifted = differences(subject.model.to(dtype), subject.tokenizer, texts)
        honest.sort()
        name = str(dtype).removeprefix("torch.")
        figures[name] = {
            "honest_max": honest[-1],
            "honest_p99": honest[int(0.99 * len(honest)) - 1],
            "shifted_min": min(shifted),
            "shifted_median": sorted(shifted)[len(shifted) // 2],
            "shifted_within": {t: sum(s <= t for s in shifted) for t in TOLERANCES},
        }
        print(name, json.dumps(figures[name]), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
