"""Data loader for the local lm-evaluation-harness task ``faithprobe_socialiqa``.

lm-eval calls ``custom_dataset(**metadata, **dataset_kwargs)``; the benchmark passes the
Social IQA jsonl as ``socialiqa_jsonl`` in the TaskManager's metadata. Records keep the
original fields (context, question, answerA..C) and gain ``label`` ("1".."3", 1-based, as
in lm-eval's own ``social_iqa`` data).
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
