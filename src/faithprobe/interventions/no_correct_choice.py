"""Probes that leave a multiple-choice instance with no correct choice (Shen & Kejriwal).

Each returns one :class:`ChoiceExample` with ``label=None`` and
``features["pseudo_label"]``: the index of the choice a model that ignores the change would
still pick. For No-Question and Wrong-Question that is the old right answer; for
No-Right-Answer it is the slot of the old right answer, which now holds a donor's right
answer (so the mean confidence "of the correct choice before, of the pseudo-correct choice
after" compares the same position).

Donors come from ``pool`` (other instances of the same benchmark). ``trial`` only names the
draw: trial 0..k-1 give k independent draws for the same seed. No-Question draws nothing,
so all its trials are the same input; the metrics count such repeats once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

from faithprobe.expectations import NO_CHOICE_CORRECT
from faithprobe.interventions import register
from faithprobe.records import ChoiceExample, Outcome

if TYPE_CHECKING:  # only annotations: `faithprobe list` imports this module, not numpy
    import numpy as np

_WORD = re.compile(r"\w+")
NO_DONOR = "no other instance of the pool qualifies as a donor"


@lru_cache(maxsize=65_536)
def words(text: str) -> frozenset[str]:
    """Lower-cased word tokens, for the "shares no word" option of Wrong-Question."""
    return frozenset(_WORD.findall(text.lower()))


def _probed(example: ChoiceExample, probe: str, trial: int, **changes) -> ChoiceExample:
    if example.label is None:
        raise ValueError(f"example {example.id}: a probe needs an instance with a right answer")
    features = {
        **example.features,
        "probe": probe,
        "trial": trial,
        "pseudo_label": example.label,
        "original_id": example.id,
    }
    suffix = f"[trial={trial}]"
    return replace(
        example, id=f"{example.id}/{probe}{suffix}", label=None, features=features, **changes
    )


def _draw(
    rng: np.random.Generator,
    pool: Sequence[ChoiceExample],
    ok: Callable[[ChoiceExample], bool],
    tries: int = 64,
) -> ChoiceExample | None:
    """A donor drawn uniformly from the members of ``pool`` that pass ``ok``.

    Rejection sampling (draw, retry if it fails) keeps the draw uniform over the qualifying
    donors and costs a few checks instead of a pass over the pool; after ``tries`` misses
    the qualifying donors are listed and one is drawn from them.
    """
    for _ in range(tries):
        donor = pool[int(rng.integers(len(pool)))]
        if ok(donor):
            return donor
    qualifying = [d for d in pool if ok(d)]
    return qualifying[int(rng.integers(len(qualifying)))] if qualifying else None


@register(
    "no_question",
    family="no-correct-choice",
    changes="the prompt (context and question) becomes empty",
    holds="the choices and their order",
    expectation=NO_CHOICE_CORRECT,
)
def no_question(example: ChoiceExample, rng, *, trial: int = 0, pool=None) -> Outcome:
    return Outcome.kept(_probed(example, "no_question", trial, prompt=""))


@register(
    "wrong_question",
    family="no-correct-choice",
    changes="the prompt becomes the prompt of another instance drawn at random "
    "(disjoint=True: only from prompts sharing no word with the original)",
    holds="the choices and their order",
    expectation=NO_CHOICE_CORRECT,
)
def wrong_question(
    example: ChoiceExample,
    rng,
    *,
    pool: Sequence[ChoiceExample],
    trial: int = 0,
    disjoint: bool = False,
) -> Outcome:
    own = words(example.prompt)

    def ok(d: ChoiceExample) -> bool:
        return (
            d.id != example.id
            and d.prompt != example.prompt
            and (not disjoint or not (own & words(d.prompt)))
        )

    donor = _draw(rng, pool, ok)
    if donor is None:  # no prompt qualifies (only possible with disjoint=True)
        return Outcome.dropped(NO_DONOR)
    probe = "wrong_question_disjoint" if disjoint else "wrong_question"
    out = _probed(example, probe, trial, prompt=donor.prompt)
    out.features["donor_id"] = donor.id
    return Outcome.kept(out)


@register(
    "no_right_answer",
    family="no-correct-choice",
    changes="the right choice is replaced by the right choice of another instance drawn at "
    "random (one that is not already among this instance's choices)",
    holds="the prompt, the wrong choices and the order of choices",
    expectation=NO_CHOICE_CORRECT,
)
def no_right_answer(
    example: ChoiceExample, rng, *, pool: Sequence[ChoiceExample], trial: int = 0
) -> Outcome:
    own = {c.strip().lower() for c in example.choices}

    def ok(d: ChoiceExample) -> bool:
        return (
            d.id != example.id
            and d.label is not None
            and d.choices[d.label].strip().lower() not in own
        )

    donor = _draw(rng, pool, ok)
    if donor is None:
        return Outcome.dropped(NO_DONOR)
    choices = list(example.choices)
    choices[example.label] = donor.choices[donor.label]
    out = _probed(example, "no_right_answer", trial, choices=tuple(choices))
    out.features["donor_id"] = donor.id
    return Outcome.kept(out)
