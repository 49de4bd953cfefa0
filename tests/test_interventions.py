import pytest

from faithprobe.generators.distractors import DistractorConfig, base_items
from faithprobe.interventions import available, get
from faithprobe.records import ClozeExample, Outcome


def test_registry_lists_metadata():
    names = {i.name for i in available()}
    assert {"attractors.background", "attractors.target", "attractors.unrelated", "filler"} <= names
    for i in available():
        assert i.changes and i.holds and i.expectation.name


def test_randomness_depends_on_example_and_seed_not_order():
    bases = base_items(DistractorConfig(), seed=0)
    unrelated = get("attractors.unrelated")
    params = {"setting": "multi", "n": 2, "position": "after"}
    forward = [unrelated.apply(b, seed=7, **params).examples for b in bases]
    backward = [unrelated.apply(b, seed=7, **params).examples for b in reversed(bases)][::-1]
    assert [[x.context for x in v] for v in forward] == [[x.context for x in v] for v in backward]
    other = [unrelated.apply(b, seed=8, **params).examples for b in bases]
    assert [[x.context for x in v] for v in forward] != [[x.context for x in v] for v in other]


def test_related_attractors_are_enumerated_and_hold_the_fact():
    base = base_items(DistractorConfig(), seed=0)[0]  # a capitals item: 5 other countries
    out = (
        get("attractors.background")
        .apply(base, seed=0, setting="single", n=2, position="after")
        .examples
    )
    assert len(out) == 10
    assert len({frozenset(x.features["attractors"]) for x in out}) == 10
    for x in out:
        assert x.target == base.target and x.candidates == base.candidates
        assert x.features["base_id"] == base.id
        assert f"lives in {base.features['background']}" in x.context


def test_an_outcome_holds_examples_or_the_reason_there_are_none():
    a = ClozeExample("a", "x", "t", ("t", "u"))
    b = ClozeExample("b", "y", "t", ("t", "u"))
    kept = Outcome.kept(a, b)
    assert kept.examples == (a, b) and kept.reason is None
    with pytest.raises(ValueError, match="not one"):
        _ = kept.example
    assert Outcome.kept(a).example is a
    dropped = Outcome.dropped("why", detail="more")
    assert dropped.example is None and (dropped.reason, dropped.detail) == ("why", "more")
    for bad in ((), (a,)):
        with pytest.raises(ValueError, match="not both"):
            Outcome(bad, "why" if bad else None)
    with pytest.raises(ValueError, match="detail"):
        Outcome((a,), detail="more")


def test_a_dropped_variant_is_the_original_marked_with_the_reason():
    original = ClozeExample("a", "x", "t", ("t", "u"), features={"k": 1})
    marked = Outcome.dropped("why", detail="more").example_or_dropped(original, "V")
    assert marked.id == original.id and marked.context == original.context
    assert marked.features == {"k": 1, "variant": "V", "dropped": "why", "drop_detail": "more"}
    assert "drop_detail" not in Outcome.dropped("why").example_or_dropped(original, "V").features
    changed = ClozeExample("a/x", "z", "t", ("t", "u"))
    assert Outcome.kept(changed).example_or_dropped(original, "V") is changed
