"""Data loaders for the local lm-evaluation-harness tasks of the benchmarks.

lm-eval calls ``custom_dataset(**metadata, **dataset_kwargs)``; each benchmark passes its
data file in the TaskManager's metadata:

- ``faithprobe_socialiqa`` (benchmarks/lm_eval_socialiqa.py): the Social IQA jsonl as
  ``socialiqa_jsonl``. Records keep the original fields (context, question, answerA..C)
  and gain ``label`` ("1".."3", 1-based, as in lm-eval's own ``social_iqa`` data).
- ``faithprobe_hellaswag`` and ``faithprobe_hellaswag_letters``
  (benchmarks/lm_eval_serve.py): a HellaSwag-format jsonl as ``hellaswag_jsonl``, records
  as the official release writes them, preprocessed by lm-eval's own HellaSwag code.
"""

from __future__ import annotations

import json
from pathlib import Path


def load_socialiqa(socialiqa_jsonl: str, **_ignored):
    import datasets

    path = Path(socialiqa_jsonl)
    labels = path.with_name(f"{path.stem}-labels.lst").read_text().split()
    with path.open(encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    if len(records) != len(labels):
        raise ValueError(f"{path}: {len(records)} records but {len(labels)} labels")
    rows = [
        {k: r[k] for k in ("context", "question", "answerA", "answerB", "answerC")} | {"label": lab}
        for r, lab in zip(records, labels, strict=True)
    ]
    return {"validation": datasets.Dataset.from_list(rows)}


def load_hellaswag(hellaswag_jsonl: str, **_ignored):
    """HellaSwag-format records (the official jsonl's fields) from ``hellaswag_jsonl``."""
    import datasets

    with Path(hellaswag_jsonl).open(encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    return {"validation": datasets.Dataset.from_list(records)}


def process_hellaswag(dataset):
    """lm-evaluation-harness's own HellaSwag preprocessing (query, choices, gold)."""
    from lm_eval.tasks.hellaswag.utils import process_docs

    return process_docs(dataset)
