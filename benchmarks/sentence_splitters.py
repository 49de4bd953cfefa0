"""Sentence splitters on SQuAD dev contexts: spaCy senter vs pySBD (and spaCy's parser).

The ``faithfulness`` suite's deletions remove whole sentences, so the splitter decides what
TS / TS-R delete. In one process, on every context of the file, this reports each
backend's time (after loading) and its ratio to the default's, the number of sentences,
how many first gold answers a backend cuts across two sentences (a sure error), how many
questions' answer sentence the backends disagree on, and how many of the boundaries only
one backend draws look like formatting artefacts (before a "[citation needed]"-style
bracket or a ":12" page reference, or at a single line break inside a formula such as O2).
Usage:

    python benchmarks/sentence_splitters.py [--data ../shared/data/squad/dev-v1.1.json]
        [--json benchmarks/results/sentence_splitters.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from faithprobe import sentences as S

ROOT = Path(__file__).resolve().parents[1]


def parser_starts(texts):
    """Sentence starts from spaCy's dependency parser (the model's default sentence source)."""
    import spacy

    nlp = spacy.load(S.SPACY_MODEL, exclude=["tagger", "attribute_ruler", "lemmatizer", "ner"])
    return [[s.start_char for s in doc.sents] for doc in nlp.pipe(texts, batch_size=64)]


def artefact(text: str, start: int) -> bool:
    before = text[:start].rstrip(" ")
    return text[start] in "[:" or (before.endswith("\n") and not before.endswith("\n\n"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/squad/dev-v1.1.json"))
    ap.add_argument("--json", help="write the numbers here")
    args = ap.parse_args()
    doc = json.loads(Path(args.data).read_text())
    paras = [p for a in doc["data"] for p in a["paragraphs"]]
    texts = [p["context"] for p in paras]

    backends = {
        "spacy": lambda: S.split_many(texts, "spacy"),
        "pysbd": lambda: S.split_many(texts, "pysbd"),
        "spacy-parser": lambda: [
            S.spans_from_starts(t, s) for t, s in zip(texts, parser_starts(texts), strict=True)
        ],
    }
    S.split_sentences("Warm up. Load the models.", "spacy")
    S.split_sentences("Warm up. Load the models.", "pysbd")
    spans, seconds = {}, {}
    for name, run in backends.items():
        t = time.perf_counter()
        spans[name] = run()
        seconds[name] = time.perf_counter() - t

    answers = [(i, q["answers"][0]) for i, p in enumerate(paras) for q in p["qas"]]
    result = {"contexts": len(texts), "questions": len(answers), "backends": {}}
    for name in backends:
        cut = sum(
            len(
                S.overlapping(spans[name][i], a["answer_start"], a["answer_start"] + len(a["text"]))
            )
            > 1
            for i, a in answers
        )
        result["backends"][name] = {
            "seconds": round(seconds[name], 2),
            "time_vs_spacy": round(seconds[name] / seconds["spacy"], 2),
            "sentences": sum(len(s) for s in spans[name]),
            "answers_cut": cut,
        }

    def sentence_of(name, i, start):
        return spans[name][i][S.sentence_at(spans[name][i], start)]

    same = sum(
        sentence_of("spacy", i, a["answer_start"]) == sentence_of("pysbd", i, a["answer_start"])
        for i, a in answers
    )
    only = {"spacy": [0, 0], "pysbd": [0, 0]}
    for i, text in enumerate(texts):
        starts = {n: {s for s, _ in spans[n][i]} for n in only}
        for name, other in (("spacy", "pysbd"), ("pysbd", "spacy")):
            for start in starts[name] - starts[other]:
                only[name][0] += 1
                only[name][1] += artefact(text, start)
    result["answer_sentence_agreement"] = round(same / len(answers), 4)
    result["contexts_split_identically"] = sum(
        a == b for a, b in zip(spans["spacy"], spans["pysbd"], strict=True)
    )
    result["boundaries_only_in"] = {
        n: {"boundaries": c, "formatting_artefacts": a} for n, (c, a) in only.items()
    }
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
