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

from faithprobe.metrics.verdict import Competence, Effect, competences

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


def _negation_excess(row: Mapping[str, Any]) -> tuple[str, str, str, str]:
    always = f"always '{_answer(row['constant_answer'])}'"
    return (
        "negation_excess",
        "yes/no accuracy on negated stories over the best constant answer",
        f"accuracy {row['measured']:.3g} on the negated stories (original question form) "
        f"minus {always} {row['control']:.3g}",
        f"0: no constant answer beats the best one ({always}, right on {row['control']:.0%} "
        "of these questions); a model reading every colour as asserted, 'not' or not: 0",
    )


def _formatting_flips(row: Mapping[str, Any]) -> tuple[str, str, str, str]:
    variant = row["variant"]
    return (
        f"formatting_flips_{variant}",
        f"answers flipped by a harmless trailing {variant}",
        f"share of original-form questions answered otherwise once the story ends in a "
        f"{variant}: {row['measured']:.3g}",
        "0: a constant answer never flips (competence keeps it off the card)",
    )


def _unknown_gain(row: Mapping[str, Any]) -> tuple[str, str, str, str]:
    variant = row["variant"]
    return (
        "unknown_gain_" + variant.lower().replace("-", "_").replace("+", "_"),
        f"'unknown' once the supporting sentence is deleted ({variant}) minus 'unknown' on "
        "the original story",
        f"unknown {row['measured']:.3g} after {variant} minus {row['control']:.3g} on OS",
        "0: a model that always (or never) says 'unknown' says it as often on both",
    )


def _comb_acc_excess(row: Mapping[str, Any]) -> tuple[str, str, str, str]:
    return (
        "comb_acc_excess",
        "Comb-Acc under negation (original and negated right) over the best constant answer",
        f"Comb-Acc {row['measured']:.3g} minus the best constant answer's {row['control']:.3g}",
        "0: an edit flips the gold, so no one answer is right on both sides",
    )


# effect of the ``controlled`` block -> which side of its edge is faithful, and what its
# Effect says (key, title, reading, control)
CONTROLLED = {
    "negation_excess": ("at_least", _negation_excess),
    "formatting_flips": ("at_most", _formatting_flips),
    "unknown_gain": ("at_least", _unknown_gain),
    "comb_acc_excess": ("at_least", _comb_acc_excess),
}


def _effect(row: Mapping[str, Any]) -> Effect:
    side, describe = CONTROLLED[row["effect"]]
    key, title, what, control = describe(row)
    edge = f"faithfulness.{row['effect']}"
    return Effect.from_estimate(
        row, side, edge, EDGES, n=row.get("n_clusters") or row["n"],
        suite=SUITE, key=key, title=title, subject=row["subject"],
        reading=f"{what}; paired over {row['n']} questions; {row['method']}",
        control=control,
    )  # fmt: skip


def headline(metrics: Mapping[str, Any]) -> list[Effect | Competence]:
    """Per model its Competence, then its controlled effects."""
    return [
        *competences(SUITE, metrics, baseline_answer=_answer),
        *(_effect(r) for r in metrics.get("controlled", [])),
    ]
