"""The ``faithfulness`` suite: does a QA model still give the gold answer once the sentences
that support it are gone?

Method: Chaturvedi et al., "Analyzing semantic faithfulness of language models via input
intervention on question answering" (deletion interventions, their Tables 4–6). Negation
edits (options ``edits``, ``negate``; Table 10) and the predicate–argument probe (option
``probe=predicate-argument`` instead of ``--data``; Table 12) are built in
:mod:`faithprobe.suites.faithfulness.probes` (see there).

**Data.** ``--data`` is a SQuAD/Quoref, CoQA or HotpotQA JSON file
(:func:`faithprobe.datasets.qa.read_qa`, format told apart by its shape). Every question
gives one *item* and these variants (:mod:`faithprobe.qa.deletions`, made by
:mod:`faithprobe.interventions.deletion`):

=========  =============================  ================  ==========================
variant    intervention                   data              a faithful model answers
=========  =============================  ================  ==========================
``OS``     ``none`` (the original story)  all               the gold answer
``TS``     ``truncate_story``             SQuAD, CoQA       the gold answer
``TS-R``   ``truncate_remove_rationale``  SQuAD, CoQA       *unknown*
``OS-R``   ``remove_support``             HotpotQA          *unknown*
=========  =============================  ================  ==========================

A pair is (original, variant); the ``OS`` pair is the identity pair. A variant a deletion
cannot make (see ``deletion.DROPS``: e.g. TS-R when the rationale begins in the first
sentence) still gives a pair, marked ``dropped`` with the reason and not sent to any model,
so the results table counts every drop and the metrics report it (``drops``). ``--limit N``
keeps N items (the first in a seeded hash order, :func:`~faithprobe.seeding.hash_rank`)
with all their variants. ``heldout_of=<model folder>`` keeps only the documents a model
made by ``faithprobe train qa`` held out of training (:mod:`faithprobe.datasets.splits`).

**Asking subjects.** An extractive QA subject (``span-answer``) is asked a
:class:`~faithprobe.requests.SpanAnswerRequest` whose question is the conversation history
(CoQA: the previous turns' questions and gold answers, ``"q1 a1 q2 a2 question"``) before
the question; its null answer means *unknown*. A causal LM gets the prompt ``template``
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
gold answer is yes or no it scores the candidates ``yes`` and ``no`` after the prompt
(:class:`~faithprobe.requests.CandidateScoreRequest`, each scored as `` yes``/`` no``) and
answers the likelier one (so it cannot abstain on those); otherwise it generates greedily
(:class:`~faithprobe.requests.GenerationRequest`, at most ``max_new_tokens``, default 24,
cut at the first newline) and the answer is *unknown* when
:func:`faithprobe.qa.answers.is_unknown` recognises it.

**Scores.** EM and F1 (SQuAD/CoQA normalisation) always against the *original* gold
answers, with an abstention scored as the string ``"unknown"``; unk% is the share of
abstentions. Per subject x variant with 95% intervals (bootstrap over passages, so the
questions of one paragraph or story count as a cluster), the method's Tables 4–6, and
the same split by gold answer kind (yes/no vs the rest). With several models, each later
one is compared with the first on the items both answered (``differences``: e.g. IBT minus
OT, the method's Tables 4–5 side by side, with a paired test over passages).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from pathlib import Path

import pandas as pd

from faithprobe.datasets.qa import detect_qa_format, read_qa
from faithprobe.datasets.splits import heldout_part
from faithprobe.datasets.squad import RATIONALES
from faithprobe.errors import UsageError, excerpt
from faithprobe.examples import UNKNOWN, QAExample
from faithprobe.interventions import Pair
from faithprobe.interventions.deletion import Augmenter
from faithprobe.metrics import qa as m
from faithprobe.qa.answers import extract_answer, is_unknown
from faithprobe.qa.deletions import VARIANTS, deletion_pair, variant_pairs
from faithprobe.qa.prompt import DEFAULT_TEMPLATE, QAPrompt
from faithprobe.qa.questions import YES_NO, history_question, is_yes_no, passage_id
from faithprobe.requests import (
    CandidateScoreRequest,
    CandidateScores,
    Generation,
    GenerationRequest,
    SpanAnswer,
    SpanAnswerRequest,
)
from faithprobe.sentences import DEFAULT_SPLITTER, SPLITTERS
from faithprobe.suite import Suite, sample_items
from faithprobe.suites.faithfulness import probes

DEFAULT_MAX_NEW_TOKENS = 24


class FaithfulnessSuite(Suite):
    name = "faithfulness"
    items_noun = "questions"
    description = "QA: is the answer still given once its supporting sentences are deleted?"
    method = (
        "Chaturvedi et al., Analyzing semantic faithfulness of language models via input "
        "intervention on question answering"
    )
    needs_data = False  # unless probe=predicate-argument
    options = {
        "template": (str, DEFAULT_TEMPLATE, "LM prompt ({context}, {question}, {history})"),
        "max_new_tokens": (int, DEFAULT_MAX_NEW_TOKENS, "LM answer length cap (tokens)"),
        "edits": (str, "", "negation edit file (JSON lines): adds NEG pairs"),
        "negate": (str, "", "'rule': negate yes/no items without an edit by rule"),
        "probe": (str, "", "'predicate-argument': the generated probe instead of --data"),
        "augment": (str, "", "model writing TS-R+Aug/OS-R+Aug sentences (e.g. embedded)"),
        "chat": (bool, False, "ask LMs for answers as a chat message (their chat template)"),
        "splitter": (str, DEFAULT_SPLITTER, "sentence splitter: spacy or pysbd"),
        "rationale": (str, "sentence", "SQuAD-format rationale: sentence or answer (span)"),
        "history_turns": (int, 2, "CoQA: previous turns (with gold answers) before a question"),
        "heldout_of": (str, "", "model from `train qa`: only its held-out documents of --data"),
    }

    def __init__(
        self,
        template: str = DEFAULT_TEMPLATE,
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        edits: str = "",
        negate: str = "",
        probe: str = "",
        augment: str = "",
        chat: bool = False,
        splitter: str = DEFAULT_SPLITTER,
        rationale: str = "sentence",
        history_turns: int = 2,
        heldout_of: str = "",
    ) -> None:
        if max_new_tokens < 1:
            raise UsageError(f"max_new_tokens must be 1 or more, got {max_new_tokens}")
        if probe not in probes.PROBES:
            raise UsageError(
                f"probe must be {excerpt(probes.PREDICATE_ARGUMENT)} or empty, got {excerpt(probe)}"
            )
        if negate not in probes.NEGATE_MODES:
            raise UsageError(f"negate must be 'rule' or empty, got {excerpt(negate)}")
        self.prompt = QAPrompt(template)
        self.max_new_tokens = max_new_tokens
        self.edits, self.negate, self.probe = edits, negate, probe
        self.augment, self.chat = augment, chat
        if splitter not in SPLITTERS:
            raise UsageError(
                f"splitter must be one of {', '.join(SPLITTERS)}, got {excerpt(splitter)}"
            )
        if rationale not in RATIONALES:
            raise UsageError(
                f"rationale must be one of {', '.join(RATIONALES)}, got {excerpt(rationale)}"
            )
        if history_turns < 0:
            raise UsageError(f"history_turns must be 0 or more, got {history_turns}")
        self.splitter, self.rationale, self.history_turns = splitter, rationale, history_turns
        self.heldout_of = heldout_of

    # -- data ----------------------------------------------------------------------------

    def pairs(self, data: Path | None, seed: int) -> list[Pair]:
        if self.probe:
            if data is not None or self.edits or self.negate:
                raise UsageError("probe=predicate-argument takes no --data, edits or negate")
            return probes.predicate_argument_pairs(seed)
        if data is None:
            raise UsageError(
                "the faithfulness suite needs --data: a SQuAD/Quoref, CoQA or HotpotQA JSON "
                "file (e.g. ../shared/data/squad/dev-v1.1.json), or -o probe=predicate-argument"
            )
        examples = self.read(Path(data))
        out = [p for ex in examples for p in variant_pairs(ex, splitter=self.splitter)]
        return out + probes.negation_pairs(examples, self.edits, self.negate)

    def read(self, path: Path) -> list[QAExample]:
        """The examples of a QA file, read with the options that apply to its format (with
        ``heldout_of``: those of the documents that model was not trained on)."""
        format = detect_qa_format(path)
        options = {
            "squad": {"rationale": self.rationale, "splitter": self.splitter},
            "coqa": {"history_turns": self.history_turns},
        }.get(format, {})
        examples = read_qa(path, format, **options)
        return heldout_part(examples, path, self.heldout_of) if self.heldout_of else examples

    def complete(self, pairs: list[Pair], models) -> list[Pair]:
        """With ``augment``: a ``+Aug`` pair beside every TS-R / OS-R pair (see
        :func:`augmented_pairs`); its sentences are generated now, for the sampled items only."""
        if not self.augment:
            return pairs

        def generate(requests):
            return models.ask(self.augment, requests, "augment")

        return pairs + augmented_pairs(pairs, generate, splitter=self.splitter)

    def stratum(self, pair: Pair) -> Hashable:
        return pair.intervention

    def sample(self, pairs: list[Pair], limit: int | None, seed: int) -> list[Pair]:
        """``limit`` items (original questions, seeded hash order) with all their variants."""
        return sample_items(pairs, limit, seed)

    # -- asking subjects -----------------------------------------------------------------

    def request(self, example: QAExample, subject=None):
        accepts = subject.accepts if subject is not None else {"generation", "candidate-scores"}
        if SpanAnswerRequest.kind in accepts:
            return SpanAnswerRequest(history_question(example), example.context)
        if not {GenerationRequest.kind, CandidateScoreRequest.kind} <= set(accepts):
            raise UsageError(
                f"{subject.name} answers neither span-answer nor generation and "
                "candidate-score requests"
            )
        prompt = self.prompt.render(example)
        if is_yes_no(example):
            return CandidateScoreRequest(prompt, YES_NO)
        return GenerationRequest(prompt, self.max_new_tokens, ("\n",), chat=self.chat)

    @staticmethod
    def _prediction(answer) -> dict:
        if isinstance(answer, SpanAnswer):
            return {
                "prediction": answer.text,
                "predicted_unknown": answer.start < 0,
                "span_score": answer.score,
                "null_score": answer.null_score,
            }
        if isinstance(answer, Generation):
            text = extract_answer(answer.text)
            return {
                "generation": answer.text,
                "prediction": text,
                "predicted_unknown": bool(text) and is_unknown(text),  # "" is empty%
                "n_tokens": answer.n_tokens,
            }
        if isinstance(answer, CandidateScores):
            yes, no = answer.logprobs
            return {
                "prediction": "yes" if yes >= no else "no",
                "predicted_unknown": False,
                "yes_logprob": yes,
                "no_logprob": no,
            }
        raise TypeError(f"unexpected answer {answer!r}")

    def rows(self, pairs: Sequence[Pair], subject, answers: dict) -> list[dict]:
        out = []
        for pair in pairs:
            o, x = pair.original, pair.intervened
            dropped = x.features.get("dropped")
            variant = x.features["variant"]
            row = {
                "subject": subject.name,
                "subject_fingerprint": subject.fingerprint,
                "pair_id": pair.id,
                "item_id": o.id,
                "example_id": None if dropped else x.id,
                "variant": variant,
                "intervention": pair.intervention,
                "expectation": pair.expectation.name,
                "expected": x.features.get("expected") or _expected(variant),
                "dropped": dropped,
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
                **probes.probe_columns(pair),
            }
            if not dropped:
                row.update(self._prediction(answers[x.id]))
            out.append(row)
        return _with_scores(out)

    def metrics(self, results: pd.DataFrame, seed: int) -> dict:
        options = {"template": self.prompt.template, "max_new_tokens": self.max_new_tokens,
                   "edits": self.edits, "negate": self.negate, "probe": self.probe,
                   "augment": self.augment, "chat": self.chat, "splitter": self.splitter,
                   "rationale": self.rationale, "history_turns": self.history_turns,
                   "heldout_of": self.heldout_of}  # fmt: skip
        if self.probe:
            pa = probes.predicate_argument_metrics(results, seed)
            return {"options": options, "predicate_argument": pa}
        answered = results[results["dropped"].isna()] if not results.empty else results
        if len(answered):  # NEG rows have their own table (their gold is the new answer)
            answered = answered[answered["variant"] != probes.NEG]
        scores = m.qa_scores(answered, cluster="passage_id", seed=seed) if len(answered) else []
        removals = answered[answered["variant"].str.contains("-R")] if len(answered) else answered
        return {
            "options": options,
            "sizes": variant_sizes(results),
            "drops": drop_counts(results),
            "scores": _records(scores),
            "scores_by_answer_kind": _scores_by(
                answered,
                "answer_kind",
                answered["yes_no"].map(ANSWER_KINDS) if len(answered) else None,
                seed,
            ),
            "scores_by_reinsertion": _scores_by(
                removals,
                "reinserted",
                removals.apply(reinserted, axis=1) if len(removals) else None,
                seed,
            ),
            "expectation": _records(m.expectation_rates(answered)) if len(answered) else [],
            "differences": _records(m.subject_differences(answered, seed=seed))
            if len(answered)
            else [],
            "negation": probes.negation_metrics(results),
        }


ANSWER_KINDS = {True: "yes/no", False: "other"}


def reinserted(row: pd.Series) -> str:
    """What a TS-R / OS-R row's text got back in place of the deleted support."""
    if row["appended"] is None or pd.isna(row["appended"]):
        return "nothing: the answer is still in the text"
    return "generated sentence" if "+Aug" in row["variant"] else "bare answer"


def _scores_by(rows: pd.DataFrame, name: str, labels: pd.Series | None, seed: int) -> list[dict]:
    """:func:`~faithprobe.metrics.qa.qa_scores` of ``rows`` per value of ``labels``, which
    become the column ``name``."""
    if labels is None:
        return []
    tables = []
    for label, group in rows.groupby(labels, sort=True):
        table = m.qa_scores(group, cluster="passage_id", seed=seed)
        table.insert(2, name, label)
        tables.append(table)
    return _records(pd.concat(tables) if tables else [])


def _expected(variant: str) -> str:
    return UNKNOWN if "-R" in variant else "answer"


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
    removals = [p for p in pairs if p.pair_id and p.pair_id.split(":", 1)[0] in ("TS-R", "OS-R")]
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
    out = []
    for p in removals:
        variant = p.pair_id.split(":", 1)[0] + "+Aug"
        out.append(
            deletion_pair(p.original, variant, p.intervention, splitter=splitter, augment=augmenter)
        )
    return out


def _records(frame) -> list[dict]:
    return frame.to_dict("records") if isinstance(frame, pd.DataFrame) else list(frame)


def _with_scores(rows: list[dict]) -> list[dict]:
    """``em``, ``f1``, ``correct`` (scored as :func:`faithprobe.metrics.qa.qa_scores` does)
    and ``expectation_met`` on every answered row; None on dropped ones."""
    answered = [r for r in rows if r["dropped"] is None]
    if answered:
        scored = m.scored_rows(pd.DataFrame(answered))
        for r, em, f1, correct in zip(
            answered, scored["em"], scored["f1"], scored["correct"], strict=True
        ):
            r.update(em=float(em), f1=float(f1), correct=bool(correct))
            unk = bool(r["predicted_unknown"])
            r["expectation_met"] = unk if r["expected"] == UNKNOWN else (bool(correct) and not unk)
    for r in rows:
        if r["dropped"] is not None:
            r.update(em=None, f1=None, correct=None, expectation_met=None)
    return rows


def _per_pair(results: pd.DataFrame) -> pd.DataFrame:
    """One row per pair (drops do not depend on the subject)."""
    return results.drop_duplicates("pair_id") if not results.empty else results


def variant_sizes(results: pd.DataFrame) -> list[dict]:
    """Per variant: items, answered (sent to the models) and dropped."""
    pairs = _per_pair(results)
    out = []
    for variant in [v for v in VARIANTS if not pairs.empty and v in set(pairs["variant"])]:
        rows = pairs[pairs["variant"] == variant]
        n_dropped = int(rows["dropped"].notna().sum())
        out.append(
            {
                "variant": variant,
                "intervention": rows["intervention"].iloc[0],
                "expected": _expected(variant),
                "items": len(rows),
                "answered": len(rows) - n_dropped,
                "dropped": n_dropped,
            }
        )
    return out


def drop_counts(results: pd.DataFrame) -> list[dict]:
    """Per variant and reason: how many items the deletion dropped."""
    pairs = _per_pair(results)
    if pairs.empty:
        return []
    dropped = pairs[pairs["dropped"].notna()]
    counts = dropped.groupby(["variant", "dropped"], sort=True).size()
    return [{"variant": v, "reason": r, "count": int(c)} for (v, r), c in counts.items()]
