"""Write the held-out articles of a SQuAD file in CoQA's format, for the representation
analysis of CoQA-format input where CoQA itself is not at hand.

    python scripts/squad_as_coqa.py SQUAD_JSON OUT_JSON [--heldout 0.25] [--seed 0]

The articles are those ``faithprobe train qa --train SQUAD_JSON`` holds out with the same
``--heldout`` and ``--seed`` (its document split), so a model trained there has read none
of them. Each paragraph is a story; its questions, in order, are the turns of one
conversation; a turn's answer is the first gold answer, its rationale span the sentence
holding that answer (faithprobe's default splitter), and the other gold answers are
``additional_answers``. The text and questions are SQuAD's: the questions are not a
conversation, so a turn's history is the questions asked before it about the same
paragraph.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from faithprobe.datasets.splits import split_documents
from faithprobe.datasets.squad import read_squad
from faithprobe.sentences import sentence_at, split_sentences


def story(title: str, index: int, paragraph: dict) -> dict:
    """One SQuAD paragraph as a CoQA story with its conversation."""
    text = paragraph["context"]
    spans = split_sentences(text)
    questions, answers, others = [], [], {"0": [], "1": []}
    for turn, qa in enumerate(paragraph["qas"], start=1):
        gold = qa["answers"][0]
        start, end = spans[sentence_at(spans, gold["answer_start"])]
        questions.append({"input_text": qa["question"], "turn_id": turn})
        answers.append({"input_text": gold["text"], "span_start": start, "span_end": end,
                        "span_text": text[start:end], "turn_id": turn})  # fmt: skip
        for k, annotator in enumerate(others.values(), start=1):
            other = qa["answers"][k] if len(qa["answers"]) > k else gold
            annotator.append({"input_text": other["text"], "turn_id": turn})
    name = f"{title}-{index}"
    return {"source": "wikipedia", "id": name, "filename": name, "story": text,
            "questions": questions, "answers": answers, "additional_answers": others,
            "name": name}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("squad", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--heldout", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    split = split_documents(read_squad(args.squad), args.squad, args.heldout, args.seed)
    held = set(split.heldout)
    data = [
        story(article["title"], i, paragraph)
        for article in json.loads(args.squad.read_text())["data"]
        if f"squad:title:{article['title']}" in held
        for i, paragraph in enumerate(article["paragraphs"])
    ]
    args.out.write_text(json.dumps({"version": "1.0", "data": data}))
    questions = sum(len(s["questions"]) for s in data)
    print(f"{len(held)} held-out articles, {len(data)} stories, {questions} questions")


if __name__ == "__main__":
    main()
