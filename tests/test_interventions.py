from faithprobe.generators.distractors import DistractorConfig, base_items
from faithprobe.interventions import available, get


def test_registry_lists_metadata():
    names = {i.name for i in available()}
    assert {"attractors.background", "attractors.target", "attractors.unrelated", "filler"} <= names
    for i in available():
        assert i.changes and i.holds and i.expectation.name


def test_randomness_depends_on_example_and_seed_not_order():
    bases = base_items(DistractorConfig(), seed=0)
    unrelated = get("attractors.unrelated")
    params = {"setting": "multi", "n": 2, "position": "after"}
    forward = [unrelated.apply(b, seed=7, **params) for b in bases]
    backward = [unrelated.apply(b, seed=7, **params) for b in reversed(bases)][::-1]
    assert [[x.context for x in v] for v in forward] == [[x.context for x in v] for v in backward]
    other = [unrelated.apply(b, seed=8, **params) for b in bases]
    assert [[x.context for x in v] for v in forward] != [[x.context for x in v] for v in other]


def test_related_attractors_are_enumerated_and_hold_the_fact():
    base = base_items(DistractorConfig(), seed=0)[0]  # a capitals item: 5 other countries
    out = get("attractors.background").apply(base, seed=0, setting="single", n=2, position="after")
    assert len(out) == 10
    assert len({frozenset(x.features["attractors"]) for x in out}) == 10
    for x in out:
        assert x.target == base.target and x.candidates == base.candidates
        assert x.features["base_id"] == base.id
        assert f"lives in {base.features['background']}" in x.context
