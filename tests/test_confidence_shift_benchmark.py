"""The confidence-shift suite's benchmark irregularities (the method's Discussion): answer
positions against uniform, the chosen choice against the others, word-frequency
correlations, and the shortcuts they allow, found where they are planted and absent where
they are not."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from faithprobe.atomic import json_text
from faithprobe.runner import answer_all, result_rows
from faithprobe.suite_protocol import get_suite
from faithprobe.suites.confidence_shift import benchmark_irregularity as bi
from faithprobe.suites.confidence_shift import metrics as m
from test_confidence_shift_controls import SEED, Fake, Reader

N = 90


def _file(root, planted: bool):
    """A Social IQA-shaped file. ``planted``: every right answer is answerA and the longest
    choice (four words against one); otherwise positions are balanced and lengths equal."""
    records, labels = [], []
    for i in range(N):
        right = f"go home right now{i}" if planted else f"right{i}"
        wrong = [f"alpha{i}", f"beta{i}"]
        label = 0 if planted else i % 3
        answers = wrong[:label] + [right] + wrong[label:]
        records.append({"context": f"Person{i} did thing{i}.", "question": "Why?",
                        **dict(zip(("answerA", "answerB", "answerC"), answers, strict=True))})  # fmt: skip
        labels.append(str(label + 1))
    path = root / "dev.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    (root / "dev-labels.lst").write_text("\n".join(labels) + "\n")
    return path


class First(Fake):
    """Always the first choice."""

    name = "first"

    def pick(self, r):
        return 0


def _metrics(path, *models) -> dict:
    suite = get_suite("confidence-shift", {"probes": "none"})
    pairs = suite.pairs(path, SEED)
    rows = []
    for model in models:
        rows += result_rows(suite, pairs, model, answer_all(suite, pairs, model, None))
    return json.loads(json_text(suite.metrics(pd.DataFrame(rows), SEED)))


def _known(path):
    suite = get_suite("confidence-shift")
    return {
        suite.request(p.original).context: (
            p.original.choices,
            p.original.choices[p.original.label],
        )
        for p in suite.pairs(path, SEED)
    }


def test_planted_irregularities_are_found_and_the_shortcuts_score_them(tmp_path):
    path = _file(tmp_path, planted=True)
    metrics = _metrics(path, Reader(_known(path)), First(_known(path)))
    tests = {t["of"]: t for t in metrics["benchmark_position_tests"]}
    assert set(tests) == {bi.RIGHT_ANSWERS, "reader", "first"}
    right = tests[bi.RIGHT_ANSWERS]
    assert (right["n"], right["df"]) == (N, 2) and right["p_value"] < 1e-30
    a = next(
        r for r in metrics["benchmark_positions"] if r["of"] == "reader" and r["position"] == "A"
    )
    assert (a["count"], a["share"]) == (N, 1.0)
    lengths = {
        r["of"]: r for r in metrics["benchmark_choices"] if r["feature"] == "words"
    }  # fmt: skip
    assert lengths[bi.RIGHT_ANSWERS]["difference"] == pytest.approx(3.0)
    assert lengths[bi.RIGHT_ANSWERS]["p_value"] == 0.0  # no variance: exact
    shortcuts = {r["shortcut"]: r["value"] for r in metrics["benchmark_shortcuts"]}
    assert shortcuts == {
        "the longest choice (words)": 1.0,
        "the choice sharing most words with the prompt": pytest.approx(1 / 3),  # a 3-way tie
        m.COMMONEST_POSITION: 1.0,
    }


def test_a_balanced_benchmark_shows_none_and_a_first_picker_shows_its_own(tmp_path):
    path = _file(tmp_path, planted=False)
    metrics = _metrics(path, Reader(_known(path)), First(_known(path)))
    tests = {t["of"]: t for t in metrics["benchmark_position_tests"]}
    assert tests[bi.RIGHT_ANSWERS]["statistic"] == 0 and tests[bi.RIGHT_ANSWERS]["p_value"] == 1
    assert tests["reader"]["p_value"] == 1  # it picks the right answers: balanced too
    assert tests["first"]["p_value"] < 1e-30  # its own position bias
    lengths = {r["of"]: r for r in metrics["benchmark_choices"] if r["feature"] == "words"}
    assert lengths[bi.RIGHT_ANSWERS]["difference"] == 0 and lengths["first"]["difference"] == 0
    shortcuts = {r["shortcut"]: r for r in metrics["benchmark_shortcuts"]}
    assert shortcuts[m.COMMONEST_POSITION]["value"] == pytest.approx(1 / 3)
    assert shortcuts["the longest choice (words)"]["value"] == pytest.approx(1 / 3)
    assert all(r["agnostic"] == pytest.approx(1 / 3) for r in shortcuts.values())


def test_positions_count_share_and_test_against_uniform_as_scipy_does():
    rows, test = bi.positions("x", [0, 0, 1, 2, 0, 1, 3, 0], 4)
    assert [r["count"] for r in rows] == [4, 2, 1, 1]
    assert [r["position"] for r in rows] == ["A", "B", "C", "D"]
    assert rows[0]["ci_low"] < 0.5 < rows[0]["ci_high"]
    ref = stats.chisquare([4, 2, 1, 1])
    assert (test["statistic"], test["p_value"]) == pytest.approx((ref.statistic, ref.pvalue))


def test_word_frequency_correlation_is_pearson_of_the_summed_counts():
    first = ["the cat sat", "the dog ran", "a cat ran"]
    second = ["the cat ran", "the dog sat", "a bird flew"]
    found = bi.frequency_correlation("x", "y", first, second)
    vocab = ["the", "cat", "sat", "dog", "ran", "a", "bird", "flew"]
    a = [sum(t.split().count(w) for t in first) for w in vocab]
    b = [sum(t.split().count(w) for t in second) for w in vocab]
    assert found["pearson"] == pytest.approx(stats.pearsonr(a, b).statistic)
    assert found["vocabulary"] == 8 and found["n"] == 3
    assert bi.frequency_correlation("x", "y", first, first)["pearson"] == pytest.approx(1)


def test_chosen_choices_words_are_set_against_random_picks():
    """Picks that always take the choice with its own word ("zeta") correlate less with the
    other choices than random picks do; the control's draws are seeded."""
    choices = [[f"zeta {i}", f"the cat {i}", f"the dog {i}"] for i in range(60)]
    found = bi.chosen_words_correlation("x", choices, [0] * 60, seed=0)
    assert found["pearson"] < found["random_low"] <= found["random_mean"] <= found["random_high"]
    picked = [" ".join(c[0] for c in choices)]
    others = [" ".join(x for c in choices for x in c[1:])]
    assert found["pearson"] == pytest.approx(
        bi.frequency_correlation("x", "y", picked, others)["pearson"]
    )
    assert found == bi.chosen_words_correlation("x", choices, [0] * 60, seed=0)


def test_the_chosen_choice_is_compared_paired_with_the_mean_of_the_others():
    rows = bi.chosen_vs_others(
        "x", ["Kai went home.", "Kai ate."], [["went home", "a b c", "d"], ["x", "ate", "y z"]],
        [0, 1],
    )  # fmt: skip
    words, shared = rows
    assert words["chosen"]["mean"] == pytest.approx(1.5)  # 2 and 1 words
    assert words["others"]["mean"] == pytest.approx((2 + 1.5) / 2)
    assert shared["chosen"]["mean"] == 1.0 and shared["others"]["mean"] == 0.0
    assert np.isnan(bi.chosen_vs_others("x", ["p"], [["a", "b"]], [0])[0]["p_value"])
