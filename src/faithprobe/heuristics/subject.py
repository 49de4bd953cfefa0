"""A shallow QA heuristic as a subject: ``--model heuristic:<selector>+<extractor>``.

The heuristic baselines (:mod:`faithprobe.heuristics`: pick a sentence, then a phrase in
it) answer span-answer requests like any extractive QA model, so a suite can run them
beside a model on the same pairs -- e.g. in ``right-reasons``, where a heuristic that
cannot read a comparative gives the counterfactual's floor. Selectors: ``first``,
``overlap``, ``lcs``, ``encoder``; extractors: ``entity``, ``noun-chunk``, ``sentence``
(``oracle`` needs the gold answer, so it is not a subject). ``answer_types=FOLDER`` (a
classifier from ``faithprobe train answer-types``,
:class:`~faithprobe.heuristics.type_classifier.AnswerTypeClassifier`) gives the ``entity``
extractor its expected answer types instead of the wh-word map; the subject's name then
carries the setting (``heuristic:encoder+entity,answer_types=FOLDER``), so both can run
side by side.

The answer is the extracted phrase where it first occurs in the chosen sentence (else in
the context); a heuristic always answers (``score`` 1, ``null_score`` 0). The fingerprint
names the heuristic, the spaCy pipeline and the sentence splitter (and the encoder's files
for ``encoder``, the classifier's for ``answer_types``), plus :data:`HEURISTICS_VERSION`,
bumped when their code changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

from faithprobe.errors import ModelError
from faithprobe.records import QAExample
from faithprobe.requests import SpanAnswer, SpanAnswerRequest
from faithprobe.sentences import DEFAULT_SPLITTER
from faithprobe.subjects.base import Progress, Subject

PREFIX = "heuristic"
HEURISTICS_VERSION = "1"


def _parts(answer_types: Path | None) -> tuple[dict, dict]:
    from faithprobe.heuristics.extraction import default_extractors
    from faithprobe.heuristics.predict import default_selectors

    if answer_types is None:
        extractors = default_extractors()
    else:
        from faithprobe.heuristics.type_classifier import AnswerTypeClassifier

        extractors = default_extractors(AnswerTypeClassifier(answer_types))
    return {s.name: s for s in default_selectors()}, {e.name: e for e in extractors}


class HeuristicSubject(Subject):
    kind = "heuristic"
    accepts = frozenset({SpanAnswerRequest.kind})

    def __init__(
        self,
        heuristic: str,
        *,
        splitter: str = DEFAULT_SPLITTER,
        answer_types: str | Path | None = None,
    ) -> None:
        self.answer_types = Path(answer_types) if answer_types else None
        selectors, extractors = _parts(self.answer_types)
        selector, _, extractor = heuristic.partition("+")
        if selector not in selectors or extractor not in extractors:
            raise ModelError(
                f"heuristic {heuristic!r}: give <selector>+<extractor>, selectors "
                f"{', '.join(selectors)}; extractors {', '.join(extractors)}"
            )
        self.selector, self.extractor = selectors[selector], extractors[extractor]
        self.heuristic, self.splitter = heuristic, splitter
        trained = f",answer_types={answer_types}" if self.answer_types else ""
        self.name = f"{PREFIX}:{heuristic}{trained}"

    @cached_property
    def fingerprint(self) -> str:
        import spacy

        from faithprobe.parsing import parser

        meta = parser().meta
        parts = [self.name, HEURISTICS_VERSION, self.splitter, spacy.__version__,
                 f"{meta['name']}-{meta['version']}"]  # fmt: skip
        from faithprobe.subjects.fingerprint import fingerprint_path

        if self.selector.name == "encoder":
            from faithprobe.subjects.hf.minilm import minilm_path

            parts.append(fingerprint_path(minilm_path()))
        if self.answer_types is not None:
            parts.append(f"answer_types={fingerprint_path(self.answer_types)}")
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]

    def describe(self) -> dict[str, object]:
        trained = {"answer_types": str(self.answer_types)} if self.answer_types else {}
        return {"heuristic": self.heuristic, "splitter": self.splitter, **trained}

    def answer(
        self, requests: Sequence[SpanAnswerRequest], progress: Progress | None = None
    ) -> list[SpanAnswer]:
        from faithprobe.heuristics.predict import predict

        examples = [QAExample(str(i), r.context, r.question, ()) for i, r in enumerate(requests)]
        frame = predict(
            examples, selectors=[self.selector], extractors=[self.extractor],
            splitter=self.splitter,
        )  # fmt: skip
        by_id = {row["original_id"]: row for row in frame.to_dict("records")}
        answers = []
        for example in examples:
            row = by_id[example.id]
            text, context = row["prediction"], example.context
            start = context.find(text, row["sentence_start"])
            start = start if start >= 0 else context.find(text)
            answers.append(SpanAnswer(text, start, start + len(text) if start >= 0 else -1,
                                      1.0, 0.0))  # fmt: skip
        if progress:
            progress(len(requests))
        return answers
