"""``heuristic:<selector>+<extractor>``: a shallow extractive QA baseline
(:class:`~faithprobe.subjects.heuristic.HeuristicQA`); its parts are checked when it is
built, which costs nothing."""

from faithprobe.subjects.backends import Backend, Loading
from faithprobe.subjects.spec import ModelSpec


def _load(spec: ModelSpec, loading: Loading):
    from faithprobe.subjects.heuristic import HeuristicQA

    return HeuristicQA(spec.target)


BACKEND = Backend(
    "heuristic",
    "a shallow extractive QA baseline, heuristic:<selector>+<extractor> (e.g. "
    "heuristic:overlap+entity): a sentence picked by first/overlap/lcs/encoder, then an "
    "entity/noun-chunk/sentence in it",
    load=_load,
)
