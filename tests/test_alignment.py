"""Saliency partitions (comparison, coreference; words to subword tokens), the saliency
t-test, instance alignment, the random-partition control and the alignment table."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from faithprobe.datasets.comparisons import comparison
from faithprobe.metrics.alignment import (
    CONTROL,
    EMPTY,
    OVERLAP,
    TOO_FEW,
    SaliencyTest,
    alignment_scores,
    instance_alignment,
    instance_alignment_rows,
    random_partition,
    saliency_test,
)
from faithprobe.metrics.intervals import paired_proportion_difference, wilson
from faithprobe.records import QAExample
from faithprobe.saliency.partitions import (
    Partition,
    Word,
    comparison_partition,
    comparison_partition_of,
    coreference_partition,
    token_partition,
)
from faithprobe.seeding import rng_for


def _words(text: str, tagged: str, values=()) -> list[Word]:
    """Hand tokenisation: ``tagged`` is "word/POS word/POS ...", the words in order of
    ``text``."""
    out, cursor = [], 0
    for item in tagged.split():
        word, pos = item.rsplit("/", 1)
        start = text.index(word, cursor)
        cursor = start + len(word)
        out.append(Word(start, cursor, word, pos, word in values))
    return out


def _texts(text: str, spans) -> list[str]:
    return [text[s:e] for s, e in spans]


Q1 = "Which film came out earlier, Red Harbor or Blue Field?"
Q1_WORDS = _words(
    Q1,
    "Which/DET film/NOUN came/VERB out/ADP earlier/ADV ,/PUNCT "
    "Red/PROPN Harbor/PROPN or/CCONJ Blue/PROPN Field/PROPN ?/PUNCT",
)
Q1_ENTITIES = [(29, 39), (43, 53)]


def test_comparison_partition_keeps_only_the_comparative_and_the_dispensable_words():
    part = comparison_partition(Q1_WORDS, (20, 27), Q1_ENTITIES)
    assert _texts(Q1, part.positive) == ["earlier"]  # not "came out earlier"
    # no entity word, verb or punctuation
    assert _texts(Q1, part.negative) == ["Which", "film", "out", "or"]


def test_comparison_partition_with_a_two_word_comparative_a_value_and_an_auxiliary():
    q = "Which was released more recently, Red Harbor in 1999 or Blue Field?"
    words = _words(
        q,
        "Which/DET was/AUX released/VERB more/ADV recently/ADV ,/PUNCT Red/PROPN Harbor/PROPN "
        "in/ADP 1999/NUM or/CCONJ Blue/PROPN Field/PROPN ?/PUNCT",
        values={"1999"},
    )
    comparative = (q.index("more"), q.index(","))
    entities = [(q.index("Red"), q.index(" in")), (q.index("Blue"), len(q) - 1)]
    part = comparison_partition(words, comparative, entities)
    assert _texts(q, part.positive) == ["more", "recently"]
    assert _texts(q, part.negative) == ["Which", "was", "in", "or"]


def test_coreference_partition():
    context = "Anna met Tom. She thanked him for the book."
    context_words = _words(
        context,
        "Anna/PROPN met/VERB Tom/PROPN ./PUNCT She/PRON thanked/VERB him/PRON for/ADP the/DET "
        "book/NOUN ./PUNCT",
    )
    question = "Who did anna thank?"
    question_words = _words(question, "Who/PRON did/AUX anna/PROPN thank/VERB")
    cluster = [(9, 12), (26, 29)]  # Tom, him
    part = coreference_partition(context_words, cluster, question_words)
    assert _texts(context, part.positive) == ["Tom", "him"]
    # "Anna" matches the question's "anna" (case-insensitive): neither; punctuation neither
    assert _texts(context, part.negative) == ["met", "She", "thanked", "for", "the", "book"]


def test_token_partition_maps_words_split_into_subwords():
    # [CLS] Which film came out ear|lier , Red Har|bor or Blue Field ? [SEP] <context>
    offsets = [None, (0, 5), (6, 10), (11, 15), (16, 19), (20, 23), (23, 27), (27, 28)]
    offsets += [(29, 32), (33, 36), (36, 39), (40, 42), (43, 47), (48, 53), (53, 54)]
    offsets += [None, None, None]  # [SEP] and context tokens (spans(0) gives None)
    words = comparison_partition(Q1_WORDS, (20, 27), Q1_ENTITIES)
    assert token_partition(words, offsets) == Partition((5, 6), (1, 2, 4, 11))
    # byte-level offsets that include the space before a word change nothing
    spaced = [None, (0, 5), (5, 10), (10, 15), (15, 19), (19, 23), (23, 27), (27, 28)]
    assert token_partition(words, spaced).positive == (5, 6)
    # a token straddling "out" and "earlier" speaks for neither
    straddling = [None, (0, 5), (6, 10), (11, 15), (16, 22), (22, 27)]
    assert token_partition(words, straddling) == Partition((5,), (1, 2))


def test_comparison_partition_of_an_example_with_spacy():
    context = "Red Harbor came out in 1999. Blue Field came out in 2004."
    example = QAExample(
        "q", context, Q1, ("Red Harbor",), answer_starts=(context.index("Red Harbor"),)
    )
    part = comparison_partition_of(comparison(example).example)
    assert _texts(Q1, part.positive) == ["earlier"]
    assert _texts(Q1, part.negative) == ["Which", "film", "out", "or"]


HIGH = [5.0, 5.2, 4.9]
LOW = [1.0, 1.1, 0.9, 1.2]


def _test(positive, negative, **kw) -> SaliencyTest:
    saliency = [*positive, *negative]
    n = len(positive)
    return saliency_test(saliency, range(n), range(n, len(saliency)), **kw)


def test_saliency_test_passes_when_the_positive_tokens_are_clearly_more_salient():
    result = _test(HIGH, LOW)
    expected = stats.ttest_ind(HIGH, LOW, equal_var=True, alternative="greater")
    assert result.passed and result.reason is None
    assert result.p_value == pytest.approx(expected.pvalue) and result.p_value < 1e-4
    assert (result.n_positive, result.n_negative) == (3, 4)
    # Student's test also tests a single positive token (Welch's could not)
    assert _test([5.0], LOW).passed


def test_saliency_test_fails_on_equal_or_lower_saliency():
    equal = _test([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert not equal.passed and equal.p_value == pytest.approx(0.5)
    assert not _test(LOW, HIGH).passed
    assert not _test([1.3], LOW).passed  # a little higher is not significant
    assert not _test(HIGH, LOW, alpha=1e-9).passed


def test_saliency_test_without_spread_compares_the_means_exactly():
    higher = _test([2.0, 2.0], [1.0, 1.0, 1.0])
    assert higher.passed and higher.statistic == math.inf and higher.p_value == 0.0
    same = _test([1.0, 1.0], [1.0, 1.0])
    assert not same.passed and same.p_value == 1.0 and math.isnan(same.statistic)


@pytest.mark.parametrize(
    ("positive", "negative", "reason"),
    [((), (0, 1, 2), EMPTY), ((0,), (), EMPTY), ((0,), (1,), TOO_FEW), ((0, 1), (1, 2), OVERLAP)],
)
def test_saliency_test_refuses_partitions_it_cannot_test(positive, negative, reason):
    result = saliency_test([9.0, 1.0, 0.0, 0.5], positive, negative)
    assert not result.passed and result.reason == reason and math.isnan(result.p_value)


@pytest.mark.parametrize("og", [True, False])
@pytest.mark.parametrize("cf", [True, False])
@pytest.mark.parametrize("passed", [True, False])
def test_instance_alignment_truth_table(og, cf, passed):
    test = SaliencyTest(0.0, 0.0 if passed else 1.0, passed, 3, 4)
    assert instance_alignment(og, cf, test) == (og and cf and passed)


def test_random_partition_is_deterministic_per_seed_and_keeps_the_sizes():
    candidates = [3, 4, 7, 8, 9, 12, 15]
    first = random_partition(rng_for(0, "q1", CONTROL), 2, candidates)
    assert first == random_partition(rng_for(0, "q1", CONTROL), 2, candidates[::-1])
    assert (len(first.positive), len(first.negative)) == (2, 5)
    assert sorted(first.positive + first.negative) == candidates
    draws = {random_partition(rng_for(0, f"q{i}", CONTROL), 2, candidates) for i in range(20)}
    assert len(draws) > 1  # other instances, other draws
    with pytest.raises(ValueError, match="cannot draw 8"):
        random_partition(rng_for(0, "q1", CONTROL), 8, candidates)


def _results() -> pd.DataFrame:
    spike = [0.0, 9.0, 1.0, 1.1, 0.9, 1.2]  # token 1 stands out
    flat = [0.0, 1.0, 1.0, 1.1, 0.9, 1.2]
    rows = [
        ("a", 1.0, 1.0, spike),  # aligned
        ("b", 1.0, 0.0, spike),  # the counterfactual is wrong
        ("c", 1.0, 1.0, flat),  # saliency test fails
        ("d", 0.0, 0.0, flat),
    ]
    return pd.DataFrame(
        [
            {
                "dataset": "squad",
                "model": "m",
                "method": "occlusion",
                "id": i,
                "og_em": og,
                "cf_em": cf,
                "saliency": s,
                "positive": [1],
                "negative": [2, 3, 4, 5],
            }
            for i, og, cf, s in rows
        ]
    )


def test_instance_alignment_rows():
    rows = instance_alignment_rows(_results(), seed=3)
    assert rows["passed"].tolist() == [True, True, False, False]
    assert rows["both_correct"].tolist() == [True, False, True, False]
    assert rows["aligned"].tolist() == [True, False, False, False]
    assert rows["saliency"].tolist() == _results()["saliency"].tolist()  # inputs kept
    # the control: the same test on a partition drawn with the instance's own generator
    for row in rows.itertuples():
        control = random_partition(rng_for(3, row.id, CONTROL), 1, [1, 2, 3, 4, 5])
        passed = saliency_test(row.saliency, control.positive, control.negative).passed
        assert row.control_passed == passed
        assert row.control_aligned == (passed and row.both_correct)
    again = instance_alignment_rows(_results().iloc[::-1], seed=3).iloc[::-1]
    assert again["control_passed"].tolist() == rows["control_passed"].tolist()


def test_alignment_scores_by_hand():
    frame = pd.DataFrame(
        {
            "dataset": ["squad"] * 5,
            "model": ["m"] * 5,
            "method": ["ig"] * 4 + ["occlusion"],
            "both_correct": [True, True, False, True, False],
            "aligned": [True, False, False, True, False],
            "control_aligned": [False, False, False, True, False],
            "passed": [True, False, True, True, True],
            "control_passed": [False, False, False, True, True],
        }
    )
    table = alignment_scores(frame).set_index("method")
    ig = table.loc["ig"]
    # the method's denominator: the 3 instances answered right on both inputs
    assert (ig["instances"], ig["n"], ig["both_correct"]) == (4, 3, 0.75)
    assert (ig["aligned"], ig["control"]) == pytest.approx((2 / 3, 1 / 3))
    assert (ig["aligned_ci_low"], ig["aligned_ci_high"]) == pytest.approx(wilson(2, 3))
    assert (ig["control_ci_low"], ig["control_ci_high"]) == pytest.approx(wilson(1, 3))
    assert (ig["excess"], ig["excess_ci_low"], ig["excess_ci_high"]) == pytest.approx(
        paired_proportion_difference([True, False, True], [False, False, True])
    )
    # significance rates: of the real partition and of the random one (the sanity check),
    # over every instance with saliency, whatever the answers
    assert (ig["significant"], ig["control_significant"]) == (0.75, 0.25)
    assert (ig["control_significant_ci_low"], ig["control_significant_ci_high"]) == (
        pytest.approx(wilson(1, 4))
    )
    # exact McNemar: 2 instances pass real only, none random only -> p = 2 * 0.5**2
    assert ig["significance_p"] == pytest.approx(0.5)
    assert ig["alignment_p"] == pytest.approx(1.0)  # 1 discordant pair: p = 1
    occ = table.loc["occlusion"]
    # nothing answered right on both: nothing can align, and no share or interval is made up
    assert (occ["instances"], occ["n"], occ["both_correct"]) == (1, 0, 0.0)
    assert np.isnan(occ["aligned"]) and np.isnan(occ["aligned_ci_low"])
    assert np.isnan(occ["excess"]) and np.isnan(occ["excess_ci_high"])
    assert occ["significant"] == 1.0
