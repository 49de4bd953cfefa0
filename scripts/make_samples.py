"""Write the data samples shipped in ``src/faithprobe/catalog/samples`` from the full files.

    python scripts/make_samples.py DATA_DIR

DATA_DIR is a data folder laid out as the catalogue says (``squad/dev-v1.1.json``,
``socialiqa/dev.jsonl`` with ``dev-labels.lst``). The selection is fixed, not random, so
the samples can be rebuilt byte for byte: the first paragraph of each of SQuAD dev's 48
articles with all its questions, the first 300 Social IQA dev instances with their
labels, and the first 6 examples of each BIG-Bench Hard task with all its prompts. The
NLI-XY-format sample is authored, not cut (its README says how).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[1] / "src/faithprobe/catalog/samples"
SQUAD_PARAGRAPHS_PER_ARTICLE = 1
SOCIALIQA_INSTANCES = 300
BBH_EXAMPLES_PER_TASK = 6


def squad(data: Path) -> None:
    full = json.loads((data / "squad/dev-v1.1.json").read_text(encoding="utf-8"))
    articles = [
        {"title": a["title"], "paragraphs": a["paragraphs"][:SQUAD_PARAGRAPHS_PER_ARTICLE]}
        for a in full["data"]
    ]
    out = SAMPLES / "squad/dev-v1.1.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"data": articles, "version": full["version"]}, ensure_ascii=False)
    out.write_text(text + "\n", encoding="utf-8")


def socialiqa(data: Path) -> None:
    out = SAMPLES / "socialiqa"
    out.mkdir(parents=True, exist_ok=True)
    for name in ("dev.jsonl", "dev-labels.lst"):
        lines = (data / "socialiqa" / name).read_text(encoding="utf-8").splitlines()
        (out / name).write_text("\n".join(lines[:SOCIALIQA_INSTANCES]) + "\n", encoding="utf-8")


def bbh(data: Path) -> None:
    """The first examples of each BIG-Bench Hard task, written as the authors write the
    files (``json.dumps`` with its defaults, no final line break), with every prompt and
    the LICENSE copied as they are."""
    source, out = data / "bbh", SAMPLES / "bbh"
    (out / "bbh").mkdir(parents=True, exist_ok=True)
    for task in sorted((source / "bbh").glob("*.json")):
        doc = json.loads(task.read_text(encoding="utf-8"))
        doc["examples"] = doc["examples"][:BBH_EXAMPLES_PER_TASK]
        (out / "bbh" / task.name).write_text(json.dumps(doc), encoding="utf-8")
    shutil.copytree(source / "cot-prompts", out / "cot-prompts", dirs_exist_ok=True)
    shutil.copyfile(source / "LICENSE", out / "LICENSE")


if __name__ == "__main__":
    root = Path(sys.argv[1])
    squad(root)
    socialiqa(root)
    bbh(root)
