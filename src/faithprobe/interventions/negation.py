"""Negation interventions on yes/no QA (Chaturvedi et al.): change the text that supports
a yes/no answer so that it supports the opposite one; a faithful model's answer flips.

* ``negation_edit``: applies hand-written edits from an edit file (JSON lines, one edit
  per example: ``{"id", "original", "replacement", "answer"}``; ``original`` must occur
  exactly once in the example's context, ``answer`` is the new gold, ``"yes"`` or
  ``"no"``, and must differ from the old one; the fields are declared in
  :data:`EDITS_SCHEMA`, checked per line). :func:`read_edits` validates a file
  against the examples it edits; :func:`apply_edits` reads and applies one.
* ``rule_negate``: a rule-based negator for simple sentences (:func:`negate_sentence`)
  applied to the sentence holding the rationale's start; labelled ``"rule-based"`` in
  ``features["negation"]`` (edits are ``"edit-file"``), so results can tell them apart.

The changed example's gold is the *new* answer (``answers``, ``answer_type`` and
``features["gold"]``); the old one is in ``features["original_answers"]``. Rationale
spans are moved to follow the edit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from faithprobe.datasets.jsonl import iter_records
from faithprobe.datasets.schema import TEXT, DataSchema, Field
from faithprobe.errors import DataError, excerpt
from faithprobe.expectations import ANSWER_FLIPS
from faithprobe.interventions import register
from faithprobe.interventions.deletion import NO_RATIONALE, sentences_of
from faithprobe.paths import Kind, checked
from faithprobe.records import Outcome, QAExample
from faithprobe.sentences import sentence_at

FLIP = {"yes": "no", "no": "yes"}
NO_EDIT = "the edit file has no edit for this example"
NOT_YES_NO = "the gold answer is not yes or no"
NO_RULE = "no negation rule fits the sentence"

EDITS_SCHEMA = DataSchema(
    name="negation edits (JSON lines, option edits=FILE)",
    record="one edit per JSON line, of one yes/no question of --data; it adds a NEG pair",
    fields=(
        Field(
            "id",
            TEXT,
            "the edited question's item id, as the reader names it (coqa-<story id>-<turn>, "
            "squad-<id>, hotpot-<_id>); one edit per question",
            required=True,
            links="It names a yes/no question of the --data file.",
        ),
        Field(
            "original",
            TEXT,
            "text of the question's context, occurring there exactly once, that the edit replaces",
            required=True,
        ),
        Field(
            "replacement",
            TEXT,
            "what replaces it (different from original), so that the other answer is true",
            required=True,
        ),
        Field(
            "answer",
            TEXT,
            "the gold answer after the edit (case and surrounding spaces aside): the "
            "opposite of the question's gold",
            required=True,
            allowed=tuple(FLIP),
        ),
    ),
    links="id names a yes/no question of the --data file (one edit each); original occurs "
    "exactly once in its context; answer flips its gold.",
)


@dataclass(frozen=True)
class Edit:
    id: str
    original: str
    replacement: str
    answer: str
    line: int = 0


class EditSet(Mapping[str, Edit]):
    """Validated edits by example id; prints as the file's name (for instance names)."""

    def __init__(self, name: str, edits: dict[str, Edit]) -> None:
        self.name = name
        self._edits = edits

    def __getitem__(self, key: str) -> Edit:
        return self._edits[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._edits)

    def __len__(self) -> int:
        return len(self._edits)

    def __str__(self) -> str:
        return self.name


def read_edits(path: str | Path, examples: Iterable[QAExample]) -> EditSet:
    """The edits of ``path``, each checked against the example it names."""
    path = checked(path, "edits", Kind.READ_FILE)
    by_id = {e.id: e for e in examples}
    edits: dict[str, Edit] = {}
    for line, rec in iter_records(path):
        where = f"line {line}"
        answer = rec.get("answer")
        if isinstance(answer, str):  # checked with case and surrounding spaces aside
            rec = {**rec, "answer": answer.strip().lower()}
        EDITS_SCHEMA.check(path, where, rec)
        example_id, original, replacement = rec["id"], rec["original"], rec["replacement"]
        answer = rec["answer"]
        example = by_id.get(example_id)
        if example is None:
            raise DataError(
                path, f"no example has id {excerpt(example_id)}", record=where, field="id"
            )
        if example_id in edits:
            raise DataError(
                path,
                f"a second edit for {excerpt(example_id)} (the first is on line {edits[example_id].line})",
                record=where,
                field="id",
            )
        count = example.context.count(original) if original else 0
        if count != 1:
            said = "does not occur" if count == 0 else f"occurs {count} times"
            raise DataError(
                path,
                f"{excerpt(original)} {said} in the context of {example_id}; it must occur exactly once",
                record=where,
                field="original",
            )
        if replacement == original:
            raise DataError(path, "same as original", record=where, field="replacement")
        if example.answer_type not in FLIP:
            raise DataError(
                path,
                f"{example_id} is not a yes/no question (answer type {example.answer_type})",
                record=where,
                field="id",
            )
        if answer != FLIP[example.answer_type]:
            raise DataError(
                path,
                f"expected {excerpt(FLIP[example.answer_type])} (the gold of {example_id} is "
                f"{excerpt(example.answer_type)} and an edit flips it), got {excerpt(answer)}",
                record=where,
                field="answer",
            )
        edits[example_id] = Edit(example_id, original, replacement, answer, line)
    return EditSet(path.name, edits)


def apply_edit(example: QAExample, edit: Edit, *, source: str = "edit-file") -> QAExample:
    """``example`` with ``edit`` applied (its ``original`` must occur exactly once)."""
    if example.context.count(edit.original) != 1:
        raise ValueError(f"edit for {example.id}: the original text must occur exactly once")
    start = example.context.index(edit.original)
    return _edited(example, start, start + len(edit.original), edit.replacement, edit.answer,
                   {"negation": source})  # fmt: skip


def apply_edits(examples: Iterable[QAExample], path: str | Path) -> list[QAExample]:
    """The examples an edit file names, edited (in the order of ``examples``)."""
    examples = list(examples)
    edits = read_edits(path, examples)
    return [apply_edit(e, edits[e.id]) for e in examples if e.id in edits]


def _edited(
    example: QAExample, start: int, end: int, replacement: str, answer: str, extra: dict
) -> QAExample:
    delta = len(replacement) - (end - start)

    def moved(s: int, e: int) -> tuple[int, int]:
        s = s if s <= start else (s + delta if s >= end else start)
        e = e + delta if e >= end else (e if e <= start else start + len(replacement))
        return s, e

    rationale = tuple(
        span for span in (moved(s, e) for s, e in example.rationale) if span[0] < span[1]
    )
    features = {
        **example.features,
        **extra,
        "variant": "negation",
        "original_id": example.id,
        "expected": answer,
        "gold": answer,
        "original_answers": list(example.answers),
        "edit": {"original": example.context[start:end], "replacement": replacement},
    }
    features.pop("sentences", None)  # HotpotQA's spans no longer fit; split again if needed
    return replace(
        example,
        id=f"{example.id}/neg",
        context=example.context[:start] + replacement + example.context[end:],
        answers=(answer,),
        answer_type=answer,
        answer_starts=(),
        rationale=rationale,
        features=features,
    )


@register(
    "negation_edit",
    family="negation",
    changes="the text supporting a yes/no answer is replaced by a hand-written edit that "
    "supports the opposite answer",
    holds="the question and the rest of the context",
    expectation=ANSWER_FLIPS,
)
def negation_edit(example: QAExample, rng, *, edits: Mapping[str, Edit], **params) -> Outcome:
    edit = edits.get(example.id)
    return Outcome.dropped(NO_EDIT) if edit is None else Outcome.kept(apply_edit(example, edit))


@register(
    "rule_negate",
    family="negation",
    changes="the sentence holding the rationale of a yes/no answer is negated by rule "
    "(not inserted after its auxiliary or removed; no <-> a/some)",
    holds="the question and every other sentence",
    expectation=ANSWER_FLIPS,
)
def rule_negate(example: QAExample, rng, *, splitter: str | None = None, **params) -> Outcome:
    if example.answer_type not in FLIP:
        return Outcome.dropped(NOT_YES_NO)
    if not example.rationale:
        return Outcome.dropped(NO_RATIONALE)
    sentences = sentences_of(example, splitter)
    start, end = sentences[sentence_at(sentences, example.rationale[0][0])]
    negated = negate_sentence(example.context[start:end])
    if negated is None:
        return Outcome.dropped(NO_RULE, detail=example.context[start:end])
    text, rule = negated
    extra = {"negation": "rule-based", "rule": rule}
    return Outcome.kept(_edited(example, start, end, text, FLIP[example.answer_type], extra))


# --- the rules -------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")
_BE_MODAL = {"is", "are", "was", "were", "am", "can", "could", "will", "would", "should",
             "shall", "may", "might", "must"}  # fmt: skip
_HAVE = {"has": "does", "have": "do", "had": "did"}
_DO = {"do", "does", "did"}
_AUX = _BE_MODAL | set(_HAVE) | _DO
# a word before which "will", "can", "must", "may" are nouns ("his will", "a can")
_DETERMINERS = {"a", "an", "the", "his", "her", "its", "their", "my", "your", "our", "this",
                "that", "to"}  # fmt: skip
# words after do/does/did that show it is the main verb ("did his homework")
_OBJECTS = _DETERMINERS - {"to"} | {"these", "those", "it", "them", "him", "me", "us", "you",
                                    "some", "any", "all", "what", "well", "so", "nothing",
                                    "everything", "something", "anything", "much", "more"}  # fmt: skip
_PARTICIPLES = {"been", "done", "gone", "made", "seen", "taken", "given", "got", "gotten",
                "had", "come", "become", "begun", "known", "shown", "grown", "thrown", "won",
                "lost", "left", "found", "told", "said", "put", "set", "run", "brought",
                "bought", "thought", "caught", "taught", "kept", "slept", "felt", "met",
                "heard", "held", "built", "sent", "spent", "read", "led", "let", "hit",
                "eaten", "written", "driven", "ridden", "spoken", "broken", "chosen",
                "fallen", "forgotten", "hidden", "stolen", "worn", "torn", "drawn", "flown",
                "sung", "swum", "drunk", "struck", "stood", "understood", "sat", "paid"}  # fmt: skip
_OTHER_NEGATIONS = {"never", "nothing", "nobody", "none", "nowhere", "neither", "nor",
                    "ain't", "ain’t"}  # fmt: skip
_NOT_IDIOMS = {"one", "longer", "more", "less", "matter", "doubt", "sooner", "way", "other"}
_A_IDIOMS = {"lot", "few", "little", "bit", "couple", "number", "while", "great", "good",
             "kind", "sort", "variety", "total", "majority", "series", "pair"}  # fmt: skip
_PREPOSITIONS = {"of", "in", "on", "at", "by", "for", "with", "from", "to", "into", "like",
                 "as", "than", "about", "over", "under", "after", "before", "between",
                 "through", "during", "without", "within", "across", "against"}  # fmt: skip
_SHORT = 12  # words: longer sentences are not "simple" enough for the determiner rule
_CONTRACTED = {"won't": "will", "can't": "can", "shan't": "shall"}


def negate_sentence(sentence: str) -> tuple[str, str] | None:
    """``(negated sentence, rule)`` for a simple sentence, or None when no rule applies
    safely. Rules, tried in order:

    * ``remove-not``: the one negation ``not``/``n't``/``cannot`` is removed
      (``is not`` -> ``is``, ``didn't`` -> ``did``, ``cannot`` -> ``can``);
    * ``no->some``: the one ``no`` before a plural noun becomes ``some``;
    * ``insert-not``: ``not`` after the auxiliary, modal or copula (``can`` -> ``cannot``;
      ``has``/``have``/``had`` only before a past participle);
    * ``do-support``: main-verb ``has/have/had`` -> ``does/do/did not have``,
      ``do/does/did`` before an object -> ``do/does/did not do``;
    * ``a->no``: without any auxiliary, the one ``a``/``an``/``some`` becomes ``no`` (in
      a sentence of at most 12 words without commas, not after a preposition).

    A sentence with two negations, two separate auxiliaries (a verb chain such as ``will
    have`` counts as one), ``never``/``nothing``/... , or no rule that fits, gets None."""
    if sentence.rstrip().endswith("?"):
        return None  # a question is not a statement to negate
    words = list(_WORD.finditer(sentence))
    lower = [w.group().lower().replace("’", "'") for w in words]
    if any(w in _OTHER_NEGATIONS for w in lower):
        return None
    nots = [i for i, w in enumerate(lower) if w in ("not", "cannot") or w.endswith("n't")]
    nos = [i for i, w in enumerate(lower) if w == "no"]
    if len(nots) + len(nos) > 1:
        return None
    if nots:
        return _remove_not(sentence, words, lower, nots[0])
    if nos:
        return _no_to_some(sentence, words, lower, nos[0])
    aux = [i for i, w in enumerate(lower) if _is_aux(words, lower, i)]
    if aux:
        chained = all(b == a + 1 for a, b in zip(aux, aux[1:], strict=False))
        return _insert_not(sentence, words, lower, aux[0]) if chained else None
    return _a_to_no(sentence, words, lower)


def _is_aux(words, lower: list[str], i: int) -> bool:
    # not after a determiner or "to", nor capitalised mid-sentence: "his will", "to have",
    # "in May"
    return lower[i] in _AUX and not (
        i > 0 and (lower[i - 1] in _DETERMINERS or words[i].group()[0].isupper())
    )


def _swap(sentence: str, match, new: str) -> str:
    if match.group()[0].isupper():
        new = new[0].upper() + new[1:]
    return sentence[: match.start()] + new + sentence[match.end() :]


def _remove_not(sentence, words, lower, i):
    word = lower[i]
    if word == "cannot":
        return _swap(sentence, words[i], "can"), "remove-not"
    if word.endswith("n't"):
        bare = _CONTRACTED.get(word, word[:-3])
        return _swap(sentence, words[i], bare), "remove-not"
    if i == 0 or lower[i - 1] not in _AUX or lower[i + 1 : i + 2] == ["only"]:
        return None  # "not" that negates something other than the verb ("not only")
    start = words[i - 1].end()
    return sentence[:start] + sentence[words[i].end() :], "remove-not"


def _no_to_some(sentence, words, lower, i):
    nxt = lower[i + 1] if i + 1 < len(lower) else ""
    if nxt in _NOT_IDIOMS or not nxt.endswith("s") or nxt.endswith("ss"):
        return None  # singular or mass nouns have no safe positive determiner
    return _swap(sentence, words[i], "some"), "no->some"


def _insert_not(sentence, words, lower, i):
    word, match = lower[i], words[i]
    nxt = lower[i + 1] if i + 1 < len(lower) else ""
    if word == "can":
        return _swap(sentence, match, "cannot"), "insert-not"
    if word in _HAVE and not (nxt in _PARTICIPLES or nxt.endswith(("ed", "en"))):
        return _swap(sentence, match, f"{_HAVE[word]} not have"), "do-support"
    if word in _DO:
        if nxt in _OBJECTS:
            return _swap(sentence, match, f"{word} not do"), "do-support"
        if not nxt:
            return None
    return sentence[: match.end()] + " not" + sentence[match.end() :], "insert-not"


def _a_to_no(sentence, words, lower):
    """Only in a short sentence without commas, and not after a preposition: "He saw a dog"
    -> "He saw no dog", but not "the role of a coach" (which would negate the wrong thing)."""
    found = [i for i, w in enumerate(lower) if w in ("a", "an", "some")]
    if len(found) != 1 or len(words) > _SHORT or any(c in sentence for c in ",;:—–("):
        return None
    i = found[0]
    if i > 0 and lower[i - 1] in _PREPOSITIONS:
        return None
    if i + 1 < len(lower) and lower[i + 1] in _A_IDIOMS:
        return None
    return _swap(sentence, words[i], "no"), "a->no"
