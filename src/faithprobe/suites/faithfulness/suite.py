"""The ``faithfulness`` suite: does a QA model still give the gold answer once the sentences
that support it are gone?

Method: Chaturvedi et al., "Analyzing semantic faithfulness of language models via input
intervention on question answering" (deletion interventions, their Tables 4–6). Negation
edits (options ``edits``, ``negate``; Table 10) and the predicate–argument probe (option
``probe=predicate-argument`` instead of ``--data``; Table 12) are built in
:mod:`faithprobe.suites.faithfulness.probes` (see there).

**Data.** ``--data`` is a SQuAD/Quoref, CoQA or HotpotQA JSON file
(:class:`faithprobe.datasets.qa_formats.QAReading`, format told apart by its shape). Every question
gives one *item* and its deletion variants OS, TS, TS-R (SQuAD, CoQA) or OS-R (HotpotQA):
:mod:`faithprobe.interventions.deletion_variants` tables them with their interventions and the answer a
faithful model gives; :mod:`faithprobe.interventions.deletion` makes them.

A pair is (original, variant); the ``OS`` pair is the identity pair. A variant a deletion
cannot make (see ``deletion.DROPS``: e.g. TS-R when the rationale begins in the first
sentence) still gives a pair, marked dropped with the reason (``dropped_reason`` in the
results table) and not sent to any model, so the results table counts every drop and the metrics report it (``drops``). ``--limit N``
keeps N items (the first in a seeded hash order, :func:`~faithprobe.seeding.hash_rank`)
with all their variants. ``heldout_of=<model folder>`` keeps only the documents a model
made by ``faithprobe train qa`` held out of training (:mod:`faithprobe.datasets.splits`).

**Asking subjects.** An extractive QA subject (``span-answer``) is asked a
:class:`~faithprobe.requests.SpanAnswerRequest` whose question is the conversation history
(CoQA: the previous turns' questions and gold answers, ``"q1 a1 q2 a2 question"``) before
the question; its null answer means *unknown*. If it has an answer-kind head (``faithprobe
train qa --answer-kind``), a question whose gold answer is yes or no is asked through that
head instead (:mod:`faithprobe.asking.yes_no_head`: yes, no or unknown, so it can abstain);
without one it can only answer such a question with a span, which is scored wrong. A causal
LM gets the prompt ``template``
(option; slots ``{context}``, ``{question}`` and ``{history}``, a literal ``\\n`` typed on
the command line is a newline: :mod:`faithprobe.qa.prompt`); the default is
:data:`~faithprobe.qa.prompt.DEFAULT_TEMPLATE`, i.e. ::

    <context>

    Answer with a few words from the text. If the text does not give the answer, answer "unknown".

    Q: <history question 1>
    A: <history answer 1>
    Q: <question>
    A:

(each history turn is one ``Q:``/``A:`` pair of lines; a template without ``{history}``
gets the turns prepended to the question as for extractive models). For a question whose
gold answer is yes or no, a model that can score candidates scores ``yes`` and ``no``
after the prompt (:class:`~faithprobe.requests.CandidateScoreRequest`, each scored as
`` yes``/`` no``) and answers the likelier one (so it cannot abstain on those). A model
that can only generate (a chat-only endpoint, ``--api chat``), or any model with
``yes_no=generate``, is asked it like every other question: it generates greedily
(:class:`~faithprobe.requests.GenerationRequest`, at most ``max_new_tokens``, default 24,
cut at the first newline; a chat message for a chat-only endpoint) and the reply is read
by :func:`faithprobe.qa.replies.read_reply`: yes, no, an abstention (*unknown*), a hedge,
a refusal or neither (see there for the phrasings and how each kind is scored). Every row
says how its answer was obtained (``answer_mode``) and read (``reply_kind``).

**Scores.** EM and F1 (SQuAD/CoQA normalisation) always against the *original* gold
answers, with an abstention scored as the string ``"unknown"``; unk% is the share of
abstentions. Per subject x variant with 95% intervals (bootstrap over passages, so the
questions of one paragraph or story count as a cluster), the method's Tables 4–6, and
the same split by gold answer kind (yes/no vs the rest). With several models, each later
one is compared with the first on the items both answered (``differences``: e.g. IBT minus
OT, the method's Tables 4–5 side by side, with a paired test over passages).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from faithprobe.asking.qa_questions import QAAsker
from faithprobe.asking.yes_no_head import answer_kind_request, asks_answer_kind, yes_no_prediction
from faithprobe.datasets.augment_sentences import read_augment_sentences, sentence_for
from faithprobe.datasets.qa_formats import QAReading
from faithprobe.datasets.splits import heldout_part
from faithprobe.errors import UsageError
from faithprobe.expectations import Behaviour
from faithprobe.interventions import Pair
from faithprobe.interventions.deletion import Augmenter
from faithprobe.interventions.deletion_variants import deletion_pair, variant_pairs
from faithprobe.metrics import qa_scores as m
from faithprobe.metrics.answer_modes import answer_modes
from faithprobe.qa.questions import is_yes_no, passage_id
from faithprobe.records import UNKNOWN, Outcome, QAExample
from faithprobe.requests import GenerationRequest
from faithprobe.sentences import DEFAULT_SPLITTER
from faithprobe.suite_protocol import Suite, sample_items
from faithprobe.suites.faithfulness import controls, probes
from faithprobe.suites.faithfulness import metrics as fm
from faithprobe.suites.faithfulness.options import FaithfulnessOptions


class FaithfulnessSuite(Suite):
    name = "faithfulness"
    items_noun = "questions"
    options: FaithfulnessOptions

    def __init__(self, options: FaithfulnessOptions | None = None) -> None:
        super().__init__(options)
        self.asker = QAAsker.from_options(self.options)

    # -- data ----------------------------------------------------------------------------

    def pairs(self, data: Path | None, seed: int) -> list[Pair]:
        if self.options.probe:
            if data is not None or self.options.edits or self.options.negate:
                raise UsageError("probe=predicate-argument takes no --data, edits or negate")
            return probes.predicate_argument_pairs(seed)
        if data is None:
            raise UsageError(
                "the faithfulness suite needs --data: a SQuAD/Quoref, CoQA or HotpotQA JSON "
                "file (e.g. ../shared/data/squad/dev-v1.1.json), or -o probe=predicate-argument"
            )
        o = self.options
        every = self.read(Path(data))
        examples = heldout_part(every, data, o.heldout_of) if o.heldout_of else every
        out = [p for ex in examples for p in variant_pairs(ex, splitter=o.splitter)]
        # an edit file covers the whole data file: it is checked against all of it
        return out + probes.negation_pairs(examples, o.edits, o.negate, every=every,
                                           on=o.negate_on, splitter=o.splitter)  # fmt: skip

    def read(self, path: Path) -> list[QAExample]:
        """The examples of a QA file, read with the options that apply to its format."""
        o = self.options
        return QAReading(o.rationale, o.splitter, o.history_turns, o.coqa_rules).read(path)

    def complete(self, pairs: list[Pair], models) -> list[Pair]:
        """With ``augment``: a ``+Aug`` pair beside every TS-R / OS-R pair (see
        :func:`augmented_pairs`); its sentences are generated now, for the sampled items only.
        With ``augment_file``: the same pairs, the sentences read from the file."""
        if self.options.augment_file:
            sentences = read_augment_sentences(self.options.augment_file)
            return pairs + file_augmented_pairs(pairs, sentences, splitter=self.options.splitter)
        if not self.options.augment:
            return pairs

        def generate(requests):
            return models.ask(self.options.augment, requests, "augment")

        return pairs + augmented_pairs(pairs, generate, splitter=self.options.splitter)

    def stratum(self, pair: Pair) -> Hashable:
        return pair.intervention

    def sample(self, pairs: list[Pair], limit: int | None, seed: int) -> list[Pair]:
        """``limit`` items (original questions, seeded hash order) with all their variants;
        for the probe, the questions of whole stories (:func:`probes.sample_stories`)."""
        if self.options.probe:
            return probes.sample_stories(pairs, limit, seed)
        return sample_items(pairs, limit, seed)

    # -- asking subjects -----------------------------------------------------------------

    def request(self, example: QAExample, subject=None):
        if subject is not None and asks_answer_kind(example, subject.accepts):
            return answer_kind_request(example)  # an extractive model's yes/no head
        return self.asker.request(example, subject)

    def rows(self, pairs: Sequence[Pair], subject, answers: dict) -> list[dict]:
        out = []
        chat = self.asker.chat_for(subject)
        for pair in pairs:
            o, x = pair.original, pair.intervened
            dropped = pair.dropped
            variant = x.features["variant"]
            row = {
                "pair_id": pair.id,
                "variant": variant,
                "expected": x.features.get("expected") or fm.expected(variant),
                "drop_detail": x.features.get("drop_detail"),
                "source": o.features.get("source"),
                "passage_id": passage_id(o),
                "question": o.question,
                "history_turns": len(o.history),
                "original_context_chars": len(o.context),
                "context_chars": None if dropped else len(x.context),
                "removed_sentences": len(x.features.get("removed", ())) if not dropped else None,
                "appended": x.features.get("appended"),
                # the original gold, except where the pair changes it (negation, probe)
                "answers": list(x.answers if "gold" in x.features else o.answers),
                "answer_type": o.answer_type,
                "yes_no": is_yes_no(o),
                "prediction": None,
                "predicted_unknown": None,
                "answer_mode": None,
                "reply_kind": None,
                **probes.probe_columns(pair),
            }
            if not dropped:
                answer = answers[x.id]
                if asks_answer_kind(x, subject.accepts):  # an extractive model's yes/no head
                    row.update(yes_no_prediction(answer))
                else:
                    row.update(self.asker.prediction(answer, is_yes_no(x), chat))
            out.append(row)
        return _with_scores(out, [p.dropped for p in pairs])

    def behaviour(self, pair: Pair, row: Mapping[str, Any]) -> Behaviour | None:
        """The answer as scored: *unknown* where the model abstained. The gold is *unknown*
        where a faithful model abstains (``expected``); otherwise the model's own answer
        where it was scored correct (EM > 0, or the right yes/no: :data:`~Behaviour.gold`
        stands for "what counts as the gold answer"), else the first gold answer."""
        if pair.dropped:
            return None
        unknown = bool(row["predicted_unknown"])
        prediction = UNKNOWN if unknown else row["prediction"]
        if row["expected"] == UNKNOWN:
            gold = UNKNOWN
        elif row["correct"] and not unknown:
            gold = prediction
        else:
            gold = row["answers"][0] if len(row["answers"]) else ""
        return Behaviour(None, prediction, gold)

    def metrics(self, results: pd.DataFrame, seed: int) -> dict:
        """The probe's or the deletions' metrics, and how each model answered."""
        modes = {"answer_modes": answer_modes(results)}
        if self.options.probe:
            return {
                "predicate_argument": probes.predicate_argument_metrics(results, seed),
                "reply_kinds": fm.reply_kinds(results, ["variant", "form"], "story_id", seed),
                **controls.probe_controls(results, seed),
                **modes,
            }
        return {**fm.deletion_metrics(results, seed), **modes}


AUGMENT_PROMPT = (
    'Write one short sentence that answers the question "{question}" with the answer "{answer}".'
)
AUGMENT_MAX_NEW_TOKENS = 48


def augmented_pairs(
    pairs: Sequence[Pair], generate, *, splitter: str = DEFAULT_SPLITTER
) -> list[Pair]:
    """TS-R+Aug / OS-R+Aug: for every TS-R / OS-R pair, the same deletion with a generated
    sentence holding the answer in place of the bare re-inserted answer (Chaturvedi et
    al.'s augmentation). ``generate(requests)`` answers generation requests
    of :data:`AUGMENT_PROMPT` (a chat message, greedy, one line) in one batch. An item whose
    answer was still in the text needs no sentence (its +Aug text is the TS-R text); one
    whose sentence lacks the answer is dropped (``AUGMENT_FAILED``) with the sentence kept
    as ``drop_detail``; items TS-R dropped, +Aug drops for the same reason."""
    removals = _removals(pairs)
    needing = {p.original.id: p.original for p in removals if p.intervened.features.get("appended")}
    ids = sorted(needing)
    requests = [
        GenerationRequest(
            AUGMENT_PROMPT.format(question=needing[i].question, answer=needing[i].answers[0]),
            AUGMENT_MAX_NEW_TOKENS,
            ("\n",),
            chat=True,
        )
        for i in ids
    ]
    sentences = dict(zip(ids, (g.text for g in generate(requests)), strict=True))
    augmenter = Augmenter("generated", lambda example, _answer: sentences[example.id])
    return _augmented(removals, augmenter, splitter)


def file_augmented_pairs(
    pairs: Sequence[Pair], sentences: Mapping[str, str], *, splitter: str = DEFAULT_SPLITTER
) -> list[Pair]:
    """TS-R+Aug / OS-R+Aug with the sentences of an augment file (option ``augment_file``,
    :mod:`faithprobe.datasets.augment_sentences`), as :func:`augmented_pairs` otherwise; an
    item the file has no sentence for is dropped (``AUGMENT_MISSING``), as the method drops
    it."""
    augmenter = Augmenter("file", lambda example, _answer: sentence_for(sentences, example))
    return _augmented(_removals(pairs), augmenter, splitter)


def _removals(pairs: Sequence[Pair]) -> list[Pair]:
    return [p for p in pairs if p.pair_id and p.pair_id.split(":", 1)[0] in ("TS-R", "OS-R")]


def _augmented(removals: list[Pair], augmenter: Augmenter, splitter: str) -> list[Pair]:
    out = []
    for p in removals:
        variant = p.pair_id.split(":", 1)[0] + "+Aug"
        if p.dropped:  # made again, a sentence would not restore the text as the answer did
            same = Outcome.dropped(p.dropped).example_or_dropped(p.original, variant)
            out.append(replace(p, intervened=same, pair_id=f"{variant}:{p.original.id}"))
            continue
        out.append(
            deletion_pair(p.original, variant, p.intervention, splitter=splitter, augment=augmenter)
        )
    return out


def _with_scores(rows: list[dict], dropped: Sequence[str | None]) -> list[dict]:
    """``em``, ``f1`` and ``correct`` (scored as :func:`faithprobe.metrics.qa_scores.qa_scores`
    does) on every answered row; None on the rows of ``dropped`` pairs."""
    answered = [r for r, d in zip(rows, dropped, strict=True) if d is None]
    if answered:
        scored = m.scored_rows(pd.DataFrame(answered))
        for r, em, f1, correct in zip(
            answered, scored["em"], scored["f1"], scored["correct"], strict=True
        ):
            r.update(em=float(em), f1=float(f1), correct=bool(correct))
    for r, d in zip(rows, dropped, strict=True):
        if d is not None:
            r.update(em=None, f1=None, correct=None)
    return rows
