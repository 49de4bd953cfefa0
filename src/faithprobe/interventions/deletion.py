"""Deletion interventions on QA (Chaturvedi et al., semantic faithfulness): take away the
sentences that support the answer and see whether the model still gives it.

* ``truncate_story`` (TS): the story cut after the sentence holding the rationale's end.
  The support stays, so the gold answer is still expected (a control for TS-R).
* ``truncate_remove_rationale`` (TS-R): TS, then every sentence overlapping the rationale
  removed. Examples whose rationale begins in the first sentence are dropped (nothing
  would be left before it).
* ``remove_support`` (OS-R, the method's HotpotQA variant): the whole story with every
  sentence overlapping the rationale (the supporting facts) removed.

After TS-R and OS-R a faithful model answers *unknown*. The changed example keeps the
*original* gold answers (metrics score against them: a model that still gives them did not
notice the support is gone) and says what a faithful model does in
``features["expected"]``: ``"unknown"``, or ``"answer"`` for TS.

Re-insertion (``reinsert=True``, the method's choice): a span answer that no longer occurs
in the changed text (none of the gold answers, as a whole word or phrase, ignoring case:
see :func:`occurs`) is appended at the end,
so that an extractive model *can* still point at it. ``augment`` replaces the bare answer by
a generated sentence that contains it (TS-R+Aug, OS-R+Aug): a callable ``(original
example, answer) -> sentence``, e.g. an :class:`Augmenter` around a generative subject.
When the sentence lacks the answer the example is dropped.

Sentences are the example's own (``features["sentences"]``, as the HotpotQA loader gives)
or those of a splitter (``splitter=``; by default the one the loader used, else
:data:`faithprobe.sentences.DEFAULT_SPLITTER`). Removal keeps the rest of the text as it
was: a removed sentence takes the spaces before it (or after it, at the start of a line)
with it, and a line it leaves empty disappears.

A *title* is a line no sentence touches (HotpotQA's paragraph titles; a splitter's
sentences cover the whole text, so SQuAD and CoQA stories have none). It heads the
sentences after it, up to the next title, and goes with the last of them: a paragraph whose
every sentence is removed disappears whole, with the blank line that set it apart, rather
than leaving its bare title (which states nothing, and which the appended answer would run
into: "Ralph Hefferline\n\nColumbia University New York City"). When the removed sentences
were the whole text, titles included, nothing is left and the example is dropped
(:data:`NOTHING_LEFT`): a text of the answer alone would not test reading.

The appended answer (or sentence) follows the last kept sentence after one space, for
every data source alike: a title always keeps a sentence after it, so it stands as a
sentence of its own and never on a title line. Whether the answer is "still in the text"
(``features["answer_present"]``; then nothing is appended) is asked of the whole changed
text, titles included: a title is shown to the model like any other line, and an
extractive model can point at it, so an answer found only in a kept title counts as present.

Every changed example records in ``features["copied"]`` where its text comes from: one
``(start in the new text, start in the original, length)`` per piece copied unchanged from
the original context (the appended answer or sentence is not among them), so analyses can
pair the characters -- and the tokens -- the two inputs share.

A dropped example's :class:`~faithprobe.records.Outcome` says why (one of ``DROPS``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from faithprobe.expectations import ANSWER_UNCHANGED, ANSWER_UNKNOWN
from faithprobe.interventions import register
from faithprobe.qa.answers import occurs
from faithprobe.records import UNKNOWN, Outcome, QAExample
from faithprobe.sentences import (
    DEFAULT_SPLITTER,
    Span,
    overlapping,
    sentence_at,
    split_sentences,
)

UNKNOWN_GOLD = "the gold answer is already unknown"
NO_RATIONALE = "no rationale"
FIRST_SENTENCE = "the rationale begins in the first sentence"
NOTHING_LEFT = "no text is left"
AUGMENT_FAILED = "the generated sentence does not contain the answer"
AUGMENT_MISSING = "the augment file holds no sentence for this question"
RESTORED = "the answer is the whole rationale: re-inserting it restores the text"
DROPS = (UNKNOWN_GOLD, NO_RATIONALE, FIRST_SENTENCE, NOTHING_LEFT, AUGMENT_FAILED,
         AUGMENT_MISSING, RESTORED)  # fmt: skip


@dataclass(frozen=True)
class Augmenter:
    """A named sentence generator for TS-R+Aug / OS-R+Aug: ``generate(example, answer)``
    returns a sentence that should contain ``answer`` (None: it has none for this example,
    which is then dropped). The name stands for it in intervention instance names
    (``truncate_remove_rationale[augment=smollm2]``)."""

    name: str
    generate: Callable[[QAExample, str], str | None]

    def __call__(self, example: QAExample, answer: str) -> str | None:
        return self.generate(example, answer)

    def __str__(self) -> str:
        return self.name


def sentences_of(example: QAExample, splitter: str | None = None) -> tuple[Span, ...]:
    """The example's own sentence spans if it has them and no splitter is named, else the
    named splitter's (default: the loader's, else ``DEFAULT_SPLITTER``)."""
    if splitter is None and "sentences" in example.features:
        return tuple(tuple(s) for s in example.features["sentences"])
    name = splitter or example.features.get("splitter") or DEFAULT_SPLITTER
    return split_sentences(example.context, name)


def _splitter_label(example: QAExample, splitter: str | None) -> str:
    if splitter is None and "sentences" in example.features:
        return "native"
    return splitter or example.features.get("splitter") or DEFAULT_SPLITTER


def _check(example: QAExample) -> str | None:
    if example.answer_type == UNKNOWN:
        return UNKNOWN_GOLD
    if not example.rationale:
        return NO_RATIONALE
    return None


def _last_sentence(sentences: Sequence[Span], example: QAExample) -> int:
    return sentence_at(sentences, max(e for _, e in example.rationale) - 1)


def truncate(example: QAExample, *, splitter: str | None = None) -> Outcome:
    """TS: the story up to the end of the sentence holding the rationale's end."""
    if reason := _check(example):
        return Outcome.dropped(reason)
    sentences = sentences_of(example, splitter)
    last = _last_sentence(sentences, example)
    cut = max(sentences[last][1], max(e for _, e in example.rationale))
    starts = tuple(
        s if s >= 0 and s + len(a) <= cut else -1
        for s, a in zip(example.answer_starts, example.answers, strict=False)
    )  # answer_starts is empty or one per answer
    features = _features(example, "TS", "answer", splitter)
    features["cut_at"] = cut
    features["copied"] = [(0, 0, cut)]
    features["removed"] = [example.context[s:e] for s, e in sentences[last + 1 :]]
    if "sentences" in example.features:
        features["sentences"] = tuple(sentences[: last + 1])
    changed = replace(
        example,
        id=f"{example.id}/ts",
        context=example.context[:cut],
        answer_starts=starts,
        features=features,
    )
    return Outcome.kept(changed)


def truncate_remove(example: QAExample, **options: Any) -> Outcome:
    """TS-R: TS, then every sentence overlapping the rationale removed. ``options``:
    ``splitter``, ``reinsert`` (default True), ``augment`` (see the module docstring)."""
    return _remove_rationale(example, truncated=True, **options)


def remove_support(example: QAExample, **options: Any) -> Outcome:
    """OS-R: the whole story with every sentence overlapping the rationale removed
    (``options`` as for :func:`truncate_remove`)."""
    return _remove_rationale(example, truncated=False, **options)


def _remove_rationale(
    example: QAExample,
    *,
    truncated: bool,
    splitter: str | None = None,
    reinsert: bool = True,
    augment: Callable[[QAExample, str], str] | None = None,
) -> Outcome:
    """The text (truncated as TS, or whole) without the sentences that overlap the
    rationale, the answer re-inserted."""
    if augment is not None and not reinsert:
        raise ValueError("augment replaces the re-inserted answer: it needs reinsert=True")
    if reason := _check(example):
        return Outcome.dropped(reason)
    sentences = sentences_of(example, splitter)
    text, variant = example.context, "OS-R"
    if truncated:
        if sentence_at(sentences, min(s for s, _ in example.rationale)) == 0:
            return Outcome.dropped(FIRST_SENTENCE)
        sentences = sentences[: _last_sentence(sentences, example) + 1]
        text, variant = example.context[: sentences[-1][1]], "TS-R"
    gone = sorted({i for s, e in example.rationale for i in overlapping(sentences, s, e)})
    new_text, new_sentences = remove_sentences(text, sentences, gone)
    copied = copied_pieces(len(text), deletion_ranges(text, sentences, gone))
    if not new_text.strip():
        return Outcome.dropped(NOTHING_LEFT)
    features = _features(example, variant + ("+Aug" if augment else ""), UNKNOWN, splitter)
    features["removed"] = [text[sentences[i][0] : sentences[i][1]] for i in gone]
    if "sentences" in example.features:
        features["sentences"] = new_sentences
    present = any(occurs(a, new_text) for a in example.answers)
    features["answer_present"] = present
    appended = None
    if reinsert and example.answer_type == "span" and not present:
        answer = example.answers[0]
        appended = augment(example, answer) if augment else answer
        if appended is None:
            return Outcome.dropped(AUGMENT_MISSING)
        appended = appended.strip()
        if augment and answer.lower() not in appended.lower():
            return Outcome.dropped(AUGMENT_FAILED, detail=appended)
        kept = len(new_text.rstrip())
        copied = [(n, o, min(size, kept - n)) for n, o, size in copied if n < kept]
        new_text = f"{new_text[:kept]} {appended}"
        if new_text.strip() == text.strip():
            return Outcome.dropped(RESTORED)
    features["appended"] = appended
    features["copied"] = copied
    changed = replace(
        example,
        id=f"{example.id}/{features['variant'].lower()}",
        context=new_text,
        answer_starts=(),
        rationale=(),
        features=features,
    )
    return Outcome.kept(changed)


def _features(example: QAExample, variant: str, expected: str, splitter: str | None) -> dict:
    return {
        **example.features,
        "variant": variant,
        "original_id": example.id,
        "expected": expected,
        "deletion_splitter": _splitter_label(example, splitter),
    }


def remove_sentences(
    text: str, sentences: Sequence[Span], gone: Sequence[int]
) -> tuple[str, tuple[Span, ...]]:
    """``text`` without the sentences whose indices are in ``gone``, and the new spans of
    the sentences that stay. Everything else is kept as it was, except the whitespace a
    removed run of sentences leaves behind (see the module docstring)."""
    cuts = deletion_ranges(text, sentences, gone)
    pieces, at = [], 0
    for s, e in cuts:
        pieces.append(text[at:s])
        at = e
    pieces.append(text[at:])

    def moved(pos: int) -> int:
        return pos - sum(e - s for s, e in cuts if e <= pos)

    gone_set = set(gone)
    kept = tuple((moved(s), moved(e)) for i, (s, e) in enumerate(sentences) if i not in gone_set)
    return "".join(pieces), kept


def deletion_ranges(text: str, sentences: Sequence[Span], gone: Sequence[int]) -> list[Span]:
    """The character ranges of ``text`` that :func:`remove_sentences` deletes, in order: the
    sentences in ``gone`` and the titles they leave without a sentence."""
    titles = emptied_titles(text, sentences, gone)
    units = sorted([*(sentences[i] for i in gone), *titles])
    is_title = set(titles)
    cuts = []
    for run in _runs(text, units, range(len(units))):
        start, end = units[run[0]][0], units[run[-1]][1]
        takes_title = any(units[i] in is_title for i in run)
        cuts.append(_paragraph_cut(text, start, end) if takes_title else _cut(text, start, end))
    return cuts


def title_lines(text: str, sentences: Sequence[Span]) -> tuple[Span, ...]:
    """The spans of the lines of ``text`` (without their surrounding spaces) that no
    sentence touches: the titles (see the module docstring)."""
    lines = (m.span() for m in re.finditer(r"\S(?:[^\n]*\S)?", text))
    return tuple((s, e) for s, e in lines if not overlapping(sentences, s, e))


def emptied_titles(text: str, sentences: Sequence[Span], gone: Sequence[int]) -> list[Span]:
    """The titles of ``text`` that head at least one sentence, all of them in ``gone``."""
    titles = title_lines(text, sentences)
    removed = set(gone)
    next_titles = [s for s, _ in titles[1:]] + [len(text)]
    emptied = []
    for (start, end), next_title in zip(titles, next_titles, strict=False):
        headed = [i for i, (s, _) in enumerate(sentences) if end <= s < next_title]
        if headed and removed.issuperset(headed):
            emptied.append((start, end))
    return emptied


def copied_pieces(length: int, cuts: Sequence[Span]) -> list[tuple[int, int, int]]:
    """``(start in the new text, start in the old text, length)`` of every piece of a text of
    ``length`` characters that survives deleting the ordered ranges ``cuts``."""
    pieces, at, moved = [], 0, 0
    for s, e in [*cuts, (length, length)]:
        if s > at:
            pieces.append((at - moved, at, s - at))
        moved += e - s
        at = e
    return pieces


def _runs(text: str, sentences: Sequence[Span], gone: Iterable[int]) -> list[list[int]]:
    """``gone`` grouped into runs of neighbouring sentences with only whitespace between."""
    runs: list[list[int]] = []
    for i in sorted(gone):
        if (
            runs
            and runs[-1][-1] == i - 1
            and not text[sentences[i - 1][1] : sentences[i][0]].strip()
        ):
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def _cut(text: str, start: int, end: int) -> tuple[int, int]:
    """The range to delete for the text ``[start, end)``: with the spaces before it, or
    after it when it starts a line; with its whole line when it fills the line."""
    before = start
    while before > 0 and text[before - 1] in " \t":
        before -= 1
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    line_start = before == 0 or text[before - 1] == "\n"
    line_end = after == len(text) or text[after] == "\n"
    if line_start and line_end:
        if after < len(text):
            return before, after + 1
        return (before - 1 if before > 0 else before), after
    if line_start:
        return start, after
    return before, end


def _paragraph_cut(text: str, start: int, end: int) -> tuple[int, int]:
    """The range to delete for a run ``[start, end)`` that takes a title: with all the
    whitespace before it (the blank line that set its paragraph apart), or after it when
    nothing is before it."""
    before = start
    while before > 0 and text[before - 1].isspace():
        before -= 1
    if before > 0:
        return before, end
    after = end
    while after < len(text) and text[after].isspace():
        after += 1
    return 0, after


def _options(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if k != "pool"}


def _registered(fn: Callable[..., Outcome]):
    def intervention(example: QAExample, rng, **params) -> Outcome:
        return fn(example, **_options(params))

    intervention.__name__ = fn.__name__
    return intervention


_APPENDED = (
    "a span answer no longer in the text is appended (or a generated sentence holding it, "
    "with augment)"
)
# name -> (function, what changes, what is held, expectation)
_DELETIONS = {
    "truncate_story": (
        truncate,
        "the story is cut after the sentence holding the end of the rationale (TS)",
        "the question, the rationale and everything before it",
        ANSWER_UNCHANGED,
    ),
    "truncate_remove_rationale": (
        truncate_remove,
        f"TS, then every sentence overlapping the rationale removed; {_APPENDED} (TS-R, TS-R+Aug)",
        "the question and the sentences before the rationale",
        ANSWER_UNKNOWN,
    ),
    "remove_support": (
        remove_support,
        "every sentence overlapping the rationale (supporting facts) removed from the whole "
        f"story, with the title of a paragraph left empty; {_APPENDED} (OS-R, OS-R+Aug)",
        "the question and every other sentence",
        ANSWER_UNKNOWN,
    ),
}
for _name, (_fn, _changes, _holds, _expectation) in _DELETIONS.items():
    register(_name, family="deletion", changes=_changes, holds=_holds, expectation=_expectation)(
        _registered(_fn)
    )
