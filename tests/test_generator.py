from collections import Counter
from math import comb

import pytest

from faithprobe.datasets.stories import ITEM_SETS, Story, base_story
from faithprobe.errors import UsageError
from faithprobe.expectations import ANSWER_UNCHANGED
from faithprobe.generators import GENERATORS
from faithprobe.generators.distractors import DistractorConfig, base_items, build, generate, plan
from faithprobe.interventions import Pair
from faithprobe.suite_protocol import get_suite


def test_same_seed_same_dataset_other_seed_other_names():
    a = generate(DistractorConfig(), seed=3)
    b = generate(DistractorConfig(), seed=3)
    c = generate(DistractorConfig(), seed=4)
    assert [(i.id, i.context) for i in a] == [(i.id, i.context) for i in b]
    assert {i.id for i in base_items(DistractorConfig(), 3)} != {
        i.id for i in base_items(DistractorConfig(), 4)
    }
    assert len(a) == len(c)


def test_counts_per_condition_follow_the_design():
    config = DistractorConfig(names_per_pair=2, fillers=(0, 1))
    items = generate(config, seed=0)
    n_base = 2 * sum(len(s.pairs) for s in ITEM_SETS.values())
    assert sum(1 for i in items if i.features["base_id"] is None) == n_base == 44
    counts = Counter(
        (
            i.features["setting"],
            i.features["attractor_type"],
            i.features["n_attractors"],
            len(i.features["filler"]),
        )
        for i in items
        if i.features["base_id"] is not None
    )
    for setting, positions in (("single", 2), ("multi", 3)):
        for kind in ("B", "T", "unrelated"):
            for n in (1, 2, 3):
                # 18 six-pair bases x C(5, n) + 4 sports bases... x 2 names
                expected = 2 * positions * (18 * comb(5, n) + 4 * comb(3, n))
                for filler in (0, 1):
                    assert counts[(setting, kind, n, filler)] == expected
    assert counts[("single", "none", 0, 1)] == n_base  # filler-only items
    assert len(items) == n_base * 2 + 2 * sum(
        2 * p * 3 * (18 * comb(5, n) + 4 * comb(3, n)) for p in (2, 3) for n in (1, 2, 3)
    )


def test_ids_unique_and_targets_in_candidates():
    items = generate(DistractorConfig(fillers=(0, 2)), seed=1)
    assert len({i.id for i in items}) == len(items)
    for i in items:
        assert i.target in i.candidates
        f = i.features
        assert f["target"] == i.target
        assert i.target not in f["attractors"] and f["background"] not in f["attractors"]
        if f["setting"] == "multi" and f["attractors"]:
            assert f["entity"] not in f["others"]
            assert len(set(f["others"])) == len(f["others"])


@pytest.mark.parametrize(
    ("story", "text"),
    [
        (
            base_story("capitals", 0, "Sebastian"),
            "Sebastian lives in France. The capital of Sebastian's country is",
        ),
        (base_story("professions", 0, "Jake"), "Jake works as a florist. For his job, Jake sells"),
        (
            base_story("capitals", 1, "Emma").with_(
                attractor_type="B", attractors=("Indonesia", "China")
            ),
            "Emma lives in Chile and has visited Indonesia and China. "
            "The capital of Emma's country is",
        ),
        (
            base_story("capitals", 1, "Daniel").with_(
                setting="multi",
                attractor_type="T",
                attractors=("Beijing",),
                others=("Jack",),
                position="between",
            ),
            "Daniel knows that Jack lives in Beijing, and he himself lives in Chile. "
            "The capital of Daniel's country is",
        ),
        (
            base_story("capitals", 0, "Sebastian").with_(
                setting="multi",
                attractor_type="B",
                attractors=("Indonesia", "Chile"),
                others=("Rowan", "Daniel"),
            ),
            "Sebastian lives in France, Rowan lives in Indonesia, and Daniel lives in Chile. "
            "The capital of Sebastian's country is",
        ),
        (
            base_story("sports", 2, "Zoe").with_(
                setting="multi",
                attractor_type="unrelated",
                attractors=("drives a car",),
                others=("Jack",),
                position="later",
                filler=("has a sister",),
            ),
            "Jack drives a car, and Zoe, who has a sister, plays soccer. "
            "In the sport that Zoe plays, the aim is to score a",
        ),
    ],
)
def test_rendering(story: Story, text: str):
    assert story.render_context() == text
    assert Story.from_features(story.to_features()) == story


def test_bad_config_is_rejected():
    configure = GENERATORS.get("distractors").configure
    with pytest.raises(UsageError, match="option positions='middle': choose from 'after'"):
        configure({"positions": "after,middle"})
    with pytest.raises(UsageError, match="option counts=4: choose from 1, 2, 3$"):
        configure({"counts": "4"})
    with pytest.raises(UsageError, match="option counts is empty: choose one or more of 1, 2"):
        configure({"counts": ""})
    with pytest.raises(UsageError, match="option settings='multi': given more than once"):
        configure({"settings": "multi,single,multi"})


@pytest.mark.parametrize(
    "config", [DistractorConfig(), DistractorConfig(fillers=(0, 2), item_sets=("capitals",))]
)
def test_the_plan_builds_exactly_the_generated_variants(config):
    full = generate(config, 5)
    bases, planned = plan(config, 5)
    built = build(planned, 5)
    assert bases + built == full
    suite = get_suite("distractors")
    for variant, item in zip(planned, built, strict=True):
        assert variant.id == item.id
        assert variant.cell == suite.stratum(Pair(item, item, "x", ANSWER_UNCHANGED))


@pytest.mark.parametrize(("seed", "limit"), [(0, 1), (3, 300), (3, 20000)])
def test_sampling_before_building_draws_the_same_pairs(seed, limit):
    suite = get_suite("distractors")
    drawn = suite.sampled_pairs(None, limit, seed)
    assert drawn == suite.sample(suite.pairs(None, seed), limit, seed)


def test_unrelated_attractors_name_no_candidate_word():
    """An unrelated attractor must not name a word any item could be asked for, or it is
    a related attractor in disguise (the method's control would be contaminated)."""
    from faithprobe.datasets.stories import UNRELATED
    from faithprobe.generators.distractors import DistractorConfig, base_items

    items = base_items(DistractorConfig(), seed=0)
    words = {w.lower() for item in items for c in item.candidates for w in c.split()}
    for phrase in UNRELATED:
        assert not words & set(phrase.lower().split()), phrase
