"""The confidence-shift suite's instances that keep their confidence (our view): planted ones
are found, per probe, and the features that set them apart are the ones planted."""

import json

import numpy as np
import pandas as pd
import pytest

from faithprobe.atomic import json_text
from faithprobe.datasets.multiple_choice import read_socialiqa
from faithprobe.datasets.socialiqa_questions import question_kind
from faithprobe.runner import answer_all, result_rows
from faithprobe.suite_protocol import get_suite
from faithprobe.suites.confidence_shift import kept_confidence as kc
from faithprobe.suites.confidence_shift import metrics as m
from test_confidence_shift_controls import SEED, Reader

N_INSTANCES = 60
PLANTED = range(0, N_INSTANCES, 4)  # every fourth instance: a "why" question, a long answer


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """A Social IQA-shaped file whose planted instances ask "why" and have long right
    answers; returns the file, the suite's instances and the planted instances' ids."""
    root = tmp_path_factory.mktemp("siqa-kept")
    rng = np.random.default_rng(3)
    records, labels = [], []
    for i in range(N_INSTANCES):
        question = (
            f"Why did Person{i} do this?" if i in PLANTED else f"How would you describe Person{i}?"
        )
        # planted right answers have 8 or 9 words, the others 1 or 2
        right = f"to get the thing number {i} done {'at last' if i % 8 else 'now'}"
        right = right if i in PLANTED else f"kind{i}{' and nice' * (i % 2)}"
        answers = [f"beta{i}", f"gamma{i}"]
        label = int(rng.integers(3))
        answers.insert(label, right)
        records.append({"context": f"Person{i} did thing{i}.", "question": question,
                        **dict(zip(("answerA", "answerB", "answerC"), answers, strict=True))})  # fmt: skip
        labels.append(str(label + 1))
    path = root / "dev.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    (root / "dev-labels.lst").write_text("\n".join(labels) + "\n")
    examples = read_socialiqa(path)
    return path, examples, {examples[i].id for i in PLANTED}


class Stubborn(Reader):
    """A reader that, on the planted instances, picks the right answer whenever their own
    choices are offered, question or not: its confidence does not drop when the question
    goes. Once the right answer is gone it is flat, as the reader is."""

    name = "stubborn"

    def __init__(self, known, planted_choices: dict[tuple[str, ...], str]) -> None:
        super().__init__(known)
        self.planted_choices = planted_choices

    def pick(self, r):
        right = self.planted_choices.get(tuple(r.candidates))
        return r.candidates.index(right) if right is not None else super().pick(r)


def _metrics(model, path) -> dict:
    suite = get_suite("confidence-shift", {"trials": "2"})
    pairs = suite.pairs(path, SEED)
    rows = result_rows(suite, pairs, model, answer_all(suite, pairs, model, None))
    return json.loads(json_text(suite.metrics(pd.DataFrame(rows), SEED)))


def test_planted_instances_keeping_their_confidence_are_found_and_what_sets_them_apart(planted):
    path, examples, planted_ids = planted
    suite = get_suite("confidence-shift")
    known = {suite.request(e).context: (e.choices, e.choices[e.label]) for e in examples}
    stubborn = Stubborn(known, {e.choices: e.choices[e.label] for e in examples
                                if e.id in planted_ids})  # fmt: skip
    metrics = _metrics(stubborn, path)
    summary = {r["probe"]: r for r in metrics["kept_confidence"]}
    assert set(summary) == {"no_question", "wrong_question", "no_right_answer"}
    for probe in ("no_question", "wrong_question"):
        s = summary[probe]
        assert (s["kept"], s["n_instances"]) == (len(planted_ids), N_INSTANCES)
        assert set(s["kept_ids"]) == planted_ids
        assert s["ci_low"] < len(planted_ids) / N_INSTANCES < s["ci_high"]
        assert s["rose"] == 0 and s["kept_mean_change"] == pytest.approx(0, abs=1e-9)
        assert s["categories"]["p_holm"] < 0.05
        features = {
            r["feature"]: r for r in metrics["kept_confidence_features"] if r["probe"] == probe
        }
        answer = features["answer_words"]
        assert 5 < answer["difference"] < 8
        assert answer["p_holm"] < 0.05 and answer["ci_low"] > 0
        why = features[kc.CATEGORY_PREFIX + "intent"]
        assert (why["kept_mean"], why["dropped_mean"]) == (1.0, 0.0)
        # every instance is answered right and 0.95 sure: these features cannot tell
        assert features["originally_correct"]["difference"] == 0
        assert features["original_confidence"]["p_value"] == 1.0
    # with the right answer gone every instance goes flat: none kept, nothing to test
    nra = summary["no_right_answer"]
    assert nra["kept"] == 0 and nra["value"] == 0 and nra["categories"]["p_value"] is None
    assert all(
        r["p_value"] is None for r in metrics["kept_confidence_features"]
        if r["probe"] == "no_right_answer"
    )  # fmt: skip


def test_the_reader_keeps_its_confidence_nowhere(planted):
    path, examples, _ = planted
    suite = get_suite("confidence-shift")
    reader = Reader({suite.request(e).context: (e.choices, e.choices[e.label]) for e in examples})
    assert [r["kept"] for r in _metrics(reader, path)["kept_confidence"]] == [0, 0, 0]


def _originals(maxprob, prompts, answers, categories=None):
    n = len(maxprob)
    frame = pd.DataFrame(
        {
            "original_maxprob": maxprob,
            "original_credit": [1.0] * n,
            "original_prompt": prompts,
            "original_choices": [[a, "x", "y"] for a in answers],
            "label": [0] * n,
        },
        index=[f"i{i}" for i in range(n)],
    )
    if categories is not None:
        frame["category"] = categories
    return frame


def test_kept_means_not_lower_rose_means_higher_and_overlap_counts_answer_words():
    orig = _originals([0.6, 0.6, 0.6, 0.6], ["Kai ran home.", "a b", "a b", "a b"],
                      ["ran home fast", "c", "c", "c"])  # fmt: skip
    before = orig["original_maxprob"]
    after = pd.Series([0.6, 0.7, 0.5, 0.6 - 1e-12], index=orig.index)
    summary, rows = kc.kept_confidence(orig, before, after)
    assert (summary["kept"], summary["rose"]) == (3, 1)
    assert summary["mean_change"] == pytest.approx((0.1 - 0.1) / 4)
    features = kc.instance_features(orig)
    assert features["answer_prompt_overlap"].tolist() == pytest.approx([2 / 3, 0, 0, 0])
    assert features["answer_words"].tolist() == [3, 1, 1, 1]
    assert "categories" not in summary  # the data names no category
    assert [r["feature"] for r in rows] == list(kc.FEATURES)


def test_rare_categories_are_pooled_and_one_category_is_none():
    many = pd.Series(["a"] * 12 + ["b"] * 10 + ["c"] * 3 + [None])
    assert many.pipe(kc.pooled_categories).value_counts().to_dict() == {"a": 12, "b": 10,
                                                                         "other": 3}  # fmt: skip
    assert kc.pooled_categories(pd.Series(["a"] * 12 + ["c"] * 3)) is not None
    assert kc.pooled_categories(pd.Series(["a"] * 12)) is None
    assert kc.pooled_categories(pd.Series([None] * 4)) is None


def test_welch_matches_scipy_is_nan_without_two_per_group_and_exact_for_constants():
    from scipy import stats

    a, b = np.array([1.0, 2.0, 4.0, 7.0]), np.array([0.0, 1.0, 1.0])
    row = kc.welch(a, b)
    ref = stats.ttest_ind(a, b, equal_var=False)
    assert row["p_value"] == pytest.approx(ref.pvalue)
    assert row["difference"] == pytest.approx(3.5 - 2 / 3)
    assert row["ci_low"] < row["difference"] < row["ci_high"]
    assert np.isnan(kc.welch(a, np.array([1.0]))["p_value"])
    constants = kc.welch(np.array([1.0, 1.0]), np.array([0.0, 0.0]))
    assert (constants["p_value"], constants["ci_low"], constants["ci_high"]) == (0.0, 1.0, 1.0)
    assert kc.welch(np.array([1.0, 1.0]), np.array([1.0, 1.0]))["p_value"] == 1.0


def test_the_kept_confidence_records_cover_every_subject_and_probe():
    rows = []
    for subject in ("s", "t"):
        for probe in ("no_question", "wrong_question"):
            for i in range(4):
                rows.append({"subject": subject, "probe": probe, "original_id": f"i{i}",
                             "original_maxprob": 0.5, "maxprob": 0.4 + 0.1 * (i % 2),
                             "original_credit": 1.0, "original_prompt": "p q",
                             "original_choices": ["a", "b"], "label": 0})  # fmt: skip
    summaries, features = m.kept_confidence(pd.DataFrame(rows))
    assert [(r["subject"], r["probe"], r["kept"]) for r in summaries] == [
        ("s", "no_question", 2), ("s", "wrong_question", 2),
        ("t", "no_question", 2), ("t", "wrong_question", 2),
    ]  # fmt: skip
    assert len(features) == 4 * len(kc.FEATURES)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What will Kai want to do next?", "want"),
        ("How would others feel as a result?", "reaction"),
        ("How would you describe Robin?", "attribute"),
        ("Why did Sasha do this?", "intent"),
        ("What does Jan need to do before this?", "need"),
        ("What will happen to Others?", "effect"),
        ("What did Skylar do?", "other"),
    ],
)
def test_social_iqa_questions_are_read_as_their_kind(question, kind):
    assert question_kind(question) == kind


def test_social_iqa_examples_carry_their_question_kind(planted):
    _, examples, planted_ids = planted
    kinds = {e.id: e.features["category"] for e in examples}
    assert {kinds[i] for i in planted_ids} == {"intent"}
    assert set(kinds.values()) == {"intent", "attribute"}
