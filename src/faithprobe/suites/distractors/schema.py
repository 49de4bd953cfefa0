"""The ``distractors`` suite's ``--data`` schema: what a cloze item must hold to enter its
views (:mod:`faithprobe.datasets.schema`). The allowed values are those the metrics and
tables read (:mod:`.metrics`: the main view keeps position ``after``, the related metrics
attractor types ``B`` and ``T``, the single-vs-multi test settings ``single`` and
``multi``), so an item no view would count is refused at load, not dropped in silence."""

from __future__ import annotations

from faithprobe.datasets.distractor_tsv import RELEASED_TSV_SCHEMA
from faithprobe.datasets.schema import (
    INTEGER,
    OBJECT,
    SCHEMAS,
    TEXT,
    TEXT_OR_NULL,
    TEXTS,
    Condition,
    DataSchema,
    Field,
    Record,
    Rule,
)
from faithprobe.datasets.stories import ATTRACTOR_TYPES, NO_ATTRACTOR, POSITIONS, SETTINGS

EVERY_POSITION = POSITIONS["multi"]


def _features(record: Record) -> dict:
    features = record.get("features")
    return features if isinstance(features, dict) else {}


def is_variant(record: Record) -> bool:
    """Whether the record is a variant (its ``features.base_id`` names a base item)."""
    return _features(record).get("base_id") is not None


VARIANT = Condition("when features.base_id is set (a variant)", is_variant)


def _base_has_no_attractors(record: Record) -> str | None:
    f = _features(record)
    if not is_variant(record) and f.get("n_attractors") != 0:
        return f"a base item has n_attractors {f.get('n_attractors')!r}"
    return None


def _type_matches_count(record: Record) -> str | None:
    f = _features(record)
    if not is_variant(record):
        return None
    bare = f["attractor_type"] == NO_ATTRACTOR
    if bare != (f["n_attractors"] == 0):
        return f"attractor_type {f['attractor_type']!r} with n_attractors {f['n_attractors']}"
    return None


def _bare_variant_is_padded(record: Record) -> str | None:
    f = _features(record)
    if is_variant(record) and f["n_attractors"] == 0 and not (f.get("filler") or f.get("padding")):
        return "a variant with no attractors, no filler and no padding"
    return None


def _attractors_counted(record: Record) -> str | None:
    f = _features(record)
    words = f.get("attractors")
    if words and len(words) != f["n_attractors"]:
        return f"{len(words)} attractors listed, n_attractors {f['n_attractors']}"
    return None


DISTRACTORS_SCHEMA = DataSchema(
    name="cloze items (JSON lines)",
    record="one cloze item per JSON line (a base item, or a variant of one)",
    fields=(
        Field("id", TEXT, "the item's id, unique in the file", required=True),
        Field("context", TEXT, "the text before the blank", required=True),
        Field("target", TEXT, "the right word; one of the candidates", required=True),
        Field(
            "candidates",
            TEXTS,
            "the words scored in the blank (the target's class); accuracy is judged within them",
            required=True,
        ),
        Field("suffix", TEXT, "text after the blank, e.g. '.' (default: none)"),
        Field("features", OBJECT, "the item's design, below", required=True),
        Field(
            "features.base_id",
            TEXT_OR_NULL,
            "null or absent: a base item (no attractors, the n = 0 point).",
            links="Set: the id of the base item this variant was made from; the variant is "
            "paired with it and counts only where the model gets that base item right.",
        ),
        Field(
            "features.n_attractors",
            INTEGER,
            "how many attractors the item holds (0 for a base item)",
            required=True,
            minimum=0,
        ),
        Field(
            "features.setting",
            TEXT,
            "single: the attractors are said of the key entity; multi: of other entities",
            required=VARIANT,
            allowed=SETTINGS,
        ),
        Field(
            "features.attractor_type",
            TEXT,
            "B: words of the background word's class; T: of the target's class; unrelated: "
            "other words; none: no attractors (a filler or padded item)",
            required=VARIANT,
            allowed=(*ATTRACTOR_TYPES, NO_ATTRACTOR),
        ),
        Field(
            "features.position",
            TEXT,
            "after: the attractors follow the critical fact (the main view); between: they "
            "come between the entity and the fact; later: the fact comes after them (multi)",
            required=VARIANT,
            allowed=EVERY_POSITION,
        ),
        Field("features.attractors", TEXTS, "the attractor words, as many as n_attractors"),
        Field(
            "features.filler",
            TEXTS,
            "filler clauses in the item (its level is their count; the filler view)",
        ),
        Field(
            "features.padding",
            TEXTS,
            "neutral sentences after the critical fact of a no-attractor copy of the base item "
            "(then the n = 0 point of the curves)",
        ),
        Field("features.item_set", TEXT, "a name grouping items (the by-item-set view)"),
        Field(
            "features.entity",
            TEXT,
            "the key entity; with features.item_set, .background and .target (a story of a "
            "known item set), lets the critical-fact swap re-tell the story (an item without "
            "them is kept, its swap counted as not made)",
        ),
        Field(
            "features.background", TEXT, "the critical fact's word (France in 'lives in France')"
        ),  # fmt: skip
    ),
    rules=(
        Rule("features.n_attractors", "a base item has n_attractors 0", _base_has_no_attractors),
        Rule(
            "features.attractor_type",
            "a variant's attractor_type is none exactly when its n_attractors is 0",
            _type_matches_count,
        ),
        Rule(
            "features.n_attractors",
            "a variant without attractors has filler or padding (else it is its base item)",
            _bare_variant_is_padded,
        ),
        Rule(
            "features.attractors",
            "attractors, when listed, number n_attractors",
            _attractors_counted,
        ),
    ),
    links="a variant names its base item in features.base_id; that item must be in the same "
    "file and be a base item itself (features.base_id null or absent). Each base item "
    "brings its own row (the n = 0 point) and its critical-fact swap.",
)

SCHEMAS.add(
    "distractors",
    (DISTRACTORS_SCHEMA, RELEASED_TSV_SCHEMA),
    description="cloze items and their variants; the method's released TSV folders",
)
