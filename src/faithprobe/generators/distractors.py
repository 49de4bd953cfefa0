"""The distractor cloze dataset: base items and their attractor variants.

Base items come from the four item sets in :mod:`faithprobe.datasets.stories`, each
background -> target pair told about ``names_per_pair`` entities. Variants are produced by
the registered interventions (``attractors.*`` and ``filler``), one per condition:

    setting (single, multi) x attractor type (B, T, unrelated) x n (1..3)
    x position (single: after, between; multi: after, between, later) x filler (0, ...)

Related (B, T) attractors are enumerated exhaustively: every n-subset of the other words
of the class (C(5, n) for six-pair sets, C(3, n) for sports). Unrelated attractors are drawn
as the same number of subsets, so types are balanced. Filler levels > 0 add items with
0..3 attractors after a filler clause; the 0-attractor filler items measure filler alone.

``filler_sentences`` > 0 adds, per base item, one no-attractor copy padded with that many
neutral sentences after the critical fact (intervention ``padding``): the method's n = 0
condition, as long as an item with attractors after the fact, so the n = 0 accuracy is not
1 by construction and the drop to n = 1 is not a length effect. With it at 0 (the default)
the dataset is exactly what it was before the option existed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from faithprobe.datasets.attractor_sets import variant_count, variant_id
from faithprobe.datasets.stories import (
    ATTRACTOR_TYPES,
    ITEM_SETS,
    NAMES,
    POSITIONS,
    SETTINGS,
    Story,
    base_story,
)
from faithprobe.errors import UsageError
from faithprobe.interventions import get as get_intervention
from faithprobe.options import check_numbers, option
from faithprobe.records import ClozeExample
from faithprobe.seeding import rng_for

COUNTS = (1, 2, 3)  # attractors an item may have
FILLER_LEVELS = (0, 1, 2, 3)
EVERY_POSITION = POSITIONS["multi"]  # the multi setting has every position

INTERVENTION_FOR_TYPE = {
    "B": "attractors.background",
    "T": "attractors.target",
    "unrelated": "attractors.unrelated",
}


@dataclass(frozen=True)
class DistractorConfig:
    """What ``faithprobe generate distractors`` builds (``-o KEY=VALUE``; lists
    comma-separated)."""

    names_per_pair: int = option(2, "entities per background/target pair", range=(1, len(NAMES)))
    settings: tuple[str, ...] = option(SETTINGS, "settings to include", choices=SETTINGS)
    attractor_types: tuple[str, ...] = option(
        ATTRACTOR_TYPES, "attractor types", choices=ATTRACTOR_TYPES
    )
    counts: tuple[int, ...] = option(COUNTS, "numbers of attractors", choices=COUNTS)
    positions: tuple[str, ...] = option(
        EVERY_POSITION, "attractor positions", choices=EVERY_POSITION
    )
    fillers: tuple[int, ...] = option(
        (0,), "filler levels to include (0 = none)", choices=FILLER_LEVELS
    )
    item_sets: tuple[str, ...] = option(tuple(ITEM_SETS), "item sets to include", choices=ITEM_SETS)
    filler_sentences: int = option(
        0, "neutral sentences padding a no-attractor copy of each base item (0 = none)",
        range=(0, 3),
    )  # fmt: skip

    def __post_init__(self) -> None:
        check_numbers(self)
        if not any(p in POSITIONS[s] for s in self.settings for p in self.positions):
            fits = "; ".join(f"{s}: {', '.join(POSITIONS[s])}" for s in self.settings)
            raise UsageError(
                f"positions {list(self.positions)}: none fits the settings given ({fits}), "
                "so there would be no attractor variants"
            )


def base_items(config: DistractorConfig, seed: int) -> list[ClozeExample]:
    """One item per (item set, pair, entity name); names drawn per pair from the seed."""
    items = []
    for set_name in config.item_sets:
        spec = ITEM_SETS[set_name]
        for i, (background, _) in enumerate(spec.pairs):
            rng = rng_for(seed, "distractors.names", set_name, background)
            picks = rng.choice(len(NAMES), size=config.names_per_pair, replace=False)
            picks.sort()
            for j in picks:
                story = base_story(set_name, i, NAMES[j][0])
                items.append(
                    ClozeExample(
                        id=f"{set_name}:{background}:{story.entity}".replace(" ", "_"),
                        context=story.render_context(),
                        target=story.target,
                        candidates=spec.targets,
                        suffix=".",
                        features={**story.to_features(), "base_id": None},
                    )
                )
    return items


def padded(base: ClozeExample, config: DistractorConfig, seed: int) -> ClozeExample | None:
    """The no-attractor copy of ``base`` padded with neutral sentences, if asked for."""
    n = config.filler_sentences
    return get_intervention("padding").apply(base, seed=seed, n=n).example if n else None


def variants(base: ClozeExample, config: DistractorConfig, seed: int) -> Iterator[ClozeExample]:
    """Every condition of ``config`` applied to one base item."""
    pad = padded(base, config, seed)
    if pad is not None:
        yield pad
    for n_filler in config.fillers:
        start = base
        if n_filler:
            start = get_intervention("filler").apply(base, seed=seed, n=n_filler).example
            yield start
        for setting in config.settings:
            for attractor_type in config.attractor_types:
                intervention = get_intervention(INTERVENTION_FOR_TYPE[attractor_type])
                for position in config.positions:
                    if position not in POSITIONS[setting]:
                        continue
                    for n in config.counts:
                        yield from intervention.apply(
                            start, seed=seed, setting=setting, n=n, position=position
                        ).examples


def generate(config: DistractorConfig, seed: int) -> list[ClozeExample]:
    """Base items followed by all their variants (the full dataset)."""
    bases = base_items(config, seed)
    return bases + [v for b in bases for v in variants(b, config, seed)]


@dataclass(frozen=True)
class Planned:
    """A variant of :func:`generate` before it is built: its id, its design cell
    (setting, attractor type, attractors, filler level) and the intervention call that builds
    it: ``(intervention, start item, params)``, which builds its siblings too. A filler or
    padded item without attractors is built at once (``built``): there is one per base item
    and level."""

    id: str
    cell: tuple
    call: tuple[str, ClozeExample, tuple] | None = None
    built: ClozeExample | None = None


def plan(config: DistractorConfig, seed: int) -> tuple[list[ClozeExample], list[Planned]]:
    """The base items and every variant :func:`generate` makes, planned: the same ids and
    cells, nothing rendered but the filler items. :func:`build` makes any of them exactly as
    :func:`generate` does, so a sample drawn from the plan costs only what it holds."""
    bases = base_items(config, seed)
    planned = []
    for base in bases:
        pad = padded(base, config, seed)
        if pad is not None:
            f = pad.features
            cell = (f["setting"], f["attractor_type"], 0, 0)
            planned.append(Planned(pad.id, cell, built=pad))
        for n_filler in config.fillers:
            start = base
            if n_filler:
                start = get_intervention("filler").apply(base, seed=seed, n=n_filler).example
                f = start.features
                cell = (f.get("setting"), f.get("attractor_type"), 0, n_filler)
                planned.append(Planned(start.id, cell, built=start))
            story = Story.from_features(start.features)
            for setting in config.settings:
                for kind in config.attractor_types:
                    for position in config.positions:
                        if position not in POSITIONS[setting]:
                            continue
                        for n in config.counts:
                            params = (("setting", setting), ("n", n), ("position", position))
                            call = (INTERVENTION_FOR_TYPE[kind], start, params)
                            planned += [
                                Planned(
                                    variant_id(start.id, kind, setting, position, n, k),
                                    (setting, kind, n, n_filler),
                                    call,
                                )
                                for k in range(variant_count(story, kind, n))
                            ]
    return bases, planned


def build(planned: list[Planned], seed: int) -> list[ClozeExample]:
    """The variants ``planned`` names, in its order, each made by the intervention call that
    makes it in :func:`generate` (once per call, whatever number of its variants are
    wanted)."""
    wanted = {p.id for p in planned}
    made = {p.id: p.built for p in planned if p.built is not None}
    calls = {(c[0], c[1].id, c[2]): c for c in (p.call for p in planned) if c is not None}
    for name, start, params in calls.values():
        outcome = get_intervention(name).apply(start, seed=seed, **dict(params))
        made |= {x.id: x for x in outcome.examples if x.id in wanted}
    return [made[p.id] for p in planned]
