"""The ``confidence-shift`` suite: multiple-choice probes with no correct answer.

Method: Shen & Kejriwal (2023), "Quantifying confidence shifts in a BERT-based question
answering system evaluated on perturbed instances". Each instance of a multiple-choice
benchmark is probed so that none of its choices is right -- No-Question (empty prompt),
Wrong-Question (another instance's prompt), No-Right-Answer (the right choice swapped for
another instance's right choice) -- in several trials with different draws. A model that
uses the prompt becomes uncertain (confidences near 1/n); one that does not keeps picking
the old answer (the *pseudo-correct* choice) with its old confidence.

Prompts: each format is put to the model as its community scores it (option ``rule``,
default ``standard``): Social IQA and prompt/choices files as ``"Q: <prompt>\\nA:"``,
HellaSwag as lm-eval's cleaned query with the endings as its continuation (see
:mod:`faithprobe.datasets.multiple_choice` and :data:`faithprobe.multiple_choice_prompts.FRAMES`); ``rule=qa``
keeps the raw text in the Q/A frame for every format, and ``template`` sets one frame for all.

Scores: a causal LM scores each choice by its log-likelihood after the prompt (the prompt
is computed once per instance, see :mod:`faithprobe.subjects.hf.causal`); option
``normalisation`` decides how the summed log-probability becomes the choice's score
(:mod:`~faithprobe.suites.confidence_shift.normalisation`: ``sum``, lm-eval's ``acc``;
``per-token``; ``per-char``, lm-eval's ``acc_norm``; ``per-byte``). The prediction is the
top-scoring choice and the confidences are the softmax over the scores, both under the
chosen normalisation (the results table also keeps the raw sums and token counts, and
``accuracy_by_normalisation`` gives the original accuracy under every normalisation).

``probes=none`` runs the original instances only (one pair per instance whose "intervened"
input is the original itself, ``probe`` ``"original"``): accuracies without the probes.

A model that can only write (a chat-only endpoint; or any model with ``answer=letter``)
is shown the choices as ``A. …``, ``B. …`` and asked for a letter, as every
candidate-scoring suite asks it (:mod:`faithprobe.asking.letters`); a reply naming no
choice is an abstention, counted as wrong and reported (``abstentions``). Where the model
answers letter-choice requests with the letters' ``top_logprobs`` (answer mode
``letter-probabilities``), its confidences are the letters' probabilities at the reply's
first token, renormalised over the letters (a letter outside the endpoint's top k counts as
0; ``letter_mass`` keeps how much of that token's probability the letters hold), so the
shift types, confidence profile, confidence spread and MaxProb detector cover it too;
without them (``letter-replies``: a local model asked by letter, an endpoint giving no
alternatives; or a first token with no letter among them) its rows carry no confidences,
those statistics leave them out, and the card's confidence effects say they need
probabilities.

See :mod:`faithprobe.suites.confidence_shift.metrics` for the statistics, including how the
shift type of an instance is decided.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import softmax

from faithprobe.asking.letters import SCORES, LetterAsker, answer_mode, reply_columns
from faithprobe.datasets import read_choices
from faithprobe.errors import DataError, UsageError
from faithprobe.expectations import ANSWER_UNCHANGED, Behaviour
from faithprobe.interventions import Pair, get
from faithprobe.metrics.answer_modes import answer_modes
from faithprobe.metrics.headline import NEEDS
from faithprobe.multiple_choice_prompts import (
    FRAMES,
    QUESTION,
    ChoicePrompt,
    LetterPrompt,
    command_line_template,
)
from faithprobe.records import ChoiceExample
from faithprobe.requests import CandidateScoreRequest, CandidateScores
from faithprobe.seeding import hash_rank
from faithprobe.suite_protocol import Suite
from faithprobe.suites.confidence_shift import PROBE_TITLES, PROBES, ConfidenceShiftOptions
from faithprobe.suites.confidence_shift import metrics as m
from faithprobe.suites.confidence_shift.normalisation import choice_scores

ORIGINAL = m.ORIGINAL  # the probe of an original-only pair (probes=none)


def input_key(example: ChoiceExample) -> str:
    """Same text in, same key: marks trials that repeat an earlier trial's input."""
    payload = "\x1f".join([example.prompt, *example.choices])
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


# what an instance needs of the others to be given a probe that borrows from a donor
DONOR_NEEDS = {
    "wrong_question": "another instance with a different prompt",
    "wrong_question_disjoint": "another instance whose prompt shares no word with its own",
    "no_right_answer": "another instance whose right answer is not among its choices",
}


def _refuse_unprobed(
    data: Path,
    pool: Sequence[ChoiceExample],
    probes: Sequence[str],
    left_out: Mapping[str, Sequence[str]],
) -> None:
    """A probe no instance could be given (a file too small for it), or an instance no
    probe could be given (it would be in no view), is an error; an instance only some
    probes left out is counted (``left_out``) and reported."""
    missing = {p: set(left_out.get(p, ())) for p in probes}
    for probe in probes:
        if len(missing[probe]) == len(pool):
            raise DataError(
                data,
                f"no instance can be given the {PROBE_TITLES[probe]} probe: each needs "
                f"{DONOR_NEEDS[probe]} (the file holds {len(pool)} "
                f"instance{'' if len(pool) == 1 else 's'})",
            )
    for example in pool:
        if all(example.id in missing[p] for p in probes):
            needs = "; ".join(f"{PROBE_TITLES[p]}: {DONOR_NEEDS[p]}" for p in probes)
            raise DataError(
                data, f"no probe asked for can be given this instance ({needs})", record=example.id
            )


class ConfidenceShiftSuite(Suite):
    name = "confidence-shift"
    items_noun = "multiple-choice instances with a right answer"
    options: ConfidenceShiftOptions

    def __init__(self, options: ConfidenceShiftOptions | None = None) -> None:
        super().__init__(options)
        template = self.options.template
        fixed = None if template == "auto" else ChoicePrompt(command_line_template(template))
        self.frames = {f: fixed or ChoicePrompt(t) for f, t in FRAMES.items()}
        self.letters = LetterAsker(LetterPrompt(), self.options.answer)
        # probe -> the instances it could not be given (no other instance qualifies as donor)
        self.left_out: dict[str, list[str]] = {}

    def pairs(self, data: Path | None, seed: int) -> list[Pair]:
        if data is None:
            raise UsageError(
                "the confidence-shift suite needs --data: a Social IQA, HellaSwag or "
                "prompt/choices/label jsonl file"
            )
        pool = sorted(
            read_choices(data, self.options.format, self.options.rule), key=lambda e: e.id
        )
        if not self.options.probe_names:
            return [Pair(e, e, ORIGINAL, ANSWER_UNCHANGED, f"{e.id}/{ORIGINAL}") for e in pool]
        out: list[Pair] = []
        self.left_out = {}
        for probe in self.options.probe_names:
            name, params = PROBES[probe]
            intervention = get(name)
            for example in pool:
                for trial in range(self.options.trials):
                    made = intervention.apply(example, seed=seed, pool=pool, trial=trial, **params)
                    if made.reason is not None:  # no donor qualifies: so in every trial
                        self.left_out.setdefault(probe, []).append(example.id)
                        break
                    out += [
                        Pair(example, x, probe, intervention.expectation) for x in made.examples
                    ]
        _refuse_unprobed(data, pool, self.options.probe_names, self.left_out)
        return out

    def data_record(self) -> dict:
        return {"left_out": self.left_out}

    def drop_summary(self) -> str:
        return "; ".join(f"{p}: {len(ids)} without a donor" for p, ids in self.left_out.items())

    def restore_data_record(self, record: dict) -> None:
        self.left_out = record.get("left_out", {})

    def stratum(self, pair: Pair) -> Hashable:
        return pair.intervention

    def sample(self, pairs: list[Pair], limit: int | None, seed: int) -> list[Pair]:
        """``limit`` counts instances: each keeps all its probes and trials, which the
        per-instance averages and shift tests need."""
        instances = sorted({p.original.id for p in pairs})
        if limit is None or limit >= len(instances):
            return pairs
        keep = set(sorted(instances, key=lambda i: hash_rank(seed, i))[:limit])
        return [p for p in pairs if p.original.id in keep]

    def request(self, example: ChoiceExample, subject=None):
        frame = self.frames[example.features.get("frame", QUESTION)]
        scoring = CandidateScoreRequest(frame.render(example.prompt), example.choices)
        if self.letters.by_letter(subject, {CandidateScoreRequest.kind}):
            return self.letters.request(example.prompt, example.choices, subject, scoring)
        return scoring

    def _read(self, answer, example: ChoiceExample) -> dict:
        """Prediction and confidences of one answer (letters: the reply's choice, and
        confidences only from the letters' log-probabilities), and the choices sharing the
        top (:func:`~faithprobe.suites.confidence_shift.metrics.top_choices`; a reply's one
        choice, none for an abstention)."""
        if not isinstance(answer, CandidateScores):
            read = self.letters.read(answer, example.choices)
            conf = None if read.probabilities is None else list(read.probabilities)
            return {"reply": read.reply, "abstained": read.abstained,
                    "prediction": -1 if read.abstained else read.choice, "confidences": conf,
                    "top": [] if read.abstained else [read.choice],
                    "logprobs": None if conf is None else [
                        np.nan if v is None else v for v in answer.logprobs],
                    "n_tokens": None, "letter_mass": read.letter_mass,
                    "maxprob": float("nan") if conf is None else max(conf)}  # fmt: skip
        scores = choice_scores(
            answer.logprobs, answer.n_tokens, example.choices, self.options.normalisation
        )
        conf = softmax(scores)
        return {"reply": None, "abstained": False,
                "prediction": int(np.argmax(conf)), "confidences": conf.tolist(),
                "top": m.top_choices(conf),
                "logprobs": list(answer.logprobs), "n_tokens": list(answer.n_tokens),
                "letter_mass": float("nan"), "maxprob": float(conf.max())}  # fmt: skip

    def rows(
        self, pairs: Sequence[Pair], subject, answers: dict[str, CandidateScores]
    ) -> list[dict]:
        mode = answer_mode(answers.values())
        out = []
        for pair in pairs:
            o, x = pair.original, pair.intervened
            ro, rx = self._read(answers[o.id], o), self._read(answers[x.id], x)
            pred_o, pred_x = ro["prediction"], rx["prediction"]
            pseudo = int(x.features.get("pseudo_label", o.label))
            out.append(
                {
                    "pair_id": pair.id,
                    "probe": pair.intervention,
                    "trial": int(x.features.get("trial", 0)),
                    "donor_id": x.features.get("donor_id"),
                    "input_key": input_key(x),
                    "n_choices": len(o.choices),
                    "label": int(o.label),
                    "category": o.features.get("category"),
                    "pseudo_label": pseudo,
                    "original_prompt": o.prompt,
                    "prompt": x.prompt,
                    "original_choices": list(o.choices),
                    "choices": list(x.choices),
                    "normalisation": self.options.normalisation,
                    **reply_columns(mode, ro, rx),
                    "original_logprobs": ro["logprobs"],
                    "original_n_tokens": ro["n_tokens"],
                    "logprobs": rx["logprobs"],
                    "n_tokens": rx["n_tokens"],
                    "original_confidences": ro["confidences"],
                    "confidences": rx["confidences"],
                    "original_prediction": pred_o,
                    "prediction": pred_x,
                    "original_correct": pred_o == o.label,
                    "pseudo_correct": pred_x == pseudo,
                    "original_credit": m.credit(ro["top"], o.label),
                    "pseudo_credit": m.credit(rx["top"], pseudo),
                    "original_maxprob": ro["maxprob"],
                    "maxprob": rx["maxprob"],
                    "original_letter_mass": ro["letter_mass"],
                    "letter_mass": rx["letter_mass"],
                }
            )
        return out

    def behaviour(self, pair: Pair, row: Mapping[str, Any]) -> Behaviour:
        """The choices as indices (as text), the gold being the pseudo-correct choice: the
        expectation is met when the model does not keep it on top (an abstention, -1,
        meets it). An original-only pair's gold is the right answer (met when chosen)."""
        return Behaviour(
            str(row["original_prediction"]), str(row["prediction"]), str(row["pseudo_label"])
        )

    def metrics(self, results: pd.DataFrame, seed: int) -> dict:
        """Competence, accuracies and abstentions for every subject; the confidence
        statistics for the rows that carry confidences (choice scores; letters only with
        their log-probs); accuracy by normalisation for the subjects that gave choice
        scores."""
        scored = results
        if "answer_mode" in results and len(results):
            scored = results[results["answer_mode"] == SCORES]
        confident = m.with_confidences(results)
        kept, kept_features = m.kept_confidence(confident)
        return {
            "competence": m.competence_records(results, seed),
            "abstentions": m.abstentions(results),
            "original_accuracy": m.original_accuracy(results, seed),
            "accuracy_by_normalisation": m.accuracy_by_normalisation(scored),
            "pseudo_accuracy": m.pseudo_accuracy(results, seed),
            "shift_types": m.shift_counts(confident),
            "pooled_shifts": m.pooled_shifts(confident),
            "confidence_spread": m.confidence_spread(confident, seed),
            "confidence_profile": m.confidence_profile(confident),
            "probe_contrasts": m.probe_contrasts(confident),
            "maxprob_detection": m.maxprob_detection(confident, seed),
            "kept_confidence": kept,
            "kept_confidence_features": kept_features,
            **m.benchmark_irregularities(results, seed),
            NEEDS: m.needs_confidences(results),
            "answer_modes": answer_modes(results),
            "dataset": m.dataset_breakdown(results, self.left_out),
        }
