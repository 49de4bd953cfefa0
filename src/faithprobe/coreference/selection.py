"""Selecting coreference questions (Ray Choudhury, Rogers & Augenstein, "Machine reading,
fast and slow"): the method studies questions whose answer entity is mentioned more than
once -- by name, part of its name or a pronoun -- so that answering from the sentence that
matches the question may need a link back to another mention of the answer.

:func:`select_coreference` keeps a span question when a mention of some cluster of the
resolver overlaps its (first) gold answer at ``answer_starts[0]``, and that cluster has at
least two mentions. Kept examples carry ``features["cluster"]`` (the cluster's mention
spans) and ``features["resolver"]`` (the resolver's name). Each context is resolved once,
however many questions it has.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from faithprobe.coreference.resolver import Cluster, Resolver
from faithprobe.records import Outcome, QAExample

NOT_SPAN = "the answer is not a span of the context"
MULTI_SPAN = "the answer has several spans"
NO_CLUSTER = "the answer is in no coreference cluster"
SINGLETON = "the answer's cluster has a single mention"
REASONS = (NOT_SPAN, MULTI_SPAN, NO_CLUSTER, SINGLETON)


@dataclass
class Selection:
    """The kept examples and how many of the others were dropped for each reason."""

    kept: list[QAExample]
    dropped: Counter = field(default_factory=Counter)


def span_problem(example: QAExample) -> str | None:
    """Why ``example`` has no single answer span to work on (``NOT_SPAN``, ``MULTI_SPAN``),
    or None. Quoref lists the spans of one multi-span answer as several answers."""
    if example.answer_type != "span" or not example.answer_starts or example.answer_starts[0] < 0:
        return NOT_SPAN
    if example.features.get("multi_span"):
        return MULTI_SPAN
    return None


def answer_cluster(example: QAExample, clusters: list[Cluster], resolver: str) -> Outcome:
    """``example`` with its answer's cluster (from the resolver named ``resolver``) in
    ``features``, or why it has none."""
    if reason := span_problem(example):
        return Outcome.dropped(reason)
    start = example.answer_starts[0]
    end = start + len(example.answers[0])
    hit = [c for c in clusters if any(s < end and start < e for s, e in c)]
    if not hit:
        return Outcome.dropped(NO_CLUSTER)
    # the largest cluster when mentions of two overlap the answer
    cluster = max(hit, key=len)
    if len(cluster) < 2:
        return Outcome.dropped(SINGLETON)
    features = {**example.features, "cluster": list(cluster), "resolver": resolver}
    return Outcome.kept(replace(example, features=features))


def select_coreference(examples: Iterable[QAExample], resolver: Resolver) -> Selection:
    """The questions whose answer lies in a cluster of two or more mentions (see the module
    docstring), each with its cluster and the resolver's name."""
    resolved: dict[str, list[Cluster]] = {}
    selection = Selection([])
    for example in examples:
        if example.context not in resolved:
            resolved[example.context] = resolver.clusters(example.context)
        outcome = answer_cluster(example, resolved[example.context], resolver.name)
        if outcome.example is None:
            selection.dropped[outcome.reason] += 1
        else:
            selection.kept.append(outcome.example)
    return selection
