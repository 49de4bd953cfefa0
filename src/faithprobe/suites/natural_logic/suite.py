"""The ``natural-logic`` suite: total and direct causal effects of NLI features.

Method: Rozanova, Valentino & Freitas (2024), "Estimating the causal effects of natural
logic features in transformer-based NLI models". On the NLI-XY grid (see
:mod:`faithprobe.datasets.nli_xy`) the gold label is a function of two features: the
context's monotonicity and the inserted pair's relation. A seed set of N base examples
(option ``bases``, default 400, drawn in a seeded hash order) is paired with *every*
alternative meeting each of the four conditions of :mod:`faithprobe.interventions.
feature_swaps`. A pair's change of prediction (CP) is 1 when the two predictions differ;
the mean CP over a label-changing set is a total causal effect (TCE, sensitivity: higher
is better), over a label-preserving set a direct causal effect (DCE, robustness: lower is
better).

Challenge sets (two-class accuracy) ride along as pairs of the identity intervention
(``"none"``: original = intervened), so one run answers both. Option ``challenge``:
``auto`` (the known sets beside the NLI-XY folder, :data:`~faithprobe.datasets.nli_xy.
CHALLENGE_SETS`), ``none``, or comma-separated files. What each file gave (rows read and
used, the bases drawn and those with a pair, the challenge records skipped for the gold label
``-``) is kept as ``data_read`` in ``run.json`` and ``metrics.json``, the report's table "What
the data gave".

Subjects: a sequence-pair classifier (``hf-nli``) is asked a
:class:`~faithprobe.requests.TextPairRequest` and returns p(entailment) with neutral and
contradiction grouped; a language model is asked to score the two label words (option
``label_words``, entailment's first) after the prompt ``template``, and p(entailment) is
the softmax over the two words' log-likelihoods. The prediction is entailment iff
p(entailment) > 1/2. Option ``decision=argmax`` takes the method's rule instead (its released
code predicts by argmax over a classifier's three classes): a classifier's non-entailment
score is then its most probable non-entailment class (``TextPairRequest.grouping="max"``), so
entailment is predicted iff it is the top class. The two rules differ only where p(entailment)
lies between 1/3 and 1/2 and still tops both other classes; for two classes (and label words)
they are one.

A model that can do neither (a chat-only endpoint; any model with ``answer=letter``) is
asked by letter (:mod:`faithprobe.asking.letters`): the premise and the hypothesis, then the
label words as options (:data:`LETTER_TEMPLATE`; ``A. True``, ``B. False`` by default). Its
prediction is the label its reply names; a reply naming neither is no answer (counted as
wrong for accuracy and competence, and as a prediction of its own for the change of
prediction: a pair answered on one side only changed). With the letters' ``top_logprobs``,
p(entailment) is the entailment letter's probability renormalised over the two letters (how
sure the model is of that letter at its answer's first token); from parsed replies alone
p(entailment) needs probabilities and is left empty. Calibration needs label-word scores
and is not applied to letter answers.

Zero-shot language models often prefer one label word whatever the input. Option
``calibration=content-free`` applies contextual calibration (Zhao et al. 2021, "Calibrate
before use"): the log-odds of entailment on content-free inputs (premise and hypothesis
both ``N/A``, ``[MASK]`` or empty; their mean) are subtracted from every input's log-odds.
It uses no gold labels; classifiers are never calibrated. The raw p(entailment) is kept in
the results.

Option ``i1`` chooses how set I1 is built: ``all`` (default) swaps the word pair for one
of any other relation that flips the gold label; ``leq-geq`` swaps only between ``leq`` and
``geq``, the method's apparent definition, which reproduces its I1 size.

``--limit N`` keeps the first N bases of the seed set (a subset of the default run's) and
at most N examples of each challenge set.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from faithprobe.asking.letters import SCORES, LetterAsker, answer_mode, reply_columns
from faithprobe.datasets.nli import TwoClassSet, read_two_class
from faithprobe.datasets.nli_xy import NLIXYGrid, challenge_files, read_nli_xy
from faithprobe.errors import DataError, UsageError, excerpt
from faithprobe.expectations import ANSWER_UNCHANGED
from faithprobe.interventions import Pair, get
from faithprobe.metrics.answer_modes import answer_modes
from faithprobe.multiple_choice_prompts import LetterPrompt, command_line_template
from faithprobe.options import listed
from faithprobe.records import ENTAILMENT, NLI_LABELS, NON_ENTAILMENT, NLIExample
from faithprobe.requests import CandidateScoreRequest, CandidateScores, TextPairRequest
from faithprobe.seeding import hash_rank
from faithprobe.suite_protocol import Suite
from faithprobe.suites.natural_logic import metrics as m
from faithprobe.suites.natural_logic.options import DECISIONS, I1_SWAPS, split_label_words

CHALLENGE = "none"  # the identity intervention of challenge-set pairs
CALIBRATION = "calibration"  # pairs that only carry content-free inputs (no result rows)
CONTENT_FREE = ("N/A", "[MASK]", "")
LETTER_TEMPLATE = (
    "{prompt}\nIs the hypothesis true, given the premise?\n{choices}\n"
    "Answer with the letter of the correct choice ({letters}) only."
)
SCORING = frozenset({CandidateScoreRequest.kind, TextPairRequest.kind})


class NLIPrompt:
    """How a language model is asked: ``template`` with ``{premise}`` and ``{hypothesis}``,
    answered by one of two label words (entailment's first)."""

    def __init__(self, template: str, label_words: str) -> None:
        for slot in ("{premise}", "{hypothesis}"):
            if slot not in template:
                raise UsageError(f"template {excerpt(template)} has no {slot} slot")
        words = split_label_words(label_words)
        if len(words) != 2 or not all(words) or words[0] == words[1]:
            raise UsageError(
                f"label_words must be two different words, entailment's first: {excerpt(label_words)}"
            )
        self.template = command_line_template(template)
        self.words = words

    def render(self, premise: str, hypothesis: str) -> str:
        return self.template.replace("{premise}", premise).replace("{hypothesis}", hypothesis)


def log_odds(answer: CandidateScores) -> float:
    """log p(entailment) - log p(non-entailment) from the two scores (entailment's first)."""
    a, b = answer.logprobs
    return float(a - b)


def premise_and_hypothesis(example: NLIExample) -> str:
    """The question part of an NLI example's letter prompt."""
    return f"Premise: {example.premise}\nHypothesis: {example.hypothesis}"


def grid_counts(grid: NLIXYGrid, seed_set: list[NLIExample], paired: set[str]) -> list[dict]:
    """What the NLI-XY folder gave: its rows, the grid they form, and the seed set's bases
    with and without a pair in any set (a base without one is in no view)."""
    return [
        {"data": "contexts.tsv", "read": len(grid.contexts), "used": len(grid.contexts),
         "note": "contexts (every one takes an insertion pair)"},
        {"data": "insertions.tsv", "read": grid.insertion_rows, "used": len(grid.insertions),
         "note": "word pairs, each also reversed, duplicates dropped"},
        {"data": "grid", "read": len(grid.examples), "used": len(seed_set),
         "note": "examples (context x fitting pair); used: drawn as bases (option bases)"},
        {"data": "bases", "read": len(seed_set), "used": len(paired & {e.id for e in seed_set}),
         "note": "bases drawn; used: with a pair in at least one set (the others are in no "
         "view)"},
    ]  # fmt: skip


def challenge_counts(challenge: TwoClassSet) -> dict:
    """What a challenge-set file gave: its records, those with a gold class, the skipped."""
    used = len(challenge.examples)
    return {"data": challenge.file, "read": used + challenge.no_consensus, "used": used,
            "note": f"challenge set; skipped: {challenge.no_consensus} with gold label - (no "
            "annotator consensus)"}  # fmt: skip


def sigmoid(x: float) -> float:
    return float(1.0 / (1.0 + np.exp(-x)))


class NaturalLogicSuite(Suite):
    name = "natural-logic"
    items_noun = "NLI examples"

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.prompt = NLIPrompt(self.options.template, self.options.label_words)
        self.letters = LetterAsker(LetterPrompt(LETTER_TEMPLATE), self.options.answer)
        # set -> the registered intervention that builds it (option i1 picks I1's)
        self.swaps = {name: spec["intervention"] for name, spec in m.SETS.items()}
        self.swaps["I1"] = I1_SWAPS[self.options.i1]
        self.data_read: list[dict] = []  # what each file gave (:meth:`data_record`)

    # -- data ----------------------------------------------------------------------------

    def _challenge_files(self, folder: Path) -> list[Path]:
        challenge = self.options.challenge
        if challenge == "auto":
            return challenge_files(folder)
        if challenge == "none":
            return []
        files = [Path(p) for p in listed(challenge, "challenge")]
        for f in files:
            if not f.is_file():
                raise DataError(f, "challenge set not found (option challenge)")
        return files

    def seed_set(self, grid: NLIXYGrid, seed: int) -> list[NLIExample]:
        order = sorted(grid.examples, key=lambda e: hash_rank(seed, e.id))
        bases = self.options.bases
        return order[:bases] if bases else order

    def pairs(self, data: Path | None, seed: int) -> list[Pair]:
        if data is None:
            raise UsageError(
                "the natural-logic suite needs --data: an NLI-XY folder holding contexts.tsv "
                "and insertions.tsv (e.g. ../shared/data/nli-xy)"
            )
        data = Path(data)
        grid = read_nli_xy(data)
        seed_set = self.seed_set(grid, seed)
        out = []
        for set_name, swap in self.swaps.items():
            intervention = get(swap)
            for base in seed_set:
                for alt in intervention.apply(base, seed=seed, pool=grid).examples:
                    out.append(
                        Pair(
                            base,
                            alt,
                            set_name,
                            intervention.expectation,
                            pair_id=f"{set_name}:{base.id}>{alt.id}",
                        )
                    )
        self.data_read = grid_counts(grid, seed_set, {p.original.id for p in out})
        for path in self._challenge_files(data):
            challenge = read_two_class(path)
            self.data_read.append(challenge_counts(challenge))
            for ex in challenge.examples:
                out.append(
                    Pair(ex, ex, CHALLENGE, ANSWER_UNCHANGED, pair_id=f"{CHALLENGE}:{ex.id}")
                )
        if self.options.calibration == "content-free":
            for i, text in enumerate(CONTENT_FREE):
                ex = NLIExample(f"content-free-{i}", text, text, None)
                out.append(Pair(ex, ex, CALIBRATION, ANSWER_UNCHANGED, pair_id=ex.id))
        return out

    def data_record(self) -> dict:
        return {"data_read": self.data_read}

    def restore_data_record(self, record: dict) -> None:
        self.data_read = record.get("data_read", [])

    def stratum(self, pair: Pair) -> Hashable:
        return pair.intervention

    def sample(self, pairs: list[Pair], limit: int | None, seed: int) -> list[Pair]:
        """``limit`` bases (the first of the seed set's hash order, so a subset of a larger
        run's) with all their pairs, and at most ``limit`` examples per challenge set."""
        if limit is None:
            return pairs
        bases = {p.original.id for p in pairs if p.intervention in m.SETS}
        keep = set(sorted(bases, key=lambda i: hash_rank(seed, i))[:limit])
        keep |= {p.original.id for p in pairs if p.intervention == CALIBRATION}
        by_source: dict[str, list[str]] = {}
        for p in pairs:
            if p.intervention == CHALLENGE:
                by_source.setdefault(p.original.features["source"], []).append(p.original.id)
        for ids in by_source.values():
            keep.update(sorted(ids, key=lambda i: hash_rank(seed, i))[:limit])
        return [p for p in pairs if p.original.id in keep]

    # -- asking subjects -----------------------------------------------------------------

    @staticmethod
    def _classifies(subject) -> bool:
        return subject is not None and "text-pair-classes" in subject.accepts

    def request(self, example: NLIExample, subject=None):
        """A classifier is asked the pair's classes, a language model to score the label
        words; a model that can do neither (or any with ``answer=letter``) the label words
        by letter."""
        grouping = DECISIONS[self.options.decision]
        pair = TextPairRequest(example.premise, example.hypothesis, NLI_LABELS, grouping)
        words = CandidateScoreRequest(
            self.prompt.render(example.premise, example.hypothesis), self.prompt.words
        )
        scoring = pair if self._classifies(subject) else words
        if self.letters.by_letter(subject, SCORING):
            question = premise_and_hypothesis(example)
            return self.letters.request(question, self.prompt.words, subject, scoring)
        if subject is not None and scoring.kind not in subject.accepts:
            raise UsageError(
                f"{subject.name} answers neither NLI, label-word nor letter-choice requests"
            )
        return scoring

    def _read(self, answer) -> dict:
        """What one answer says: a scoring answer its log-odds of entailment; a letter
        answer its label (None: no answer), p(entailment) (NaN without probabilities) and
        the reply."""
        if isinstance(answer, CandidateScores):
            return {"log_odds": log_odds(answer), "reply": None, "abstained": False}
        read = self.letters.read(answer, self.prompt.words)
        return {
            "p": np.nan if read.probabilities is None else read.probabilities[0],
            "label": None if read.abstained else NLI_LABELS[read.choice],
            "reply": read.reply,
            "abstained": read.abstained,
        }

    @staticmethod
    def _judged(read: dict, offset: float) -> tuple[float, float, str | None]:
        """(raw p(entailment), p(entailment) after calibration, the predicted label): a
        scoring answer is entailment iff its calibrated p exceeds 1/2; a letter answer is
        the label its reply names, never calibrated."""
        if "log_odds" not in read:
            return read["p"], read["p"], read["label"]
        p = sigmoid(read["log_odds"] - offset)
        return sigmoid(read["log_odds"]), p, ENTAILMENT if p > 0.5 else NON_ENTAILMENT

    def rows(
        self, pairs: Sequence[Pair], subject, answers: dict[str, CandidateScores]
    ) -> list[dict]:
        """One row per pair but the calibration pairs. ``set`` is the pair's set (I0..I3, or
        ``none`` for a challenge example), which the runner also writes as ``intervention``;
        ``feature_swap`` is the registered intervention that built the set's pairs. The
        expectation is judged on the default :meth:`~faithprobe.suite_protocol.Suite.behaviour`
        (``original_prediction``, ``prediction``, ``gold``). A pair whose prediction is no
        answer on one side and a label on the other changed (``cp`` 1)."""
        reads = {k: self._read(a) for k, a in answers.items()}
        mode = answer_mode(answers.values())
        offset = 0.0
        calibrated = (
            self.options.calibration == "content-free"
            and not self._classifies(subject)
            and mode == SCORES
        )
        if calibrated:
            offset = float(np.mean([reads[p.original.id]["log_odds"] for p in pairs
                                    if p.intervention == CALIBRATION]))  # fmt: skip
        out = []
        for pair in pairs:
            if pair.intervention == CALIBRATION:
                continue
            o, x = pair.original, pair.intervened
            ro, rx = reads[o.id], reads[x.id]
            _, po, pred_o = self._judged(ro, offset)
            raw_x, px, pred_x = self._judged(rx, offset)
            spec = m.SETS.get(pair.intervention, {})
            out.append(
                {
                    "pair_id": pair.id,
                    "set": pair.intervention,
                    "feature_swap": self.swaps.get(pair.intervention, CHALLENGE),
                    "effect": spec.get("effect"),
                    "feature": spec.get("feature"),
                    "source": x.features.get("source"),
                    "original_premise": o.premise,
                    "original_hypothesis": o.hypothesis,
                    "premise": x.premise,
                    "hypothesis": x.hypothesis,
                    "original_monotonicity": o.features.get("monotonicity"),
                    "monotonicity": x.features.get("monotonicity"),
                    "original_relation": o.features.get("relation"),
                    "relation": x.features.get("relation"),
                    "original_gold": o.label,
                    "gold": x.label,
                    "original_p_entailment": po,
                    "p_entailment": px,
                    "raw_p_entailment": raw_x,
                    "calibration_offset": offset if calibrated else None,
                    "original_prediction": pred_o,
                    "prediction": pred_x,
                    "cp": int(pred_o != pred_x),
                    "original_correct": pred_o == o.label,
                    "correct": pred_x == x.label,
                    **reply_columns(mode, ro, rx),
                }
            )
        return out

    def metrics(self, results: pd.DataFrame, seed: int) -> dict:
        effects = m.causal_effects(results, seed)
        return {
            "data_read": self.data_read,
            "set_sizes": m.set_sizes(results),
            "competence": m.competence_records(results, seed),
            "effects": effects,
            "ranking": m.ranking(effects),
            "subject_differences": m.subject_differences(results, seed),
            "base_accuracy": m.base_accuracy(results),
            "challenge_accuracy": m.challenge_accuracy(results),
            "answer_modes": answer_modes(results),
        }
