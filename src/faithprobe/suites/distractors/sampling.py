"""How the distractors suite draws a limited sample: the headline cells first, paired by
base item, then every design cell evenly.

The card reads two effects per setting off items with ONE attractor AFTER the critical fact
(:mod:`.headline`): the accuracy lost to a related (B/T) attractor, and that loss minus the
loss to an unrelated one on the same base items. Drawn evenly over the design cells
(setting x attractor type x n x filler: 18 cells by default), the audit's small budget of
300 pairs held about 8 unrelated variants after the fact per setting, and only 0-3 base items
per setting with both a related and an unrelated one: too few to pair. So a sample gives up
to :data:`HEADLINE_SHARE` of its pairs to those cells first, whole base items at a time in a
seeded order, each with one related and one unrelated variant after the fact per setting
(and its padded n = 0 copy when the data has one); the rest is drawn evenly over the design
cells as before (:func:`~faithprobe.suite_protocol.stratified_sample`). With 300 pairs that is 37 of
the 44 base items; with 900, all of them.

The same draw is made from the generator's plan (before anything is built) and from built
pairs: only the ids and the design of each variant are read, through :func:`planned_design`
and :func:`pair_design`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TypeVar

from faithprobe.generators.distractors import Planned
from faithprobe.interventions import Pair
from faithprobe.seeding import hash_rank
from faithprobe.suite_protocol import stratified_sample

T = TypeVar("T")

# at most this share of a limited sample goes to the headline cells
HEADLINE_SHARE = 0.5
HEADLINE_POSITION = "after"  # the method's Figure 1 condition


@dataclass(frozen=True)
class Design:
    """What the sampler reads of a variant: its base item, its setting, and its role in the
    headline (``related``, ``unrelated``, ``padded``; None outside the headline cells)."""

    base: str
    setting: str | None
    role: str | None


def headline_role(
    attractor_type: str | None, n: int, position: str | None, n_filler: int, padded: bool
) -> str | None:
    """A variant's part in the headline effects: one attractor after the critical fact,
    related (B or T) or unrelated, no filler; or the padded no-attractor copy (the n = 0
    side when the run has one)."""
    if n_filler:
        return None
    if n == 0:
        return "padded" if padded else None
    if n != 1 or position != HEADLINE_POSITION:
        return None
    return "unrelated" if attractor_type == "unrelated" else "related"


def pair_design(pair: Pair) -> Design:
    f = pair.intervened.features
    role = headline_role(
        f.get("attractor_type"),
        int(f.get("n_attractors", 0)),
        f.get("position"),
        len(f.get("filler", [])),
        bool(f.get("padding")),
    )
    return Design(pair.original.id, f.get("setting"), role)


def planned_design(planned: Planned) -> Design:
    if planned.built is not None:  # a filler or padded item without attractors
        f = planned.built.features
        role = headline_role(None, 0, None, len(f.get("filler", [])), bool(f.get("padding")))
        return Design(f["base_id"], f.get("setting"), role)
    _, start, params = planned.call
    setting, kind, n, n_filler = planned.cell
    base = start.features.get("base_id") or start.id
    return Design(base, setting, headline_role(kind, n, dict(params)["position"], n_filler, False))


def sample_headline_first(
    items: list[T],
    limit: int | None,
    seed: int,
    *,
    key: Callable[[T], str],
    design: Callable[[T], Design],
    stratum: Callable[[T], Hashable],
) -> list[T]:
    """At most ``limit`` of ``items`` (sorted by key; all of them, in their order, if there
    are no more): whole base items' headline groups (one variant per setting and role, in a
    seeded order) while they fit in ``HEADLINE_SHARE`` of ``limit``, then the rest evenly
    across ``stratum``."""
    if limit is None or limit >= len(items):
        return items
    slots: dict[tuple, list[T]] = defaultdict(list)
    for item in sorted(items, key=lambda x: hash_rank(seed, key(x))):
        d = design(item)
        if d.role is not None:
            setting = None if d.role == "padded" else d.setting
            slots[(d.base, setting or "", d.role)].append(item)
    groups: dict[str, list[T]] = defaultdict(list)
    for (base, _, _), queue in sorted(slots.items()):
        groups[base].append(queue[0])
    head: list[T] = []
    for base in sorted(groups, key=lambda b: hash_rank(seed, b)):
        if len(head) + len(groups[base]) > int(limit * HEADLINE_SHARE):
            break
        head += groups[base]
    taken = {key(x) for x in head}
    rest = [x for x in items if key(x) not in taken]
    rest = stratified_sample(rest, limit - len(head), seed, key=key, stratum=stratum)
    return sorted(head + rest, key=key)
