"""The subject interface: a model backend answering typed requests.

A subject has a display ``name``, a ``fingerprint`` that changes whenever its answers could
change (weights, tokenizer, scoring code), and one method per request type. Backends
implement the methods; :class:`~faithprobe.subjects.cached_subject.CachedSubject` adds the
persistent cache in front of any of them.

**The example channel.** A model sees only its requests. A reference model with planted
behaviour (:mod:`faithprobe.reference_models`) must also see the example each request was
made from (its annotations: the critical fact, the rationale, the natural-logic features),
so a subject may set :attr:`Subject.reads_examples`; the runner then calls
:meth:`Subject.read_examples` with the example behind each request, and the origin of each
intervened example (its original and the intervention), before asking. Such
answers depend on more than the request, so they must not be cached by the request's key:
such a subject also sets :attr:`Subject.cacheable` to False, and the runner asks it directly.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from faithprobe.errors import UsageError
from faithprobe.records import Example, Origin
from faithprobe.requests import Answer, Request

if TYPE_CHECKING:
    from faithprobe.subjects.answer_cache import AnswerCache

Progress = Callable[[int], None]


class CannotAnswer(UsageError):
    """A model asked for a kind of request it does not answer: ``model`` (its name),
    ``model_kind``, the request ``kind``, what it ``accepts``, and ``backends``: those that
    answer ``kind``, which the runner names (:meth:`naming`); a subject knows no backend
    registry."""

    def __init__(
        self, model: str, model_kind: str, kind: str, accepts: Iterable[str], backends: str = ""
    ) -> None:
        self.model, self.model_kind, self.kind = model, model_kind, kind
        self.accepts, self.backends = tuple(sorted(accepts)), backends
        super().__init__(
            f"model {model} ({model_kind}) cannot answer {kind} requests; it answers "
            f"{', '.join(self.accepts)}"
            + (f". {kind} requests need a model of backend {backends}" if backends else "")
        )

    def naming(self, backends: str) -> CannotAnswer:
        """The same refusal, naming ``backends`` as those that answer its kind."""
        return CannotAnswer(self.model, self.model_kind, self.kind, self.accepts, backends)

    def __reduce__(self):  # raised in a Ray actor, it travels back whole
        return CannotAnswer, (self.model, self.model_kind, self.kind, self.accepts, self.backends)


class Subject(ABC):
    name: str
    kind: str
    # the request kinds it answers (``Request.kind``); suites pick the request to fit
    accepts: frozenset[str] = frozenset({"candidate-scores"})
    # whether generation requests with ``chat`` set go through a chat template the model
    # has (its tokenizer's, or a chat API's); ``-o chat=auto`` asks such models in chat form
    has_chat_template: bool = False

    # a version per request kind whose answering code can change on its own (generation
    # beside scoring): bumping it invalidates that kind's cached answers only
    request_versions: dict[str, str] = {}

    # how many chunks ``answer_chunks`` computes at the same time
    parallel_chunks: int = 1

    # the example channel (module docstring): whether the runner shows the subject the
    # example behind each request (``read_examples``) before asking, and whether its answers
    # may go through the persistent answer cache (a function of the request alone)
    reads_examples: bool = False
    cacheable: bool = True

    @property
    @abstractmethod
    def fingerprint(self) -> str: ...

    def cache_fingerprint(self, kind: str) -> str:
        """What the cache keys of ``kind`` requests are built from: the fingerprint, plus the
        kind's own version if it has one (so the other kinds' keys stay as they were)."""
        version = self.request_versions.get(kind)
        return f"{self.fingerprint}:{version}" if version else self.fingerprint

    def check_accepts(self, requests: Sequence[Request]) -> None:
        """Raise :class:`CannotAnswer` on the first request of a kind this model does not
        answer."""
        for r in requests:
            if r.kind not in self.accepts:
                raise CannotAnswer(self.name, self.kind, r.kind, self.accepts)

    def read_examples(
        self, by_request: Mapping[Request, Example], origins: Mapping[str, Origin] | None = None
    ) -> None:
        """Take the example each of the coming requests was made from, and ``origins``:
        intervened example id -> where it came from (called by the runner before
        :meth:`answer` when :attr:`reads_examples` is set; a request made from several
        examples maps to the first of them by id, an example made by several pairs to the
        first pair's origin by pair id; an original of any pair has no origin). A subject
        that reads no examples ignores them."""
        del by_request, origins

    def describe(self) -> dict[str, object]:
        """Settings worth recording in run.json beside the fingerprint (an endpoint's URL
        and API); none for local models."""
        return {}

    def use_cache(self, cache: AnswerCache) -> None:
        """Take the answer cache a run asks this subject through (a
        :class:`~faithprobe.subjects.cached_subject.CachedSubject` hands it over): a subject
        that checks its model before answering (an endpoint's self-check) keeps what it
        found there, under its fingerprint. Nothing by default."""
        del cache

    def usage(self) -> dict[str, int] | None:
        """Counters of what answering has cost so far (tokens, HTTP requests) for subjects
        that pay per call; None for local models."""
        return None

    def answer_chunks(
        self, chunks: Iterable[Sequence[Request]]
    ) -> Iterator[tuple[int, list[Answer]]]:
        """Answer each chunk of requests, yielding ``(index of the chunk, answers)`` as each is
        done. A chunk is drawn from ``chunks`` only when there is room to compute it, so a
        caller can decide what goes into it at the last moment (``CachedSubject`` claims its
        requests then). One at a time and in order here; executors that compute chunks in
        parallel (:class:`~faithprobe.executors.RaySubject`) yield them as they finish."""
        for i, chunk in enumerate(chunks):
            yield i, self.answer(chunk)

    @abstractmethod
    def answer(self, requests: Sequence[Request], progress: Progress | None = None) -> list[Answer]:
        """Answer each request; call ``progress(k)`` as k more requests are done."""
