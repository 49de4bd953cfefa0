"""spaCy's small English pipeline with its tagger, parser and NER, loaded once: what the
shallow heuristics (:mod:`faithprobe.heuristics`) and the degenerate reference models
(:mod:`faithprobe.reference_models.degenerate`) read entities and noun chunks from.
Sentence splitting loads the same model with fewer components
(:mod:`faithprobe.sentences`)."""

from __future__ import annotations

from functools import cache

from faithprobe.sentences import SPACY_MODEL


@cache
def parser():
    """spaCy's small English pipeline with NER and the parser (noun chunks); the
    lemmatizer is not needed."""
    import spacy

    return spacy.load(SPACY_MODEL, exclude=["lemmatizer"])
