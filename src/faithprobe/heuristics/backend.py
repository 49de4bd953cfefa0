"""``heuristic:<selector>+<extractor>``: a shallow extractive QA baseline
(:class:`~faithprobe.heuristics.subject.HeuristicSubject`); its parts are checked when it is
built, which costs nothing, and its one setting, ``answer_types=FOLDER`` (a classifier from
``faithprobe train answer-types`` for the ``entity`` extractor), when the spec is parsed.
Registered through the entry-point group ``faithprobe.backends`` (``pyproject.toml``), the
way a package outside faithprobe adds a backend: the heuristics build on the subject
interface, so the built-in registry does not import them."""

from dataclasses import dataclass

from faithprobe.errors import UsageError
from faithprobe.options import option
from faithprobe.paths import Kind, checked
from faithprobe.requests import SpanAnswerRequest
from faithprobe.subjects.backends import Backend, Loading
from faithprobe.subjects.spec import ModelSpec


@dataclass(frozen=True)
class HeuristicSettings:
    """The settings of a heuristic (``heuristic:overlap+entity,answer_types=FOLDER``)."""

    answer_types: str = option(
        "", "answer-type classifier folder (faithprobe train answer-types); default: wh-words"
    )


def _check(spec: ModelSpec) -> None:
    folder = spec.settings.answer_types
    if folder and not (checked(folder, "answer_types", Kind.READ_FOLDER) / "config.json").is_file():
        raise UsageError(f"answer_types {folder}: not a model folder (no config.json there)")


def _load(spec: ModelSpec, loading: Loading):
    from faithprobe.heuristics.subject import HeuristicSubject

    return HeuristicSubject(spec.target, answer_types=spec.settings.answer_types or None)


BACKEND = Backend(
    "heuristic",
    "a shallow extractive QA baseline, heuristic:<selector>+<extractor> (e.g. "
    "heuristic:overlap+entity): a sentence picked by first/overlap/lcs/encoder, then an "
    "entity/noun-chunk/sentence in it (the entity's type by wh-word, or by a trained "
    "classifier: heuristic:encoder+entity,answer_types=FOLDER)",
    load=_load,
    check=_check,
    settings=HeuristicSettings,
    answers={SpanAnswerRequest.kind: ""},
)
