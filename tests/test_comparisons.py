"""Comparison questions: selection, the comparative -> antonym counterfactuals (in- and
out-of-distribution), the generator and its SQuAD-JSON round trip."""

import pytest

from faithprobe.datasets.comparisons import (
    ANSWER_NOT_ENTITY,
    COMPARATIVES,
    NO_ALTERNATIVE,
    NO_COMPARATIVE,
    NOT_SPAN,
    OTHER_NOT_IN_CONTEXT,
    SEVERAL_COMPARATIVES,
    comparison,
    select_comparisons,
)
from faithprobe.datasets.qa_formats import read_qa
from faithprobe.datasets.squad import write_squad
from faithprobe.errors import UsageError
from faithprobe.expectations import ANSWER_OTHER_ENTITY
from faithprobe.generators import GENERATORS
from faithprobe.generators.comparisons import PARTS, ComparisonConfig, generate, part_of
from faithprobe.interventions import get
from faithprobe.interventions.comparative import (
    IN_DISTRIBUTION,
    NOT_IN_MAP,
    OUT_OF_DISTRIBUTION,
)
from faithprobe.records import QAExample

CONTEXT = "Ann was born in 1961 and Tom in 1975. Tom likes tea."


def _qa(question, answer="Ann", context=CONTEXT, **kw):
    start = context.find(answer)
    return QAExample("q", context, question, (answer,), answer_starts=(start,), **kw)


def test_in_distribution_keys_are_recognised_comparatives():
    assert set(IN_DISTRIBUTION) <= set(COMPARATIVES) and set(OUT_OF_DISTRIBUTION) <= set(
        COMPARATIVES
    )


@pytest.mark.parametrize("word", sorted(IN_DISTRIBUTION))
def test_antonym_flips_the_answer_for_every_map_entry(word):
    (cf,) = get("comparative_antonym").apply(_qa(f"Who came {word}, Ann or Tom?"), seed=0).examples
    assert cf.question == f"Who came {IN_DISTRIBUTION[word][0]}, Ann or Tom?"
    assert cf.answers == ("Tom",) and CONTEXT[cf.answer_starts[0] :].startswith("Tom")
    f = cf.features
    assert (f["original_comparative"], f["variant"], f["original_id"], f["expected"]) == (
        word, "CF", "q", "Tom"
    )  # fmt: skip
    assert get("comparative_antonym").expectation is ANSWER_OTHER_ENTITY


@pytest.mark.parametrize("word", sorted(OUT_OF_DISTRIBUTION))
def test_ood_paraphrases_are_drawn_per_example_and_cover_the_map(word):
    seen = set()
    for seed in range(40):
        (cf,) = (
            get("comparative_antonym_ood")
            .apply(_qa(f"Who is {word}, Ann or Tom?"), seed=seed)
            .examples
        )
        assert cf.answers == ("Tom",) and cf.features["variant"] == "CF-ood"
        s, e = cf.features["comparative_span"]
        seen.add(cf.question[s:e])
        assert cf.question == f"Who is {cf.question[s:e]}, Ann or Tom?"
        assert [cf.question[slice(*x["question_span"])] for x in cf.features["entities"]] == [
            "Ann", "Tom"
        ]  # fmt: skip
    assert seen == set(OUT_OF_DISTRIBUTION[word])


def test_capitalisation_and_came_out_earlier():
    ctx = "The film Red Harbor was released in 1994. The film Blue Field was released in 2003."
    ex = _qa("Which film came out earlier, Red Harbor or Blue Field?", "Red Harbor", ctx)
    (cf,) = get("comparative_antonym").apply(ex, seed=0).examples
    assert cf.question == "Which film came out later, Red Harbor or Blue Field?"
    assert cf.answers == ("Blue Field",) and cf.answer_starts == (ctx.index("Blue Field"),)
    (up,) = get("comparative_antonym").apply(_qa("Older: Ann or Tom?"), seed=0).examples
    assert up.question == "Younger: Ann or Tom?"
    (caps,) = get("comparative_antonym").apply(_qa("WHO IS OLDER, Ann or Tom?"), seed=0).examples
    assert caps.question == "WHO IS YOUNGER, Ann or Tom?"


@pytest.mark.parametrize(
    ("name", "question", "reason", "detail"),
    [
        ("comparative_antonym", "Who is oldest, Ann or Tom?", NOT_IN_MAP, "oldest"),
        ("comparative_antonym_ood", "Who came first, Ann or Tom?", NOT_IN_MAP, "first"),
        ("comparative_antonym", "Who is older, Ann or Bob?", OTHER_NOT_IN_CONTEXT, None),
    ],
)
def test_apply_gives_the_reason_for_a_dropped_example(name, question, reason, detail):
    outcome = get(name).apply(_qa(question), seed=0)
    assert outcome.examples == () and outcome.example is None
    assert (outcome.reason, outcome.detail) == (reason, detail)


def test_selection_accepts_and_rejects_with_reasons():
    good = _qa("Did Ann or Tom come first?")
    other_order = _qa("Which person is younger, Ann or Tom?", "Tom")
    rejects = {
        NOT_SPAN: _qa("Who is older, Ann or Tom?", answer_type="free"),
        NO_COMPARATIVE: _qa("Who likes tea, Ann or Tom?", "Tom"),
        SEVERAL_COMPARATIVES: _qa("Who is older and came later, Ann or Tom?"),
        NO_ALTERNATIVE: _qa("Who is older than Tom?"),
        ANSWER_NOT_ENTITY: _qa("Who is older, Ann or Tom?", "1961"),
        OTHER_NOT_IN_CONTEXT: _qa("Who is older, Ann or Bob?"),
    }
    selected, rejected = select_comparisons([good, other_order, *rejects.values()])
    assert [e.question for e in selected] == [good.question, other_order.question]
    assert rejected == {reason: 1 for reason in rejects}
    f = selected[0].features
    assert f["comparative"] == "first" and f["answer_entity"] == 0
    assert [(x["name"], x["context_span"]) for x in f["entities"]] == [
        ("Ann", (0, 3)),
        ("Tom", (25, 28)),
    ]
    assert selected[1].features["answer_entity"] == 1


def test_generator_is_seeded_sized_and_spans_are_right():
    config = ComparisonConfig(pairs_per_domain=3)
    items = generate(config, 1)
    assert items == generate(config, 1) and items != generate(config, 2)
    assert len({i.id for i in items}) == len(items) == 2 * 3 * 46
    for i in items:
        (start,) = i.answer_starts
        assert i.context[start : start + len(i.answers[0])] == i.answers[0]
        s, e = i.features["comparative_span"]
        assert i.question[s:e].lower() == i.features["comparative"]
        for ent in i.features["entities"]:
            cs, ce = ent["context_span"]
            assert i.context[cs:ce] == ent["name"]
            assert any(rs <= cs and ce <= re for rs, re in i.rationale), i.id
            assert str(i.features["values"][ent["name"]]) in " ".join(
                i.context[rs:re] for rs, re in i.rationale
            )
        assert i.features["source"] == "generated-comparison"
    by = {(i.id.rsplit("-", 1)[0], i.features["condition"]): i for i in items}
    for (base, cond), item in by.items():
        if cond == "paragraph":
            short = by[(base, "supporting")]
            assert len(item.context) > len(short.context) and item.question == short.question
    assert len(generate(ComparisonConfig(), 0)) >= 2000


def test_squad_round_trip_rederives_the_features(tmp_path):
    items = generate(ComparisonConfig(pairs_per_domain=1, domains=("films", "people")), 0)
    path = tmp_path / "cmp.json"
    assert write_squad(items, path) == len(items)
    back = read_qa(path, rationale="answer")
    by_id = {b.id: b for b in back}
    assert sorted(by_id) == sorted(f"squad-{i.id}" for i in items)
    for item in items:
        b = by_id[f"squad-{item.id}"]
        assert (b.context, b.question, b.answers, b.answer_starts) == (
            item.context, item.question, item.answers, item.answer_starts
        )  # fmt: skip
        again = comparison(b).example.features
        for key in ("comparative", "comparative_span", "entities", "answer_entity"):
            assert again[key] == item.features[key]


def test_train_and_test_parts_never_compare_the_same_two_entities(tmp_path):
    test = generate(ComparisonConfig(pairs_per_domain=10), 0)
    train = generate(ComparisonConfig(pairs_per_domain=10, part="train"), 0)
    assert len(train) == len(test) and not {i.id for i in train} & {i.id for i in test}

    def pairs(items, part):
        names = {frozenset(i.features["values"]) for i in items}
        assert all(part_of(*pair) == part for pair in names)
        return names

    assert pairs(train, "train").isdisjoint(pairs(test, "test"))
    shares = [part_of(a, b) for a in "ABCDEFGHIJ" * 4 for b in "KLMNOPQRST"]
    assert 0.15 < shares.count("train") / len(shares) < 0.35 and set(shares) == set(PARTS)
    # a pair's items form one document, so a document split keeps them on one side
    titles = {}
    for i in train:
        titles.setdefault(i.features["title"], set()).add(frozenset(i.features["values"]))
    assert len(titles) == 5 * 10 and all(len(v) == 1 for v in titles.values())
    path = tmp_path / "train.json"
    write_squad(train, path)
    assert {b.features["title"] for b in read_qa(path)} == set(titles)
    with pytest.raises(UsageError, match="option part='dev': choose from 'test', 'train'"):
        GENERATORS.get("comparisons").configure({"part": "dev"})
