"""lm-evaluation-harness's API clients against ``faithprobe serve``: the same predictions as
lm-eval's in-process model.

One model (the embedded SmolLM2-135M, its converted safetensors folder, float32; or
``--model FOLDER``) answers HellaSwag-format items four ways, all driven by lm-eval 0.4.13's
``simple_evaluate`` on local tasks (``benchmarks/lm_eval_tasks``):

* scored (``faithprobe_hellaswag``: lm-eval's own ``hellaswag`` task, prompt, choices,
  ``acc`` and ``acc_norm``, on local data) by its in-process ``hf`` model (``HFLM``), and by
  ``local-completions`` against ``faithprobe serve --model MODEL`` started here, sending
  token ids (its default) and, with ``tokenized_requests=False``, strings;
* asked by letter (``faithprobe_hellaswag_letters``: the same items as a chat question,
  greedy, 8 tokens, cut at a new line) by ``HFLM`` with ``apply_chat_template`` and by
  ``local-chat-completions`` against the same server: lm-eval's chat client cannot score
  log-likelihoods, so the chat route is compared on its generated replies.

For each client: the items whose predicted ending (argmax of the log-likelihoods, ``acc``;
of log-likelihood per character, ``acc_norm``) differs from ``HFLM``'s, those whose
"greedy" flag differs (read from ``top_logprobs``), the largest |log-likelihood
difference| over all (item, ending) pairs; for the chat client the replies that differ.
Beside the accuracies, the best constant answer's (always the same ending position, always
the same letter) on the same items: what a model ignoring the input scores. Wall-clock
seconds are lm-eval's whole ``simple_evaluate`` (requests, HTTP, scoring), model loading
excluded; the server runs on the same CPUs as the client, one request at a time.

The items are made from SQuAD v1.1 dev (``../shared/data/squad/dev-v1.1.json``), in
HellaSwag's own format (``ind``, ``activity_label``, ``ctx_a``, ``ctx_b``, ``ctx``,
``endings``, ``label``), as HellaSwag's ActivityNet items are built: for each paragraph
(the first of each article in file order, then the second of each, ...) whose first two
sentences (pySBD) have 5-50 and 8-40 words, ``ctx_a`` is the
first sentence, ``ctx_b`` the second's first three words (first letter lowercased, as
HellaSwag writes them), the right ending the rest of the second sentence, and the three
wrong endings the same rest of three other articles' items (seeded); ``activity_label`` is
the article's title. The file is written under ``--out`` (nothing is kept in the project).

Exits non-zero if any prediction or reply differs. Needs ``pip install '.[bench]'``. Usage:

    python benchmarks/lm_eval_serve.py [--limit 200] [--model embedded] [--batch-size 8]
        [--squad PATH] [--out DIR] [--json OUT] [--threads T]

On a machine other processes keep busy, ``--threads 1`` (torch's threads, here and in the
server) avoids the slowdown of torch's threads waiting for each other: on the shared 2-core
machine at a load of 23, one forward of SmolLM2 over 49 tokens took 0.7 s on one thread and
14 s on two.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

HERE = Path(__file__).resolve().parent
TASKS_DIR = HERE / "lm_eval_tasks"
SCORED, LETTERS = "faithprobe_hellaswag", "faithprobe_hellaswag_letters"
DEFAULT_SQUAD = HERE.parent.parent / "shared" / "data" / "squad" / "dev-v1.1.json"
LEAD_WORDS = 3  # words of the second sentence given as ctx_b
SERVED = "served"  # the model name the server answers to


# -- the items ----------------------------------------------------------------------------


def hellaswag_items(squad: Path, n: int, seed: int = 0) -> list[dict]:
    """``n`` HellaSwag-format items from the SQuAD file ``squad`` (module docstring)."""
    from faithprobe.sentences import split_sentences

    doc = json.loads(squad.read_text(encoding="utf-8"))
    found: list[tuple[str, int, str, list[str]]] = []
    rounds = max(len(article["paragraphs"]) for article in doc["data"])
    for p in range(rounds):  # the first paragraph of each article, then the second, ...
        for article in doc["data"]:
            if p >= len(article["paragraphs"]) or len(found) == n:
                continue
            text = article["paragraphs"][p]["context"]
            spans = split_sentences(text, "pysbd")
            if len(spans) < 2:
                continue
            first, second = (text[a:b] for a, b in spans[:2])
            words = second.split()
            if 5 <= len(first.split()) <= 50 and 8 <= len(words) <= 40:
                found.append((article["title"], p, first, words))
    if len(found) < n:
        raise SystemExit(f"{squad}: only {len(found)} paragraphs make items, not {n}")
    rng = random.Random(seed)
    items = []
    for i, (title, p, first, words) in enumerate(found):
        lead = " ".join(words[:LEAD_WORDS])
        lead = lead[0].lower() + lead[1:]
        others = rng.sample([j for j, f in enumerate(found) if f[0] != title], 3)
        endings = [" ".join(found[j][3][LEAD_WORDS:]) for j in others]
        label = rng.randrange(4)
        endings.insert(label, " ".join(words[LEAD_WORDS:]))
        items.append(
            {
                "ind": i,
                "activity_label": title.replace("_", " "),
                "ctx_a": first,
                "ctx_b": lead,
                "ctx": f"{first} {lead}",
                "endings": endings,
                "label": label,
                "split": "val",
                "source_id": f"squad-dev-v1.1/{title}/{p}",
            }
        )
    return items


# -- the server and the clients -----------------------------------------------------------


@contextmanager
def served(model: str) -> Iterator[str]:
    """``faithprobe serve --model model`` on a free port, as a user starts it; its URL."""
    command = [sys.executable, "-c", "from faithprobe.cli import app; app()", "serve"]
    command += ["--model", model, "--name", SERVED, "--port", "0"]
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        said = []
        for line in proc.stderr:
            said.append(line)
            if line.startswith("serving"):
                break
        else:
            raise SystemExit("faithprobe serve did not start:\n" + "".join(said))
        threading.Thread(target=proc.stderr.read, daemon=True).start()  # never fills the pipe
        yield line.split(" at ")[1].split()[0]
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def evaluate(model, task: str, manager, batch_size: int, **kwargs) -> tuple[list[dict], float]:
    """lm-eval's ``simple_evaluate`` of ``model`` on ``task``: its logged samples in item
    order, and the seconds it took."""
    import lm_eval

    start = time.perf_counter()
    out = lm_eval.simple_evaluate(
        model=model,
        tasks=[task],
        task_manager=manager,
        batch_size=batch_size,
        log_samples=True,
        bootstrap_iters=0,
        **kwargs,
    )
    seconds = time.perf_counter() - start
    return sorted(out["samples"][task], key=lambda s: s["doc_id"]), seconds


def argmax(values) -> int:
    """First index of the largest value (numpy's and lm-eval's tie-break)."""
    return max(range(len(values)), key=lambda i: (values[i], -i))


def readings(samples: list[dict]) -> list[dict]:
    """Each scored item's log-likelihoods, greedy flags and predictions (``acc``: the most
    likely ending; ``acc_norm``: per character of the ending, as lm-eval normalises)."""
    read = []
    for s in samples:
        lls = [float(r[0]) for r in s["filtered_resps"]]
        per_char = [v / len(c) for v, c in zip(lls, s["doc"]["choices"], strict=True)]
        read.append({"lls": lls, "greedy": [bool(r[1]) for r in s["filtered_resps"]],
                     "pred": argmax(lls), "pred_norm": argmax(per_char)})  # fmt: skip
    return read


def compared(base: list[dict], other: list[dict], seconds: float, golds: list[int]) -> dict:
    """How ``other``'s scored items differ from ``base``'s (both :func:`readings`)."""
    n = len(base)
    diffs = [abs(a - b) for x, y in zip(base, other, strict=True)
             for a, b in zip(x["lls"], y["lls"], strict=True)]  # fmt: skip
    return {
        "acc": sum(r["pred"] == g for r, g in zip(other, golds, strict=True)) / n,
        "acc_norm": sum(r["pred_norm"] == g for r, g in zip(other, golds, strict=True)) / n,
        "differing_predictions": sum(
            x["pred"] != y["pred"] for x, y in zip(base, other, strict=True)
        ),
        "differing_acc_norm_predictions": sum(
            x["pred_norm"] != y["pred_norm"] for x, y in zip(base, other, strict=True)
        ),
        "differing_greedy_flags": sum(
            a != b
            for x, y in zip(base, other, strict=True)
            for a, b in zip(x["greedy"], y["greedy"], strict=True)
        ),  # fmt: skip
        "max_abs_loglik_diff": max(diffs),
        "mean_abs_loglik_diff": sum(diffs) / len(diffs),
        "seconds": round(seconds, 2),
        "items_per_s": round(n / seconds, 2),
    }


def replies(samples: list[dict]) -> list[str]:
    return [s["resps"][0][0] for s in samples]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=200, help="items (default 200)")
    parser.add_argument("--model", default="embedded", help="'embedded' or a model folder")
    parser.add_argument("--squad", type=Path, default=DEFAULT_SQUAD, help="SQuAD v1.1 json")
    parser.add_argument(
        "--batch-size", type=int, default=8, help="prompts per request / HFLM batch"
    )
    parser.add_argument("--out", type=Path, default=None, help="folder for the items (temporary)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    parser.add_argument(
        "--threads", type=int, default=None, help="torch threads, here and in the server"
    )
    args = parser.parse_args()
    if args.threads:  # before torch is imported, here and in the server started below
        os.environ["OMP_NUM_THREADS"] = str(args.threads)

    import lm_eval
    import torch
    import transformers
    from lm_eval.api.registry import get_model
    from lm_eval.tasks import TaskManager

    from faithprobe.subjects.gguf.embedded import converted

    folder = converted() if args.model == "embedded" else Path(args.model)
    out = args.out or Path(tempfile.mkdtemp(prefix="lm_eval_serve-"))
    out.mkdir(parents=True, exist_ok=True)
    items = hellaswag_items(args.squad, args.limit)
    data = out / "hellaswag_from_squad.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    golds = [item["label"] for item in items]
    manager = TaskManager(include_path=str(TASKS_DIR), metadata={"hellaswag_jsonl": str(data)})

    def hflm(batch_size: int):
        return get_model("hf").create_from_arg_string(
            f"pretrained={folder},dtype=float32", {"batch_size": batch_size, "device": "cpu"}
        )

    base_samples, base_seconds = evaluate(hflm(args.batch_size), SCORED, manager, args.batch_size)
    base = readings(base_samples)
    # replies one at a time, unpadded, as the server makes them
    base_letters, base_letter_seconds = evaluate(
        hflm(1), LETTERS, manager, 1, apply_chat_template=True
    )
    results: dict[str, dict] = {}
    with served(args.model) as url:
        for label, tokenized in (("token ids", True), ("strings", False)):
            model_args = {"model": SERVED, "base_url": f"{url}/completions",
                          "tokenizer": str(folder), "tokenized_requests": tokenized}  # fmt: skip
            samples, seconds = evaluate(
                "local-completions", SCORED, manager, args.batch_size, model_args=model_args
            )
            results[f"local-completions ({label})"] = compared(
                base, readings(samples), seconds, golds
            )
        chat_args = {"model": SERVED, "base_url": f"{url}/chat/completions"}
        chat_samples, chat_seconds = evaluate(
            "local-chat-completions", LETTERS, manager, 1, model_args=chat_args,
            apply_chat_template=True,
        )  # fmt: skip
    want, got = replies(base_letters), replies(chat_samples)
    differ = [i for i, (a, b) in enumerate(zip(want, got, strict=True)) if a != b]
    letter_answers = Counter(reply.strip()[:1].upper() for reply in got)
    n = len(items)
    results["local-chat-completions (replies by letter)"] = {
        "exact_match": sum(s["exact_match"] for s in chat_samples) / n,
        "hflm_exact_match": sum(s["exact_match"] for s in base_letters) / n,
        "differing_replies": len(differ),
        "differing_examples": [{"item": i, "hflm": want[i], "served": got[i]} for i in differ[:5]],
        "first_replies": got[:3],
        "first_letters_of_replies": dict(letter_answers.most_common()),
        "seconds": round(chat_seconds, 2),
        "items_per_s": round(n / chat_seconds, 2),
        "hflm_seconds": round(base_letter_seconds, 2),
    }
    constant = max(Counter(golds).values()) / n
    result = {
        "model": f"{args.model} ({folder.name}, float32, cpu)",
        "data": f"{n} HellaSwag-format items from {args.squad.name} (module docstring)",
        "items": n,
        "batch_size": args.batch_size,
        "torch_threads": torch.get_num_threads(),
        "versions": {
            "lm_eval": lm_eval.__version__,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        },  # fmt: skip
        "hflm": {
            "acc": sum(r["pred"] == g for r, g in zip(base, golds, strict=True)) / n,
            "acc_norm": sum(r["pred_norm"] == g for r, g in zip(base, golds, strict=True)) / n,
            "seconds": round(base_seconds, 2),
            "items_per_s": round(n / base_seconds, 2),
        },
        "best_constant_ending_acc": constant,
        "best_constant_letter_exact_match": constant,
        **results,
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")
    differing = [
        f"{client}: {r.get('differing_predictions', r.get('differing_replies'))}"
        for client, r in results.items()
    ]
    print(f"\n{n} items; differing from HFLM: " + ", ".join(differing), file=sys.stderr)
    if any(r.get("differing_predictions") or r.get("differing_acc_norm_predictions")
           or r.get("differing_replies") for r in results.values()):  # fmt: skip
        raise SystemExit("a client's predictions differ from lm-eval's in-process model")


if __name__ == "__main__":
    main()
