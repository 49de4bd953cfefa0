"""Coreference resolvers: anything that groups a text's mentions into clusters.

A :class:`Resolver` has a ``name`` (recorded with every example it selects, so a result
says whose clusters it rests on) and ``clusters(text)``: a list of clusters, each the
sorted ``(start, end)`` character spans of mentions of one entity.

:class:`SpacyResolver` wraps a spaCy pipeline the user installs that has a coreference
component; :class:`faithprobe.coreference.fallback.FallbackResolver` is a stated rule
that needs only the NER model on this machine.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from faithprobe.errors import ModelError, excerpt
from faithprobe.sentences import Span

Cluster = list[Span]

# spacy-experimental's ``coref`` writes one span group per cluster under this prefix
SPAN_PREFIX = "coref_clusters"
# neuralcoref (and pipelines imitating it) set this Doc extension
EXTENSION = "coref_clusters"


@runtime_checkable
class Resolver(Protocol):
    name: str

    def clusters(self, text: str) -> list[Cluster]: ...


class SpacyResolver:
    """Clusters from a spaCy pipeline with a coreference component.

    ``pipeline`` is a pipeline name or path (loaded with ``spacy.load`` on first use) or an
    already built ``Language``. Clusters are read from every ``doc.spans`` group whose key
    starts with ``coref_clusters`` (spacy-experimental's ``coref`` writes
    ``coref_clusters_1``, ``coref_clusters_2``, ...) and from ``doc._.coref_clusters`` if
    the pipeline sets that extension (a list of clusters, each a list of spans or an object
    with ``.mentions``, as neuralcoref's).

    A text with no coreference writes no span group at all, so an empty result cannot tell
    "no clusters" from "no coreference component". The pipeline is therefore checked once,
    when loaded: it must have a component whose name or factory mentions "coref", or
    register the ``coref_clusters`` extension; otherwise :class:`ModelError`.
    """

    def __init__(self, pipeline: str | Path | Any, *, name: str | None = None) -> None:
        self._pipeline = pipeline
        self._nlp = None if isinstance(pipeline, str | Path) else _checked(pipeline, "pipeline")
        label = pipeline if isinstance(pipeline, str | Path) else pipeline.meta.get("name")
        self.name = name or f"spacy:{label}"

    @property
    def nlp(self):
        if self._nlp is None:
            import spacy

            try:
                nlp = spacy.load(self._pipeline)
            except OSError as err:
                raise ModelError(
                    f"cannot load spaCy pipeline {excerpt(self._pipeline)}: {err}"
                ) from err
            self._nlp = _checked(nlp, str(self._pipeline))
        return self._nlp

    def clusters(self, text: str) -> list[Cluster]:
        doc = self.nlp(text)
        found = [doc.spans[key] for key in sorted(doc.spans) if key.startswith(SPAN_PREFIX)]
        if doc.has_extension(EXTENSION):
            found.extend(getattr(doc._, EXTENSION) or [])
        return [sorted(_spans(c)) for c in found]


def _checked(nlp, label: str):
    from spacy.tokens import Doc

    factories = nlp.pipe_factories
    if any("coref" in n or "coref" in factories[n] for n in nlp.pipe_names):
        return nlp
    if Doc.has_extension(EXTENSION):
        return nlp
    raise ModelError(
        f"spaCy pipeline {excerpt(label)} has no coreference component (components: "
        f"{', '.join(nlp.pipe_names) or 'none'}); install one whose output goes to "
        f"doc.spans['{SPAN_PREFIX}_*'] or doc._.{EXTENSION}, e.g. spacy-experimental's coref"
    )


def _spans(cluster: Any) -> Iterable[Span]:
    mentions = getattr(cluster, "mentions", cluster)
    for m in mentions:
        yield (m.start_char, m.end_char) if hasattr(m, "start_char") else (int(m[0]), int(m[1]))
