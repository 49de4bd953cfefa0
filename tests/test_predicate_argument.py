from collections import Counter, defaultdict

import pytest

from faithprobe.errors import UsageError
from faithprobe.generators.predicate_argument import (
    COLOURS,
    FORMS,
    SCHEMAS,
    PredicateArgumentConfig,
    colour_pairs,
    generate,
    question,
    stories,
)


@pytest.fixture(scope="module")
def examples():
    return generate()


def test_exact_counts(examples):
    assert len(stories()) == 130
    assert Counter(s.schema.name for s in stories()) == {s.name: 26 for s in SCHEMAS}
    cells = Counter((e.features["variant"], e.features["form"]) for e in examples)
    for form in FORMS:
        for variant in ("original", "space", "newline"):
            assert cells[variant, form] == 520
        assert cells["negated", form] == 390
    assert len(examples) == 3 * (3 * 520 + 390) == 5850
    assert len({e.id for e in examples}) == len(examples)


def test_two_yes_two_no_per_story_and_distinct_colours(examples):
    golds = defaultdict(list)
    for e in examples:
        f = e.features
        assert e.answers == (f["gold"],) and e.answer_type == f["gold"]
        assert f["c1"] != f["c2"] and {f["c1"], f["c2"]} <= set(COLOURS)
        golds[f["story_id"], f["variant"], f["form"]].append(f["gold"])
    for (_, variant, _), g in golds.items():
        want = {"yes": 1, "no": 2} if variant == "negated" else {"yes": 2, "no": 2}
        assert Counter(g) == want
    pairs = Counter((s.schema.name, s.c1, s.c2) for s in stories())
    assert max(pairs.values()) == 1


def test_car_story_questions_and_forms():
    story = next(s for s in stories() if s.schema.name == "car_house")
    c1, c2 = story.c1, story.c2
    got = [(o, c, g) for _, o, c, g in story.questions("original")]
    assert got == [("car", c1, "yes"), ("house", c2, "yes"), ("car", c2, "no"), ("house", c1, "no")]
    assert question("car", "blue", "original") == "Was the car blue?"
    assert question("car", "blue", "paraphrase") == "Was there a blue car?"
    assert question("car", "blue", "control") == "Was the a blue car?"
    assert question("house", "orange", "paraphrase") == "Was there an orange house?"
    with pytest.raises(UsageError, match="question form"):
        question("car", "blue", "passive")


def test_variants_texts(examples):
    by_id = {e.id: e for e in examples}
    base = "pa/car_house/{}/{}/original/car-{}"
    story = next(s for s in stories() if s.schema.name == "car_house")
    pair = f"{story.c1}-{story.c2}"
    text = by_id[base.format(pair, "original", story.c1)].context
    assert text == f"The {story.c1} car was standing in front of a {story.c2} house."
    assert by_id[base.format(pair, "space", story.c1)].context == text + " "
    assert by_id[base.format(pair, "newline", story.c1)].context == text + "\n"
    negated = by_id[base.format(pair, "negated", story.c1)].context
    assert (
        negated == f"The {story.c1} car was standing in front of a house that was not {story.c2}."
    )
    flipped = [e for e in examples if e.features["flipped"]]
    assert len(flipped) == 130 * 3
    assert all(e.features["variant"] == "negated" and e.answers == ("no",) for e in flipped)


def test_schemas_render_with_articles():
    rendered = {s.name: s.render("orange", "blue") for s in SCHEMAS}
    assert rendered == {
        "car_house": "The orange car was standing in front of a blue house.",
        "ball_bat": "They played with an orange ball and blue bat.",
        "shirt_jacket": "The man was wearing an orange shirt and a blue jacket.",
        "window_door": "The house had an orange window and a blue door.",
        "glass_table": "An orange glass was placed on a blue table.",
    }


def test_determinism_and_seed(examples):
    again = generate()
    assert [(e.id, e.context, e.question, e.answers) for e in again] == [
        (e.id, e.context, e.question, e.answers) for e in examples
    ]
    assert colour_pairs("car_house", seed=0) == colour_pairs("car_house", seed=0)
    assert colour_pairs("car_house", seed=1) != colour_pairs("car_house", seed=0)


def test_config_options():
    config = PredicateArgumentConfig(
        forms=("paraphrase",), variants=("original",), schemas=("ball_bat",)
    )
    items = generate(config)
    assert len(items) == 26 * 4
    assert {e.features["form"] for e in items} == {"paraphrase"}
    with pytest.raises(UsageError, match="variants"):
        PredicateArgumentConfig(variants=("uppercase",))
    with pytest.raises(UsageError, match="stories_per_schema"):
        generate(PredicateArgumentConfig(stories_per_schema=111))


def test_the_train_part_uses_other_colours_and_leaves_the_test_part_as_it_was():
    from faithprobe.generators.predicate_argument import TRAIN_COLOURS

    assert not set(TRAIN_COLOURS) & set(COLOURS) and len(set(TRAIN_COLOURS)) == 11
    train = generate(PredicateArgumentConfig(part="train"))
    assert len(train) == 5850
    for e in train:
        assert {e.features["c1"], e.features["c2"]} <= set(TRAIN_COLOURS)
    # the default part is "test", drawn as before the parts existed
    assert colour_pairs("car_house", 3) == colour_pairs("car_house", 3, part="test")
    assert generate(PredicateArgumentConfig(part="test"), 2) == generate(seed=2)
    assert colour_pairs("car_house", 3, part="train") != colour_pairs("car_house", 3)
    with pytest.raises(UsageError, match="part"):
        PredicateArgumentConfig(part="dev")
