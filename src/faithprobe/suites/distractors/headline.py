"""The distractors suite's headline for the faithfulness card.

Competence: cloze accuracy on the base items (no attractors) must beat the best constant
answer (always the same word, or always the same position in the candidate set).

Effects, per setting, on items with ONE attractor AFTER the critical fact (the method's
Figure 1 condition), each model on its competent items:

* the accuracy lost to a related (B- or T-type) attractor: the method's central finding is
  that a single semantically related distractor already pulls models off the target;
* its control, that loss minus the loss to an unrelated attractor on the same base items:
  a model pulled by whatever words are added, or by none, scores 0 here; a model that picks
  whichever candidate is nearest the blank (the attractor shortcut) is pulled by related
  attractors only, and lands outside.

And per model, on its competent base items, the accuracy lost when the critical fact is
swapped for another of its class (France -> Chile, so the target moves to Santiago): the
attractor effects hold the fact fixed, so a model that answers every item as its original,
from memory, loses nothing to attractors; it keeps the old target here and loses about all.

A model that ignores its input loses nothing to attractors (both effects 0), but it does
not beat the constant answer, so it is not assessable rather than faithful.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faithprobe.metrics.headline import EffectSpec, Headline

SUITE = "distractors"
# edge name -> (default bound, where the default comes from)
EDGES: dict[str, tuple[float, str]] = {
    "distractors.related_drop": (
        0.10,
        "a tolerance, not zero: one related attractor after the fact may cost at most 10 "
        "points of accuracy (about 4 of the 44 generated base items); a reader that keeps to "
        "the critical fact loses none, the nearest-candidate shortcut (ref:nearest) all, and "
        "the method reports its pre-trained LMs clearly confused by related attractors.",
    ),
    "distractors.related_minus_unrelated": (
        0.10,
        "the related drop's tolerance, over and above an unrelated attractor's drop (the "
        "method's control: it finds models particularly susceptible to semantic similarity); "
        "a reader scores 0 here, ref:nearest about 0.95.",
    ),
    "distractors.fact_swap_drop": (
        0.10,
        "the related drop's tolerance: a model that follows the critical fact moves to the "
        "swapped-in fact's target wherever it knows that target (its base accuracy on it), "
        "so it loses at most about 4 of 44 items to noise; a model answering from memory "
        "(ref:memoriser) or ignoring the story keeps the old target and loses about 1.",
    ),
}
_SETTINGS = {"single": "one entity", "multi": "several entities"}
READING = (
    "{no_interval}{comparison}; competent items, one attractor after the critical fact, "
    "{n_related} related and {n_unrelated} unrelated pairs; {method}"
)
SWAP_READING = (
    "{no_interval}{comparison}; competent base items, {n_swapped} swapped, {n_fact_unasked} "
    "left out (no base row states the swapped-in fact); {method}"
)


def _texts(row: Mapping[str, Any]) -> dict[str, str]:
    """The setting in words, and a note that there is no interval where the row has one."""
    return {
        "setting_label": _SETTINGS.get(row.get("setting"), row.get("setting")),
        "no_interval": f"{row['note']}: no interval. " if row.get("note") else "",
    }


def _drop(name: str, title: str, control: str) -> EffectSpec:
    """The effect ``name`` of ``one_attractor_drops``, per subject and setting."""
    return EffectSpec(
        "one_attractor_drops", f"{SUITE}.{name}", "at_most", key="{effect}_{setting}",
        title=f"{title} ({{setting_label}})", reading=READING, control=control,
        match={"effect": (name,)}, fields=_texts,
    )  # fmt: skip


# each subject's competence, then per subject and setting its related drop and the
# related-minus-unrelated control (read off ``competence`` and ``one_attractor_drops``),
# then its fact-swap drop (``fact_swap_drops``)
headline = Headline(
    SUITE,
    EDGES,
    (
        _drop(
            "related_drop",
            "accuracy lost to one related attractor after the fact",
            "0 for a model that ignores the input (it loses nothing to attractors; competence "
            "catches it)",
        ),
        _drop(
            "related_minus_unrelated",
            "accuracy lost to one related minus one unrelated attractor after the fact",
            "0 for a model that ignores the input, and for one pulled equally by any added "
            "words (the related drop catches that one); positive for the nearest-candidate "
            "shortcut",
        ),
        EffectSpec(
            "fact_swap_drops",
            f"{SUITE}.fact_swap_drop",
            "at_most",
            key="fact_swap_drop",
            title="accuracy lost when the critical fact is swapped",
            reading=SWAP_READING,
            control="about its base accuracy (1 on its competent items) for a model that "
            "ignores the input or answers from memory: it keeps the old target",
            fields=_texts,
        ),
    ),
)
