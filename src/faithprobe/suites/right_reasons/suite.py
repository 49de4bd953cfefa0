"""The ``right-reasons`` suite: for comparison and coreference questions, does a QA model
(extractive, or a causal LM answering by generation) use what a careful reader would --
checked by counterfactuals and by saliency -- and do the two agree?

Method: Ray Choudhury, Rogers & Augenstein, "Machine reading, fast and slow: when do models
'understand' language?".

**Data.** Without ``--data``: the generated comparison items
(:mod:`faithprobe.generators.comparisons`, both conditions; datasets
``comparison-supporting`` and ``comparison-paragraph``). With ``--data``: the comparison
questions of a HotpotQA-format file (HotpotQA, 2WikiMultiHopQA;
:func:`~faithprobe.datasets.comparisons.select_comparisons`) in both conditions, their gold
paragraphs (``comparison-hotpotqa-paragraph``) and their supporting facts alone
(``comparison-hotpotqa-supporting``, :func:`~faithprobe.datasets.comparisons.
supporting_facts_only`); those of a SQuAD-format file (``comparison-squad``: SQuAD names no
supporting facts, so one condition), or, with ``coreference=true`` or when the file is Quoref,
its coreference questions (:func:`~faithprobe.coreference.select_coreference` with the
fallback rule, or the spaCy coreference pipeline named by ``resolver=``; dataset
``coreference``); ``heldout_of=<model folder>`` keeps only the documents of ``--data`` that
model (``faithprobe train qa``, the file given as ``--train`` or ``--mix``) did not train
on. The generated items are the ``test`` part, never trained on by a model given the
``train`` part. Questions the selection rejects are counted by reason (``selection`` in
the metrics; the results table cannot hold them, so ``run.json`` keeps them for ``report
--rebuild``).

**Pairs.** A comparison item gives (original, ``CF``: comparative → antonym) and (original,
``CF-ood``: → an out-of-distribution paraphrase) (:mod:`faithprobe.interventions.
comparative`); a coreference item gives (original, ``CF``): a counterfactual made by rule
(:mod:`faithprobe.interventions.coreference`) or imported from ``counterfactuals=FILE``
(:func:`~faithprobe.coreference.counterfactuals.read_coref_counterfactuals`). A variant
that cannot be made is still a pair, marked ``dropped`` with the reason and sent to no
model (as in the ``faithfulness`` suite). ``--limit N`` keeps N original items with all
their variants.

**Requests.** An extractive QA model gets a
:class:`~faithprobe.requests.SpanAnswerRequest` per original and counterfactual; a causal LM
answers by generation, prompted as in the ``faithfulness`` suite (options ``template``,
``max_new_tokens``, ``chat``; :mod:`faithprobe.asking.qa_questions`). Every *original* also gets one
saliency request per method of ``saliency`` (default ``ig,occlusion``; ``ig_steps``
interpolation points, default 50) when the subject gives saliency (the method computes
saliency on the original only): a :class:`~faithprobe.requests.SaliencyRequest` (the
predicted answer start) for an extractive QA model, a
:class:`~faithprobe.requests.PromptSaliencyRequest` (the first token of the generated answer,
attributed to the prompt's question and context tokens: :mod:`faithprobe.subjects.hf.attribution.
causal`) for a local causal LM -- except originals none of whose counterfactuals could be
made, where alignment is undefined. Integrated Gradients is read under each summary of
``ig_summaries`` (``l2``, ``l1``, ``dot``; :mod:`faithprobe.subjects.hf.attribution.
integrated_gradients`), each a *scorer* of its own (``ig-l2``, ...), from one computation.

**Rows and metrics.** One row per (pair, subject): the original's and the
counterfactual's prediction, EM and F1 (each against its own gold), and per saliency
scorer the partition test of the original (:mod:`faithprobe.metrics.alignment`: positive =
the comparative's words in the question, or the answer cluster's mentions in the context,
see :mod:`faithprobe.saliency.partitions`), whether the instance is aligned, and the
random-partition control; whether the two answers are the same (``same_answer``); for a
comparison, the comparative and the word the counterfactual put in its place
(``og_comparative``, ``cf_comparative``); for a
causal LM its raw replies (``og_generation``, ``cf_generation``). Metrics:
:mod:`faithprobe.suites.right_reasons.metrics`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import replace
from pathlib import Path

import pandas as pd

from faithprobe.asking.qa_questions import QAAsker
from faithprobe.coreference import FallbackResolver, SpacyResolver, select_coreference
from faithprobe.coreference.counterfactuals import read_coref_counterfactuals
from faithprobe.datasets.comparisons import select_comparisons, supporting_facts_only
from faithprobe.datasets.qa_formats import detect_qa_format, read_qa
from faithprobe.datasets.splits import heldout_part
from faithprobe.errors import UsageError
from faithprobe.expectations import Behaviour
from faithprobe.generators.comparisons import ComparisonConfig
from faithprobe.generators.comparisons import generate as generate_comparisons
from faithprobe.interventions import Pair, get
from faithprobe.interventions import comparative as cmp
from faithprobe.interventions.coreference import NAME as COREF_CF
from faithprobe.metrics import qa_scores as m
from faithprobe.metrics.alignment import instance_alignment_rows
from faithprobe.metrics.answer_modes import answer_modes
from faithprobe.qa.answers import normalize_answer
from faithprobe.qa.questions import passage_id
from faithprobe.records import Outcome, QAExample
from faithprobe.requests import PromptSaliencyRequest, SaliencyRequest
from faithprobe.saliency.partitions import (
    comparison_partition_of,
    coreference_partition,
    tag_words,
    token_partition,
)
from faithprobe.suite_protocol import Suite, sample_items
from faithprobe.suites.right_reasons import RightReasonsOptions
from faithprobe.suites.right_reasons import metrics as rr

ORIGINAL = "original"
COREFERENCE = "coreference"
NO_IMPORTED = "no imported counterfactual for this question"
NO_SALIENCY = "no_saliency"  # feature of an original: none of its counterfactuals was made
ALIGNMENT_COLUMNS = (
    "statistic", "p_value", "passed", "reason", "aligned", "control_passed", "control_aligned",
)  # fmt: skip


def _original(example: QAExample, dataset: str) -> QAExample:
    return replace(example, features={**example.features, "variant": ORIGINAL, "dataset": dataset})


def _pair(original: QAExample, outcome: Outcome, variant: str, intervention: str) -> Pair:
    """(original, the variant ``outcome`` made), or the original marked ``dropped`` with
    the reason (same id: nothing new is asked)."""
    changed = outcome.example_or_dropped(original, variant)
    if outcome.reason is None:
        changed = replace(
            changed, features={**changed.features, "dataset": original.features["dataset"]}
        )
    pair_id = f"{variant}:{changed.id}"
    return Pair(original, changed, intervention, get(intervention).expectation, pair_id=pair_id)


def comparison_pairs(examples: Sequence[QAExample], dataset, seed: int) -> list[Pair]:
    """(original, CF) and (original, CF-ood) per comparison item; ``dataset(example)`` names
    its dataset."""
    out = []
    for ex in examples:
        original = _original(ex, dataset(ex))
        for name, (_, variant, _) in cmp.ANTONYMS.items():
            out.append(_pair(original, get(name).apply(original, seed=seed), variant, name))
    return out


class RightReasonsSuite(Suite):
    name = "right-reasons"
    items_noun = "comparison or coreference questions"

    def __init__(self, options: RightReasonsOptions | None = None) -> None:
        super().__init__(options)
        self.asker = QAAsker.from_options(self.options)
        self.selection: dict[str, dict[str, int]] = {}
        self.seed = 0

    # -- data ----------------------------------------------------------------------------

    def pairs(self, data: Path | None, seed: int) -> list[Pair]:
        self.seed = seed
        return _skip_saliency_where_all_dropped(self._pairs(data, seed))

    def _pairs(self, data: Path | None, seed: int) -> list[Pair]:
        if data is None:
            items = generate_comparisons(ComparisonConfig(), seed)
            return comparison_pairs(items, lambda e: f"comparison-{e.features['condition']}", seed)
        format = detect_qa_format(data)
        if format not in ("squad", "hotpotqa"):
            raise UsageError(f"{data}: right-reasons reads SQuAD- or HotpotQA-format files, "
                             f"not {format}")  # fmt: skip
        read = read_qa(Path(data), format)
        heldout_of = self.options.heldout_of
        examples = heldout_part(read, data, heldout_of) if heldout_of else read
        quoref = any(e.features.get("source") == "quoref" for e in read)
        if format == "squad" and (self.options.coreference or quoref):
            return self._coreference_pairs(examples, read, seed)
        if self.options.coreference:
            raise UsageError(f"{data}: coreference questions come from SQuAD-format files")
        selected, rejected = select_comparisons(examples)
        if format == "squad":
            self.selection = {"comparison-squad": dict(rejected)}
            return comparison_pairs(selected, lambda e: "comparison-squad", seed)
        paragraph, supporting = "comparison-hotpotqa-paragraph", "comparison-hotpotqa-supporting"
        outcomes = [supporting_facts_only(e) for e in selected]
        self.selection = {
            paragraph: dict(rejected),
            supporting: dict(rejected + Counter(o.reason for o in outcomes if o.reason)),
        }
        cut = [o.example for o in outcomes if o.example is not None]
        cut_ids = {e.id for e in cut}
        return comparison_pairs(
            [*selected, *cut], lambda e: supporting if e.id in cut_ids else paragraph, seed
        )

    def _coreference_pairs(
        self, examples: list[QAExample], read: list[QAExample], seed: int
    ) -> list[Pair]:
        """Pairs of the coreference questions of ``examples``; imported counterfactuals may
        name any question of the file (``read``)."""
        pipeline = self.options.resolver
        resolver = SpacyResolver(pipeline) if pipeline else FallbackResolver()
        selection = select_coreference(examples, resolver)
        self.selection = {COREFERENCE: dict(selection.dropped)}
        originals = [_original(ex, COREFERENCE) for ex in selection.kept]
        if not self.options.counterfactuals:
            counterfactual = get(COREF_CF)
            return [_pair(o, counterfactual.apply(o, seed=seed), "CF", COREF_CF) for o in originals]

        imported: dict[str, list[QAExample]] = {}
        for cf in read_coref_counterfactuals(self.options.counterfactuals, read):
            imported.setdefault(cf.features["original_id"], []).append(cf)
        return [
            _pair(o, Outcome.kept(cf) if cf else Outcome.dropped(NO_IMPORTED), "CF", COREF_CF)
            for o in originals
            for cf in imported.get(o.id, [None])
        ]

    def data_record(self) -> dict:
        return {"selection": self.selection}

    def drop_summary(self) -> str:
        return "; ".join(
            f"{dataset}: " + ", ".join(f"{reason} {n}" for reason, n in sorted(reasons.items()))
            for dataset, reasons in sorted(self.selection.items())
            if reasons
        )

    def restore_data_record(self, record: dict) -> None:
        self.selection = record.get("selection", {})

    def stratum(self, pair: Pair) -> Hashable:
        return pair.original.features["dataset"]

    def sample(self, pairs: list[Pair], limit: int | None, seed: int) -> list[Pair]:
        """``limit`` original items (seeded hash order) with all their variants."""
        return sample_items(pairs, limit, seed)

    # -- asking subjects -----------------------------------------------------------------

    def request(self, example: QAExample, subject=None):
        """A span-answer request for an extractive QA model, a generation request (the
        ``faithfulness`` suite's prompt) for a causal LM (:class:`~faithprobe.asking.qa_questions.
        QAAsker`)."""
        return self.asker.request(example, subject)

    def extra_requests(
        self, example: QAExample, subject=None
    ) -> dict[str, SaliencyRequest | PromptSaliencyRequest]:
        """Saliency of an original input, per method, for subjects that give it: a
        :class:`SaliencyRequest` for an extractive QA model, a :class:`PromptSaliencyRequest`
        of the prompt it answers from for a causal LM."""
        original = example.features.get("variant") == ORIGINAL
        if not original or subject is None or example.features.get(NO_SALIENCY):
            return {}
        steps, accepts = self.options.ig_steps, subject.accepts
        if self.asker.extractive(accepts) and SaliencyRequest.kind in accepts:
            return {
                method: SaliencyRequest(example.question, example.context, method, steps)
                for method in self.options.methods
            }
        if self.asker.extractive(accepts) or PromptSaliencyRequest.kind not in accepts:
            return {}
        prompt, question, context = self.asker.prompt.render_with_spans(example)
        return {
            method: PromptSaliencyRequest(
                prompt, question, context, method, steps, chat=self.asker.chat_for(subject)
            )
            for method in self.options.methods
        }

    # -- rows ----------------------------------------------------------------------------

    def rows(self, pairs: Sequence[Pair], subject, answers: dict) -> list[dict]:
        out = []
        chat = self.asker.chat_for(subject)
        for pair in pairs:
            o, x = pair.original, pair.intervened
            dropped = pair.dropped
            row = {
                "pair_id": pair.id,
                "dataset": o.features["dataset"],
                "variant": x.features["variant"],
                "drop_detail": x.features.get("drop_detail"),
                "passage_id": passage_id(o),
                "question": o.question,
                "cf_question": None if dropped else x.question,
                "og_answers": list(o.answers),
                "cf_answers": None if dropped else list(x.answers),
                # coreference: who made the cluster, and whether the counterfactual was made
                # by rule (True) or imported (False)
                "resolver": o.features.get("resolver"),
                "cf_generated": None if dropped else x.features.get("generated"),
                # comparisons: the comparative word and the counterfactual's in its place
                "og_comparative": None if dropped else x.features.get("original_comparative"),
                "cf_comparative": (
                    None
                    if dropped or "original_comparative" not in x.features
                    else x.features.get("comparative")
                ),
            }
            for side, example in (("og", o), ("cf", None if dropped else x)):
                read = (
                    {} if example is None else self.asker.prediction(answers[example.id], chat=chat)
                )
                prediction = read.get("prediction")
                row.setdefault("answer_mode", read.get("answer_mode"))
                row[f"{side}_prediction"] = prediction
                row[f"{side}_generation"] = read.get("generation")
                row[f"{side}_em"] = (
                    None if example is None else m.exact_match(prediction, example.answers)
                )
                row[f"{side}_f1"] = None if example is None else m.f1(prediction, example.answers)
            row["same_answer"] = (
                None if dropped else same_answer(row["og_prediction"], row["cf_prediction"])
            )
            out.append(row)
        return self._with_alignment(out, pairs, answers)

    def _with_alignment(self, rows: list[dict], pairs: Sequence[Pair], answers: dict) -> list[dict]:
        """Per saliency scorer (a method under one summary, :attr:`RightReasonsOptions.
        scorers`) the partition test of the original, the aligned flag and the random
        control (:func:`~faithprobe.metrics.alignment.instance_alignment_rows`), as
        ``<scorer>_<column>``; None where there is no saliency or the pair was dropped."""
        partitions = _word_partitions([p.original for p in pairs])
        for scorer in self.options.scorers:
            tested = []
            for row, pair in zip(rows, pairs, strict=True):
                ts = answers.get((pair.original.id, scorer.method))
                if ts is None or pair.dropped is not None:
                    continue
                words, sequence = partitions[pair.original.id]
                tokens = token_partition(words, ts.spans(sequence))
                saliency = ts.saliency if scorer.summary is None else ts.summaries[scorer.summary]
                tested.append((row, {
                    "id": pair.original.id, "og_em": row["og_em"], "cf_em": row["cf_em"],
                    "saliency": saliency, "positive": tokens.positive,
                    "negative": tokens.negative,
                }))  # fmt: skip
            decided = (
                instance_alignment_rows(pd.DataFrame([t for _, t in tested]), seed=self.seed)
                if tested
                else pd.DataFrame()
            )
            for (row, _), result in zip(tested, decided.to_dict("records"), strict=True):
                for column in ALIGNMENT_COLUMNS:
                    row[f"{scorer.name}_{column}"] = result[column]
                row[f"{scorer.name}_n_positive"] = len(result["positive"])
                row[f"{scorer.name}_n_negative"] = len(result["negative"])
            for row in rows:
                for column in (*ALIGNMENT_COLUMNS, "n_positive", "n_negative"):
                    row.setdefault(f"{scorer.name}_{column}", None)
        return rows

    def behaviour(self, pair: Pair, row: dict) -> Behaviour | None:
        """The answers on the original and the counterfactual, and the counterfactual's gold:
        the answer itself where it was exactly right (exact match normalises and takes any
        of the gold answers), else its first gold answer."""
        if pair.dropped:
            return None
        prediction, answers = row["cf_prediction"], row["cf_answers"]
        gold = prediction if row["cf_em"] == 1 else (answers[0] if answers else None)
        return Behaviour(row["og_prediction"], prediction, gold)

    def metrics(self, results: pd.DataFrame, seed: int) -> dict:
        return {
            "selection": [
                {"dataset": d, "reason": r, "count": c}
                for d, reasons in sorted(self.selection.items())
                for r, c in sorted(reasons.items())
            ],
            **rr.right_reasons_metrics(results, [c.name for c in self.options.scorers], seed),
            "answer_modes": answer_modes(results),
        }


def same_answer(og: str | None, cf: str | None) -> bool:
    """Whether the original and the counterfactual got the same answer (SQuAD
    normalisation; two empty answers are the same)."""
    return normalize_answer(og or "") == normalize_answer(cf or "")


def _skip_saliency_where_all_dropped(pairs: list[Pair]) -> list[Pair]:
    """Mark the originals whose every counterfactual was dropped (``NO_SALIENCY``): alignment
    needs the counterfactual's answer, so their saliency would decide nothing and is not
    asked (for Quoref about half the originals, each a full window of IG steps)."""
    answered = {p.original.id for p in pairs if not p.dropped}
    out = []
    for p in pairs:
        if p.original.id not in answered:
            marked = {**p.original.features, NO_SALIENCY: True}
            p = replace(p, original=replace(p.original, features=marked))
        out.append(p)
    return out


def _word_partitions(originals: Sequence[QAExample]) -> dict[str, tuple]:
    """Per original id: its word partition and the sequence it lies in (0: the question of
    a comparison, 1: the context of a coreference question), tagged in one spaCy pass."""
    unique = {o.id: o for o in originals}
    out = {}
    coref = [o for o in unique.values() if "cluster" in o.features]
    for o in unique.values():
        if "cluster" not in o.features:
            out[o.id] = (comparison_partition_of(o), 0)
    if coref:
        contexts = tag_words([o.context for o in coref])
        questions = tag_words([o.question for o in coref])
        for o, c, q in zip(coref, contexts, questions, strict=True):
            cluster = [tuple(s) for s in o.features["cluster"]]
            out[o.id] = (coreference_partition(c, cluster, q), 1)
    return out
