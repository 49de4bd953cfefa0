"""``heuristic:<selector>+<extractor>``: a shallow extractive QA baseline
(:class:`~faithprobe.heuristics.subject.HeuristicSubject`); its parts are checked when it is
built, which costs nothing. Registered through the entry-point group ``faithprobe.backends``
(``pyproject.toml``), the way a package outside faithprobe adds a backend: the heuristics
build on the subject interface, so the built-in registry does not import them."""

from faithprobe.requests import SpanAnswerRequest
from faithprobe.subjects.backends import Backend, Loading
from faithprobe.subjects.spec import ModelSpec


def _load(spec: ModelSpec, loading: Loading):
    from faithprobe.heuristics.subject import HeuristicSubject

    return HeuristicSubject(spec.target)


BACKEND = Backend(
    "heuristic",
    "a shallow extractive QA baseline, heuristic:<selector>+<extractor> (e.g. "
    "heuristic:overlap+entity): a sentence picked by first/overlap/lcs/encoder, then an "
    "entity/noun-chunk/sentence in it",
    load=_load,
    answers={SpanAnswerRequest.kind: ""},
)
