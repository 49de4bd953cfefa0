"""Negation pairs and the predicate–argument probe of the ``faithfulness`` suite
(Chaturvedi et al., their Tables 10 and 12): pair building and the two metric blocks.

**Negation** (options ``edits`` and ``negate``). With ``edits=PATH`` (a JSON-lines edit
file, :func:`faithprobe.interventions.negation.read_edits`, validated against the data),
every item with an edit gets a ``NEG`` pair: the original example -> the edited one,
expectation ``ANSWER_FLIPS``, gold = the edit's new answer. With ``negate=rule`` the
rule-based negator (:func:`~faithprobe.interventions.negation.rule_negate`) is applied to
the yes/no items without an edit; where no rule applies safely the item has no ``NEG``
pair. Rows carry ``negation`` = ``"edit-file"`` or ``"rule-based"``. ``on="ts"`` (option
``negate_on``) edits the truncated story (TS) instead of the whole one, as the method edits
CoQA's rationale in TS (HotpotQA, which has no TS, keeps OS, as the method does); an edit
past the cut cannot be applied there and the ``NEG`` pair is kept dropped with the reason.
Rows carry ``negated_from`` (``OS`` or ``TS``). The metric block ``negation`` is
:func:`faithprobe.metrics.qa_scores.negation_accuracy` (Org-Acc on the row of the story
that was edited, OS or TS, Mod-Acc on the ``NEG`` row, Comb-Acc both) per subject, over
all negated items (``negation`` = ``"all"``) and, when both kinds occur, per kind.

**Predicate–argument probe** (option ``probe=predicate-argument``, used *instead of*
``--data``: the command line's ``--data`` must name an existing file). The examples are
:func:`faithprobe.generators.predicate_argument.generate` (seeded by the run's seed): an
*item* is one question of one story (520); its original is the ``original``-form question
on the ``original`` story (the identity pair ``pa:original/original``), paired with the
same question in each other form and story variant (``pa:{variant}/{form}``): 3 forms x
(3 x 520 + 390) = 5,850 pairs. ``--limit N`` keeps the questions of whole stories (N
rounded up to a multiple of 4: :func:`sample_stories`). Expectation: ``ANSWER_FLIPS`` for
the contrast question of a negated story (``features["flipped"]``), ``ANSWER_UNCHANGED``
otherwise; gold is always the asked example's own. Language models answer by comparing the
log-likelihoods of " yes" and " no" after the suite's prompt. The metric block
``predicate_argument`` is :func:`faithprobe.metrics.qa_scores.predicate_argument_accuracy`
(accuracy and share of "no" per story variant x form, then the formatting ``flip_rate``
rows of :func:`~faithprobe.metrics.qa_scores.formatting_flip_rate`), bootstrap over stories; the
card's competence and effects are :func:`faithprobe.suites.faithfulness.controls.
probe_controls`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pandas as pd

from faithprobe.errors import UsageError, excerpt
from faithprobe.expectations import ANSWER_FLIPS, ANSWER_UNCHANGED
from faithprobe.generators import predicate_argument as pa
from faithprobe.interventions import Pair
from faithprobe.interventions.deletion_variants import DELETIONS, deletion_pair
from faithprobe.interventions.negation import apply_edit, read_edits, rule_negate
from faithprobe.metrics import qa_scores as m
from faithprobe.qa.questions import is_hotpot
from faithprobe.records import Outcome, QAExample
from faithprobe.seeding import hash_rank
from faithprobe.sentences import DEFAULT_SPLITTER
from faithprobe.suites.faithfulness.options import NEGATE_MODES, NEGATE_ON

NEG = "NEG"
NOT_IN_TS = "the edited text is not in the truncated story (TS)"


NEGATION_KINDS = {"negation_edit": "edit-file", "rule_negate": "rule-based"}


def _neg_pair(original: QAExample, edited: QAExample, base: str, name: str) -> Pair:
    features = {"negation": NEGATION_KINDS[name], **edited.features, "variant": NEG,
                "negated_from": base}  # fmt: skip
    edited = replace(edited, features=features)
    return Pair(original, edited, name, ANSWER_FLIPS, pair_id=f"{NEG}:{original.id}")


def _edited_story(example: QAExample, on: str, splitter: str) -> tuple[str, QAExample | None]:
    """(the variant the negation edits, that story): OS, or TS for ``on="ts"`` (HotpotQA:
    OS always); None where TS cannot be made."""
    if on == "os" or is_hotpot(example):
        return "OS", example
    ts = deletion_pair(example, "TS", DELETIONS["TS"], splitter=splitter).intervened
    return "TS", None if ts.features.get("dropped") else ts


def negation_pairs(
    examples: Sequence[QAExample],
    edits: str | Path | None,
    negate: str = "",
    *,
    every: Sequence[QAExample] | None = None,
    on: str = "os",
    splitter: str = DEFAULT_SPLITTER,
) -> list[Pair]:
    """The ``NEG`` pairs of ``examples`` (see the module docstring), edits applied to the
    story ``on`` names; the edit file is checked against ``every`` example of the data
    (default: ``examples``), so that edits of examples left out (the documents a model was
    trained on) are not taken for errors."""
    if negate not in NEGATE_MODES:
        raise UsageError(f"negate must be 'rule' or empty, got {excerpt(negate)}")
    if on not in NEGATE_ON:
        raise UsageError(f"negate_on must be 'os' or 'ts', got {excerpt(on)}")
    edit_set = read_edits(edits, examples if every is None else every) if edits else {}
    out = []
    for ex in examples:
        if ex.id not in edit_set and negate != "rule":
            continue
        base, story = _edited_story(ex, on, splitter)
        if ex.id in edit_set:
            name, edit = "negation_edit", edit_set[ex.id]
            if story is None or story.context.count(edit.original) != 1:
                kept = Outcome.dropped(NOT_IN_TS)
            else:
                kept = Outcome.kept(apply_edit(story, edit))
        else:
            name = "rule_negate"
            kept = rule_negate(story, None) if story is not None else Outcome.dropped(NOT_IN_TS)
        if kept.reason is not None and name == "rule_negate":
            continue  # no rule applies safely: the item has no NEG pair, as before
        made = kept.example_or_dropped(ex, NEG)
        out += [_neg_pair(ex, x, base, name) for x in ([made] if kept.reason else kept.examples)]
    return out


def predicate_argument_pairs(seed: int) -> list[Pair]:
    """One pair per generated example, from the item's original-form question on the
    original story (see the module docstring)."""
    examples = pa.generate(seed=seed)
    originals = {
        ex.features["item_id"]: ex
        for ex in examples
        if ex.features["variant"] == "original" and ex.features["form"] == "original"
    }
    out = []
    for ex in examples:
        f = ex.features
        expectation = ANSWER_FLIPS if f["flipped"] else ANSWER_UNCHANGED
        name = f"pa:{f['variant']}/{f['form']}"
        out.append(Pair(originals[f["item_id"]], ex, name, expectation, pair_id=ex.id))
    return out


def sample_stories(pairs: list[Pair], limit: int | None, seed: int) -> list[Pair]:
    """The pairs of whole stories (in a seeded hash order of their ids) holding ``limit``
    questions, rounded up to a whole story (4 each). Whole stories keep the probe's design
    in every sample: half the golds "no" on the original stories, two thirds on the negated
    ones, so the best constant answer gets exactly 0.5 and 0.67 there and a reader's gain
    over it is the same in every story (sampling single questions left it to chance: 24
    questions could hold one yes-gold negated question, and no reader could be told from
    always answering "no")."""
    if limit is None:
        return pairs
    stories = sorted({_story(p) for p in pairs}, key=lambda s: hash_rank(seed, s))
    keep = set(stories[: -(-limit // pa.QUESTIONS_PER_STORY)])
    return [p for p in pairs if _story(p) in keep]


def _story(pair: Pair) -> str:
    return pair.original.features["story_id"]


def probe_columns(pair: Pair) -> dict:
    """Row fields of the negation and predicate–argument pairs (None elsewhere)."""
    f = pair.intervened.features
    return {
        "negation": f.get("negation"),
        "negated_from": f.get("negated_from"),
        "rule": f.get("rule"),
        "form": f.get("form"),
        "story_id": f.get("story_id") if "form" in f else None,
        "schema": f.get("schema"),
        "flipped": f.get("flipped"),
    }


def negated_from(neg_rows: pd.DataFrame) -> str:
    """The story the ``NEG`` rows' edits were applied to (``OS`` or ``TS``): the variant
    their Org-Acc is read on. A run mixing HotpotQA (always OS) with ``negate_on=ts`` is
    read on TS where it has it."""
    bases = set(neg_rows["negated_from"].dropna()) if "negated_from" in neg_rows else set()
    return "TS" if "TS" in bases else "OS"


def negation_metrics(results: pd.DataFrame) -> list[dict]:
    """Org/Mod/Comb-Acc per subject over the items with a ``NEG`` row: all of them, and
    per kind of negation when there are two."""
    if results.empty or NEG not in set(results["variant"]):
        return []
    answered = results[results["dropped_reason"].isna()]
    neg = answered[answered["variant"] == NEG]
    kinds = sorted(neg["negation"].dropna().unique())
    groups = [("all", neg)]
    if len(kinds) > 1:
        groups += [(k, neg[neg["negation"] == k]) for k in kinds]
    out = []
    for kind, rows in groups:
        base = negated_from(rows)
        org = answered[
            (answered["variant"] == base) & answered["original_id"].isin(rows["original_id"])
        ]
        table = m.negation_accuracy(pd.concat([org, rows]), original=base, modified=NEG)
        table.insert(1, "negation", kind)
        out += table.to_dict("records")
    return out


def predicate_argument_metrics(results: pd.DataFrame, seed: int) -> list[dict]:
    if results.empty or results["form"].isna().all():
        return []
    rows = results[results["form"].notna()]
    return m.predicate_argument_accuracy(rows, cluster="story_id", seed=seed).to_dict("records")
