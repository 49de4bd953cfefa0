"""``ref:NAME``: a reference model with planted behaviour
(:mod:`faithprobe.reference_models`), on any executor."""

from dataclasses import dataclass

from faithprobe.numbers import SEEDS
from faithprobe.options import option
from faithprobe.reference_models import PREFIX, check_reference
from faithprobe.subjects.backends import Backend, Loading
from faithprobe.subjects.spec import ModelSpec


@dataclass(frozen=True)
class ReferenceSettings:
    """What a reference model takes besides its name."""

    seed: int = option(
        0,
        "the draw of ref:mix:P: which base items it answers as the memoriser (the other "
        "reference models draw nothing)",
        range=SEEDS,
    )


def _load(spec: ModelSpec, loading: Loading):
    from faithprobe.reference_models import ReferenceSubject

    return ReferenceSubject(spec.target, seed=spec.settings.seed)


BACKEND = Backend(
    PREFIX,
    "reference models with planted behaviour, no weights: ref:reader (faithful by "
    "construction, answers from the annotations of the example behind each request); the "
    "degenerate ref:constant, ref:random, ref:unknown, ref:first, ref:nearest, ref:overlap "
    "(read only the input); the competent shortcuts ref:memoriser (every intervened item "
    "answered as its original), one per step (ref:negation-blind, ref:support-blind, "
    "ref:comparative-blind, ref:pair-only, ref:context-only, ref:fact-blind, "
    "ref:question-blind) and ref:mix:P (the reader on a share P of the base items, else the "
    "memoriser); never cached",
    load=_load,
    check=lambda spec: check_reference(spec.target),
    settings=ReferenceSettings,
)
