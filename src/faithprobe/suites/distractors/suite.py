"""The ``distractors`` suite: robustness of information processing to attractors.

Method: Pandia & Ettinger (2021), "Sorting through the noise: Testing robustness of
information processing in pre-trained language models". A model reads a short story with
one critical fact and fills a cloze whose answer follows from that fact; attractors of the
background word's class (B), the target's class (T) or unrelated ones are added. A model
that uses the critical fact keeps choosing the target; accuracy is judged within the
target's candidate set, and only items the model gets right without attractors count.

Pairs: every variant is paired with its base item (intervention ``none`` pairs a base item
with itself; those rows measure baseline competence), and every base item with its
critical-fact swap (:mod:`.interventions`: the fact names another word of its class, so the
target moves; a base item whose story cannot be swapped keeps a pair marked with the reason).

Options: ``fillers=0`` keeps the items of filler level 0 (or the levels named), of the data
or of the generator; ``filler=K`` adds to the generated items a no-attractor copy of each
base item padded with K neutral sentences after the critical fact, which becomes the n = 0
point of the curves (the method's control for length and distance); ``competent=shared``
counts only the items every model of the run gets right without attractors, so all models'
curves are estimated on one item set, as in the method.

Sampling (``--limit``): the cells the card's verdict reads (one related or unrelated
attractor after the critical fact) first, paired by base item, then every design cell
evenly (:mod:`faithprobe.suites.distractors.sampling`). A base item's row and its swap go
with it and are not counted in the limit, which counts attractor variants.

Asking: a model that scores candidates (a causal LM: each candidate's log-likelihood after
the context; a masked LM: in the blank) is asked the candidate set; one that can only write
(a chat-only endpoint; any model with ``answer=letter``) is shown the story with a blank and
the candidates as lettered options (:data:`LETTER_TEMPLATE`, :mod:`faithprobe.asking.
letters`). Its prediction is the candidate its reply names; a reply naming none is no
answer, counted as wrong (``abstained``; a base item without an answer is not competent).
With the letters' ``top_logprobs`` the target's renormalised letter probability stands in
for its probability in the relative probability (the ratio of how sure the model is of the
target's letter after and before the attractors; rows where the target's letter is outside
the endpoint's top k on either input are left out of it); from parsed replies alone the
relative probability needs probabilities and is not computed.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from faithprobe.asking.letters import LetterAsker, answer_mode, reply_columns
from faithprobe.datasets import read_cloze_jsonl
from faithprobe.datasets.distractor_tsv import is_release_path, read_released
from faithprobe.errors import DataError, UsageError, excerpt
from faithprobe.expectations import ANSWER_UNCHANGED, Behaviour
from faithprobe.generators.distractors import (
    FILLER_LEVELS,
    INTERVENTION_FOR_TYPE,
    DistractorConfig,
    build,
    generate,
    plan,
)
from faithprobe.interventions import Pair
from faithprobe.interventions import get as get_intervention
from faithprobe.metrics.answer_modes import answer_modes
from faithprobe.multiple_choice_prompts import LetterPrompt
from faithprobe.records import ClozeExample
from faithprobe.requests import CandidateScoreRequest, CandidateScores
from faithprobe.suite_protocol import Suite
from faithprobe.suites.distractors import metrics as m
from faithprobe.suites.distractors.interventions import FACT_SWAP
from faithprobe.suites.distractors.options import FIRST_TOKEN
from faithprobe.suites.distractors.sampling import (
    pair_design,
    planned_design,
    sample_headline_first,
)
from faithprobe.suites.distractors.schema import DISTRACTORS_SCHEMA

NONE = "none"
RIDERS = (NONE, FACT_SWAP)  # the pairs a base item brings along, outside the limit
LETTER_TEMPLATE = (
    "Fill in the blank: {prompt}\n{choices}\n"
    "Answer with the letter of the word that fills the blank ({letters}) only."
)
BLANK = "___"


def _intervention_name(features: dict) -> str:
    n, setting = features["n_attractors"], features["setting"]
    if n == 0:
        if features.get("padding"):
            return f"padding[n={len(features['padding'])}]"
        return f"filler[n={len(features.get('filler', []))}]" if features.get("filler") else NONE
    name = INTERVENTION_FOR_TYPE.get(features["attractor_type"], "attractors.custom")
    return f"{name}[n={n},position={features['position']},setting={setting}]"


def _check_item(path: Path, item: ClozeExample) -> None:
    """The item against the suite's declared schema (:mod:`.schema`), so a bad file fails
    before any model is loaded, in one line naming the item, the field and its allowed
    values."""
    record = {
        "id": item.id,
        "context": item.context,
        "target": item.target,
        "candidates": list(item.candidates),
        "suffix": item.suffix,
        "features": item.features,
    }
    DISTRACTORS_SCHEMA.check(path, item.id, record)


def _check_filler_levels(path: Path, items: list[ClozeExample]) -> None:
    """A filler item without attractors is the n = 0 point of its filler level's curves:
    with no item of that level holding attractors there is no curve, and it would fall out
    of every view."""
    with_attractors = {
        len(i.features.get("filler") or ()) for i in items if i.features["n_attractors"] > 0
    }
    for item in items:
        level = len(item.features.get("filler") or ())
        if level and item.features["n_attractors"] == 0 and level not in with_attractors:
            raise DataError(
                path,
                f"a filler item of level {level} (no attractors) but no item of that level has "
                "attractors, so no view would count it",
                record=item.id,
                field="features.filler",
            )


def _fact_swaps(bases: list[ClozeExample], seed: int) -> list[Pair]:
    """Each base item with its critical-fact swap (never the text of another base item or
    of another swap, so each swap is asked once, as what it was made from), or with itself
    marked with the reason it has none (nothing new is asked then). Swaps are made in id
    order, each avoiding the texts of those made before it."""
    swap = get_intervention(FACT_SWAP)
    # a swap keeps its entity, so only items about the same entity can share its text
    about: dict[object, list[ClozeExample]] = defaultdict(list)
    for base in bases:
        about[base.features.get("entity")].append(base)
    made: dict[str, Pair] = {}
    for base in sorted(bases, key=lambda b: b.id):
        told = about[base.features.get("entity")]
        outcome = swap.apply(base, seed=seed, pool=told)
        swapped = outcome.example_or_dropped(base, FACT_SWAP)
        if outcome.reason is None:
            told.append(swapped)
        pair_id = f"{base.id}|{FACT_SWAP}"
        made[base.id] = Pair(base, swapped, FACT_SWAP, swap.expectation, pair_id=pair_id)
    return [made[base.id] for base in bases]


def _pair_up(items: list[ClozeExample], data: Path | None, seed: int) -> list[Pair]:
    """Each base item with itself (intervention ``none``), each variant with its base, then
    each base item with its critical-fact swap."""
    by_id = {i.id: i for i in items}
    out = []
    bases = []
    for item in items:
        base_id = item.features.get("base_id")
        if base_id is None:
            out.append(Pair(item, item, NONE, ANSWER_UNCHANGED))
            bases.append(item)
            continue
        if base_id not in by_id:
            raise DataError(
                data or "generated data",
                f"no item has id {excerpt(base_id)}",
                record=item.id,
                field="features.base_id",
            )
        if by_id[base_id].features.get("base_id") is not None:
            raise DataError(
                data or "generated data",
                f"{excerpt(base_id)} is a variant, not a base item (a variant names its base "
                "item, whose features.base_id is null)",
                record=item.id,
                field="features.base_id",
            )
        out.append(Pair(by_id[base_id], item, _intervention_name(item.features), ANSWER_UNCHANGED))
    return out + _fact_swaps(bases, seed)


class DistractorsSuite(Suite):
    name = "distractors"
    items_noun = "attractor variants (items whose features.base_id names a base item)"

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.letters = LetterAsker(LetterPrompt(LETTER_TEMPLATE), self.options.answer)
        self.release: dict = {}  # what reading the method's released files found

    @property
    def config(self) -> DistractorConfig:
        """The generated items: the generator's defaults, the filler levels ``-o fillers``
        names (0 by default), padded n = 0 items if asked for."""
        levels = self.options.fillers or (0,)
        if not set(levels) <= set(FILLER_LEVELS):
            raise UsageError(f"-o fillers={','.join(map(str, levels))}: the generator makes "
                             f"filler levels {', '.join(map(str, FILLER_LEVELS))} (--data keeps "
                             "the levels its items have)")  # fmt: skip
        return DistractorConfig(filler_sentences=self.options.filler, fillers=levels)

    def pairs(self, data: Path | None, seed: int) -> list[Pair]:
        if data is None:
            return _pair_up(generate(self.config, seed), data, seed)
        if self.options.filler:
            raise UsageError(
                f"-o filler={self.options.filler} pads the generated items only; with --data, "
                "give the padded no-attractor items in the file (features.padding; `faithprobe "
                "data schema distractors`)"
            )
        if is_release_path(data):
            read = read_released(data)
            items, self.release = read.items, read.record
        else:
            items = read_cloze_jsonl(data)
        for item in items:
            _check_item(data, item)
        items = self._kept_levels(items)
        _check_filler_levels(data, items)
        return _pair_up(items, data, seed)

    def _kept_levels(self, items: list[ClozeExample]) -> list[ClozeExample]:
        """The items of the filler levels ``-o fillers`` names (base items always), after
        checking the data has them."""
        levels = self.options.fillers
        if levels is None:
            return items
        has = sorted({len(i.features.get("filler") or ()) for i in items})
        if missing := sorted(set(levels) - set(has)):
            raise UsageError(f"-o fillers: the data has no item of filler level "
                             f"{', '.join(map(str, missing))}; its levels: "
                             f"{', '.join(map(str, has))}")  # fmt: skip
        return [i for i in items if i.features.get("base_id") is None
                or len(i.features.get("filler") or ()) in levels]  # fmt: skip

    def data_record(self) -> dict:
        return {"release": self.release} if self.release else {}

    def restore_data_record(self, record: dict) -> None:
        self.release = record.get("release", {})

    def pairs_note(self, pairs: Sequence[Pair]) -> str:
        """The pairs ``--limit`` counts, and the base rows and fact swaps that come with them."""
        riders = Counter(p.intervention for p in pairs if p.intervention in RIDERS)
        counted = len(pairs) - sum(riders.values())
        return (f"{counted} pairs, with {riders[NONE]} base rows and {riders[FACT_SWAP]} "
                "critical-fact swaps of their base items (not counted by --limit)")  # fmt: skip

    def sampled_pairs(self, data: Path | None, limit: int | None, seed: int) -> list[Pair]:
        """Generated data is sampled from the generator's plan, and only the sampled
        variants are built: the same pairs as sampling every built one, at a fraction of
        the cost (14,384 variants by default)."""
        if data is not None or limit is None:
            return super().sampled_pairs(data, limit, seed)
        bases, planned = plan(self.config, seed)
        chosen = sample_headline_first(
            planned,
            limit,
            seed,
            key=lambda v: v.id,
            design=planned_design,
            stratum=lambda v: v.cell,
        )
        return self.sample(_pair_up(bases + build(chosen, seed), data, seed), limit, seed)

    def stratum(self, pair: Pair) -> Hashable:
        f = pair.intervened.features
        return (
            f.get("setting"),
            f.get("attractor_type"),
            f.get("n_attractors"),
            len(f.get("filler", [])),
        )

    def sample(self, pairs: list[Pair], limit: int | None, seed: int) -> list[Pair]:
        """Draw ``limit`` variant pairs, the headline cells first (:mod:`.sampling`); keep
        the base rows and critical-fact swaps of every base they use."""
        variants = [p for p in pairs if p.intervention not in RIDERS]
        picked = sample_headline_first(
            variants, limit, seed, key=lambda p: p.id, design=pair_design, stratum=self.stratum
        )
        used = {p.original.id for p in picked}
        bases = [p for p in pairs if p.intervention == NONE and p.original.id in used]
        swaps = [p for p in pairs if p.intervention == FACT_SWAP and p.original.id in used]
        return bases + picked + swaps

    def request(self, example: ClozeExample, subject=None):
        """The candidate set to score; by letter (the story with a blank) for a model that
        cannot score, or with ``answer=letter``."""
        scoring = CandidateScoreRequest(
            example.context,
            example.candidates,
            example.suffix,
            first_token=self.options.scoring == FIRST_TOKEN,
            start=self.options.start,
        )
        if self.letters.by_letter(subject, {CandidateScoreRequest.kind}):
            if not scoring.default_rule:
                raise UsageError(
                    "a model that cannot score candidates is asked by letter: the scoring "
                    f"rule (scoring={self.options.scoring}, start={self.options.start!r}) "
                    "has no meaning for it"
                )
            story = scoring.filled(BLANK)[0]
            return self.letters.request(story, example.candidates, subject, scoring)
        return scoring

    def _read(self, answer, example: ClozeExample) -> dict:
        """The predicted candidate (None: no answer), each candidate's log-probability
        (letters: its letter's, renormalised; NaN outside the endpoint's top k; None
        without probabilities) and the target's, and the reply."""
        target = example.candidates.index(example.target)
        if isinstance(answer, CandidateScores):
            scores = list(answer.logprobs)
            best = example.candidates[int(np.argmax(scores))]
            return {"prediction": best, "scores": scores, "target": scores[target],
                    "reply": None, "abstained": False}  # fmt: skip
        read = self.letters.read(answer, example.candidates)
        scores = read.logprobs()
        return {
            "prediction": None if read.abstained else example.candidates[read.choice],
            "scores": scores,
            "target": np.nan if scores is None else scores[target],
            "reply": read.reply,
            "abstained": read.abstained,
        }

    def rows(
        self, pairs: Sequence[Pair], subject, answers: dict[str, CandidateScores]
    ) -> list[dict]:
        mode = answer_mode(answers.values())
        out = []
        for pair in pairs:
            o, x = pair.original, pair.intervened
            ro, rx = self._read(answers[o.id], o), self._read(answers[x.id], x)
            cands = list(x.candidates)
            pred_o, pred_x = ro["prediction"], rx["prediction"]
            t_o, t_x = ro["target"], rx["target"]
            f = x.features
            no_attractors = pair.intervention in RIDERS  # a base row or a fact swap
            n_padding = len(f.get("padding", []))
            out.append(
                {
                    "pair_id": pair.id,
                    "item_set": f.get("item_set", "custom"),
                    "setting": NONE if no_attractors else f.get("setting", NONE),
                    "attractor_type": NONE if no_attractors else f.get("attractor_type", NONE),
                    "n_attractors": int(f.get("n_attractors", 0)),
                    "position": NONE if no_attractors or n_padding else f.get("position", NONE),
                    "n_filler": len(f.get("filler", [])),
                    "n_padding": n_padding,
                    "attractors": "; ".join(f.get("attractors", [])),
                    "background": f.get("background"),
                    "swapped_from": f.get("swapped_from"),
                    "linked_by": f.get("linked_by"),
                    "original_context": o.context,
                    "context": x.context,
                    "suffix": x.suffix,
                    "target": x.target,
                    "candidates": cands,
                    "original_prediction": pred_o,
                    "prediction": pred_x,
                    "original_target_logprob": t_o,
                    "target_logprob": t_x,
                    "original_scores": ro["scores"],
                    "scores": rx["scores"],
                    "competent": pred_o == o.target,
                    "correct": pred_x == x.target,
                    "log_relative_probability": t_x - t_o,
                    **reply_columns(mode, ro, rx),
                }
            )
        return out

    def behaviour(self, pair: Pair, row: dict) -> Behaviour | None:
        if pair.dropped:
            return None
        return Behaviour(row["original_prediction"], row["prediction"], row["target"])

    def metrics(self, results: pd.DataFrame, seed: int) -> dict:
        shared = self.options.competent == "shared"
        return {
            "estimates": m.estimates(results, seed, shared=shared),
            "competence": m.competence(results, seed),
            "base_accuracy": m.base_accuracy(results),
            "one_attractor_drops": m.one_attractor_drops(results, seed, shared=shared),
            "fact_swap_drops": m.fact_swap_drops(results, seed, shared=shared),
            "competent_set": m.competent_set(results, shared=shared),
            "views": m.views_used(results, shared=shared),
            "zero_point": m.zero_point(results),
            "tests": m.tests(results, seed, shared=shared),
            "answer_modes": answer_modes(results),
            "dataset": m.dataset_breakdown(results),
            **({"release": self.release} if self.release else {}),
        }
