"""``ref:NAME``: a reference model with planted behaviour
(:mod:`faithprobe.references`), answering in the runner's process only."""

from faithprobe.references import PREFIX, check_reference
from faithprobe.subjects.backends import Backend, Loading
from faithprobe.subjects.spec import ModelSpec


def _load(spec: ModelSpec, loading: Loading):
    from faithprobe.references import ReferenceSubject

    return ReferenceSubject(spec.target)


BACKEND = Backend(
    PREFIX,
    "reference models with planted behaviour, no weights: ref:reader (faithful by "
    "construction, answers from the annotations of the example behind each request) and "
    "the degenerate ref:constant, ref:random, ref:unknown, ref:first, ref:nearest, "
    "ref:overlap (read only the input); never cached, in process only",
    load=_load,
    check=lambda spec: check_reference(spec.target),
    in_process_only=True,
)
