"""Phrase extractors: the answer phrase in a selected sentence.

An extractor has a ``name`` and one verb, ``extract(question, sentence) -> str``, where
``sentence`` is a spaCy ``Span`` of the parsed context (its entities and noun chunks come
from the whole context's parse, which sees more than the sentence alone).

* ``entity``: the first named entity of the sentence whose label is an expected answer
  type (:mod:`~faithprobe.heuristics.answer_types`; any label when the predictor says
  ``None``, none when it says the empty set) and that the question does not already name;
  its predictor is the wh-word map or a trained classifier
  (:mod:`~faithprobe.heuristics.type_classifier`; ``faithprobe baseline heuristics
  --answer-types`` runs it beside the map as ``entity-trained``);
* ``noun-chunk``: the first noun chunk of the sentence that the question does not already
  name (spaCy's ``noun_chunks``, from the parser);
* ``sentence``: the whole sentence -- the ceiling of what the selected sentence holds
  (its F1 is low by length, its recall is high).

"Does not already name" is :func:`~faithprobe.content_words.is_novel`: the phrase has a
content word the question lacks. When nothing qualifies, ``entity`` falls back to
``noun-chunk`` (an answer of an unexpected type or an unrecognised entity is more likely a
noun phrase than a whole sentence), and ``noun-chunk`` to ``sentence``, so every extractor
always answers something from the sentence.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable

from spacy.tokens import Span

from faithprobe.content_words import content_tokens, is_novel
from faithprobe.heuristics.answer_types import AnswerTypePredictor, wh_answer_types


class Extractor(ABC):
    name: str

    @abstractmethod
    def extract(self, question: str, sentence: Span) -> str:
        """The answer phrase to ``question`` in ``sentence``."""


class WholeSentence(Extractor):
    name = "sentence"

    def extract(self, question: str, sentence: Span) -> str:
        return sentence.text


class PhraseExtractor(Extractor):
    """The first of :meth:`candidates` the question does not name, else ``fallback``'s."""

    def __init__(self, fallback: Extractor) -> None:
        self.fallback = fallback

    @abstractmethod
    def candidates(self, question: str, sentence: Span) -> Iterable[Span]:
        """Phrases that may answer, in the order to prefer them."""

    def extract(self, question: str, sentence: Span) -> str:
        asked = set(content_tokens(question))
        for phrase in self.candidates(question, sentence):
            if is_novel(phrase.text, asked):
                return phrase.text
        return self.fallback.extract(question, sentence)


class NounChunk(PhraseExtractor):
    name = "noun-chunk"

    def __init__(self, fallback: Extractor | None = None) -> None:
        super().__init__(fallback or WholeSentence())

    def candidates(self, question: str, sentence: Span) -> Iterable[Span]:
        return sentence.noun_chunks


class TypedEntity(PhraseExtractor):
    """Entities whose label ``answer_types(question)`` expects (any label for ``None``)."""

    name = "entity"

    def __init__(
        self,
        answer_types: AnswerTypePredictor = wh_answer_types,
        fallback: Extractor | None = None,
        name: str = "entity",
    ) -> None:
        super().__init__(fallback or NounChunk())
        self.answer_types, self.name = answer_types, name

    def candidates(self, question: str, sentence: Span) -> Iterable[Span]:
        wanted = self.answer_types(question)
        return [e for e in sentence.ents if wanted is None or e.label_ in wanted]


def default_extractors(answer_types: AnswerTypePredictor = wh_answer_types) -> list[Extractor]:
    """Every extractor, ``entity`` expecting the types ``answer_types`` predicts."""
    return [TypedEntity(answer_types), NounChunk(), WholeSentence()]
