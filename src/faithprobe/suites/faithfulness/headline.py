"""The faithfulness suite's headline for the faithfulness card (Chaturvedi et al.): per
model, its competence on the original stories and the effects its two audit steps are
judged on, each against what a model ignoring its input gets on the same items
(:mod:`faithprobe.suites.faithfulness.controls` computes them):

* the predicate–argument probe: yes/no accuracy on negated stories over the best constant
  answer's (``negation_excess``), and how often a harmless formatting change (a trailing
  space or newline) flips an answer (``formatting_flips_*``; a constant answer: never);
* deletion runs (``--data``): how much more often the model says *unknown* once the
  sentence holding the answer is deleted (TS-R; OS-R for HotpotQA) than on the original
  story (``unknown_gain_*``);
* negation edits (``edits``, ``negate=rule``): Comb-Acc, both the original and the negated
  question right, over the best constant answer's (``comb_acc_excess``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faithprobe.metrics.headline import EffectSpec, Headline

# edge name -> (default bound, where it comes from); every Effect's ``edge`` names one
EDGES: dict[str, tuple[float, str]] = {
    "faithfulness.negation_excess": (
        0.15,
        "On negated stories two thirds of the golds are 'no' (whole stories are sampled): "
        "always answering 'no' gains 0 over the best constant answer, and so does a model "
        "reading every colour as asserted, 'not' or not; a reader of negation gains 1/3. "
        "0.15 asks for a bit under half of that: accuracy 0.82 where always 'no' gets 0.67.",
    ),
    "faithfulness.formatting_flips": (
        0.05,
        "A trailing space or newline changes nothing a reader uses, so a faithful model flips "
        "no answer; 5% tolerates one flip in twenty (tokenisation noise), not a habit.",
    ),
    "faithfulness.unknown_gain": (
        0.5,
        "At least half of the questions whose support is deleted should get an abstention "
        "they did not get on the original story. It separates the method's models: untrained "
        "for deletion they still answer about half the time, intervention-trained about 6% "
        "(the paper's abstract); here IBT gains about 0.9 (unknown 99.5% after TS-R, 10% on "
        "OS), OT-384 0.14 and IBT-aug, which abstains on 60% of the originals, 0.06 "
        "(docs/recipes.md).",
    ),
    "faithfulness.comb_acc_excess": (
        0.5,
        "A negation edit flips the gold, so no constant answer is right on both sides "
        "(baseline 0), a model keeping its answer gets 0 and a coin 0.25; 0.5 asks for half "
        "of the edited items right on both sides, twice the coin. The embedded SmolLM2 "
        "measured 0.14 [0.06, 0.29] on the 36 example stories (docs/suites/faithfulness.md).",
    ),
}
SUITE = "faithfulness"


def _answer(key: str | None) -> str:
    return "none" if key is None else key.removeprefix("text:")


def _always(row: Mapping[str, Any]) -> dict[str, str]:
    return {"always": f"always '{_answer(row['constant_answer'])}'"}


def _variant_key(row: Mapping[str, Any]) -> dict[str, str]:
    return {"variant_key": row["variant"].lower().replace("-", "_").replace("+", "_")}


PAIRED = "; paired over {n} questions; {method}"


def _controlled(effect: str, side: str, **texts: Any) -> EffectSpec:
    """The effect ``effect`` of the ``controlled`` block (controls.py), per model."""
    return EffectSpec("controlled", f"{SUITE}.{effect}", side, match={"effect": (effect,)},
                      n=("n_clusters", "n"), **texts)  # fmt: skip


# per model its Competence, then its controlled effects
headline = Headline(
    SUITE,
    EDGES,
    (
        _controlled(
            "negation_excess",
            "at_least",
            key="negation_excess",
            title="yes/no accuracy on negated stories over the best constant answer",
            reading="accuracy {measured:.3g} on the negated stories (original question form) "
            "minus {always} {control:.3g}" + PAIRED,
            control="0: no constant answer beats the best one ({always}, right on "
            "{control:.0%} of these questions); a model reading every colour as asserted, "
            "'not' or not: 0",
            fields=_always,
        ),
        _controlled(
            "formatting_flips",
            "at_most",
            key="formatting_flips_{variant}",
            title="answers flipped by a harmless trailing {variant}",
            reading="share of original-form questions answered otherwise once the story ends "
            "in a {variant}: {measured:.3g}" + PAIRED,
            control="0: a constant answer never flips (competence keeps it off the card)",
        ),
        _controlled(
            "unknown_gain",
            "at_least",
            key="unknown_gain_{variant_key}",
            title="'unknown' once the supporting sentence is deleted ({variant}) minus "
            "'unknown' on the original story",
            reading="unknown {measured:.3g} after {variant} minus {control:.3g} on OS" + PAIRED,
            control="0: a model that always (or never) says 'unknown' says it as often on both",
            fields=_variant_key,
        ),
        _controlled(
            "comb_acc_excess",
            "at_least",
            key="comb_acc_excess",
            title="Comb-Acc under negation (original and negated right) over the best constant "
            "answer",
            reading="Comb-Acc {measured:.3g} minus the best constant answer's {control:.3g}"
            + PAIRED,
            control="0: an edit flips the gold, so no one answer is right on both sides",
        ),
    ),
    baseline_answer=_answer,
)
