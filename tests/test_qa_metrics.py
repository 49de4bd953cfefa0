import pandas as pd
import pytest

from faithprobe.metrics.intervals import wilson
from faithprobe.metrics.qa_scores import (
    contains_answer,
    coqa_turn_score,
    exact_match,
    f1,
    formatting_flip_rate,
    negation_accuracy,
    predicate_argument_accuracy,
    qa_scores,
    reply_kind_shares,
    subject_differences,
)
from faithprobe.qa.answers import extract_answer, is_unknown, normalize_answer, yes_no_label

# ---- answer scoring, as the official SQuAD v1.1 / CoQA scripts do it ---------------------


def test_normalize_answer():
    assert normalize_answer("  The Eiffel   Tower! ") == "eiffel tower"
    assert normalize_answer("U.S.") == "us"
    assert normalize_answer("an apple, a pear") == "apple pear"
    # punctuation goes first, so "state-of-the-art" is one word and keeps its "the"
    assert normalize_answer("state-of-the-art") == "stateoftheart"
    assert normalize_answer("theatre") == "theatre"  # articles only as whole words


def test_exact_match():
    assert exact_match("The Eiffel Tower!", ["eiffel tower"]) == 1.0
    assert exact_match("an apple", "apple") == 1.0
    assert exact_match("U.S.", ["US"]) == 1.0
    assert exact_match("state-of-the-art", ["state of the art"]) == 0.0
    assert exact_match("Denver", ["Denver Broncos", "denver."]) == 1.0  # max over golds
    assert exact_match("", []) == 1.0  # no golds: one empty gold (SQuAD 2.0)


def test_f1_known_values():
    # 3 shared tokens; precision 3/4, recall 3/3
    assert f1("the cat sat on the mat", ["cat on mat"]) == pytest.approx(6 / 7)
    # max over golds: vs "broncos" 2/3, vs "denver broncos win" 0.8
    assert f1("Denver Broncos", ["Broncos", "Denver Broncos win"]) == pytest.approx(0.8)
    # bags of tokens: cat x1 and dog x1 in common; P = R = 2/3
    assert f1("cat cat dog", ["cat dog dog"]) == pytest.approx(2 / 3)
    assert f1("red", ["blue"]) == 0.0
    assert f1("The Eiffel Tower.", "eiffel tower") == 1.0


def test_f1_empty_strings_like_coqa():
    assert f1("", [""]) == 1.0
    assert f1("the", ["an"]) == 1.0  # both empty after normalisation
    assert f1("", ["Paris"]) == 0.0
    assert f1("Paris", [""]) == 0.0


def test_coqa_turn_score_leave_one_out():
    got = coqa_turn_score("red", ["red", "blue", "red car"])
    # without "red": max(0, 2/3); without "blue": 1; without "red car": 1
    assert got["em"] == pytest.approx(2 / 3)
    assert got["f1"] == pytest.approx((2 / 3 + 1 + 1) / 3)
    assert coqa_turn_score("red car", ["red"]) == {"em": 0.0, "f1": pytest.approx(2 / 3)}


@pytest.mark.parametrize(
    "text",
    [
        "unknown",
        "Unknown.",
        "I don't know.",
        "i do not know",
        "No answer",
        "Cannot be determined from the passage.",
        "It is not mentioned in the text.",
        "The answer is unknown",
        "unanswerable",
        "",
        "   ",
        None,
    ],
)
def test_is_unknown_phrasings(text):
    assert is_unknown(text)


@pytest.mark.parametrize("text", ["no", "yes", "blue", "None of them were red", "The car"])
def test_is_unknown_rejects_answers(text):
    assert not is_unknown(text)


def test_yes_no_label():
    assert yes_no_label("Yes.") == "yes"
    assert yes_no_label("no, it was red") == "no"
    assert yes_no_label("No answer") is None
    assert yes_no_label("maybe") is None
    assert yes_no_label("") is None


# ---- tables on small frames with hand-computed values ------------------------------------


def _get(table, **keys):
    rows = table
    for k, v in keys.items():
        rows = rows[rows[k] == v]
    assert len(rows) == 1, keys
    return rows.iloc[0]


def qa_frame():
    return pd.DataFrame(
        {
            "subject": ["m"] * 5,
            "variant": ["OS", "OS", "OS", "TS-R", "TS-R"],
            "prediction": ["Denver Broncos", "Broncos", "unknown", "I don't know", "Paris"],
            "answers": [["Denver Broncos"], ["Denver Broncos"], ["Paris"], ["x"], ["unknown"]],
            "predicted_unknown": [None, None, None, None, True],
            "article": ["a1", "a1", "a2", "a1", "a2"],
        }
    )


def test_qa_scores_hand_computed():
    table = qa_scores(qa_frame())
    assert list(table["variant"].unique()) == ["OS", "TS-R"]  # order of the frame
    em = _get(table, variant="OS", metric="em")
    assert em["value"] == pytest.approx(1 / 3) and em["n"] == 3 and em["n_clusters"] == 3
    assert em["ci_low"] <= em["value"] <= em["ci_high"]
    assert _get(table, variant="OS", metric="f1")["value"] == pytest.approx((1 + 2 / 3 + 0) / 3)
    unk = _get(table, variant="OS", metric="unk")
    assert unk["value"] == pytest.approx(1 / 3)
    assert (unk["ci_low"], unk["ci_high"]) == pytest.approx(wilson(1, 3))
    # TS-R: both abstain (one by phrasing, one by flag); the flagged one's gold is "unknown"
    assert _get(table, variant="TS-R", metric="unk")["value"] == 1.0
    assert _get(table, variant="TS-R", metric="em")["value"] == pytest.approx(0.5)
    assert _get(table, variant="TS-R", metric="f1")["value"] == pytest.approx(0.5)


def test_qa_scores_contains_and_empty():
    frame = pd.DataFrame(
        {
            "subject": ["m"] * 4,
            "variant": ["OS"] * 4,
            "prediction": ["The finding of gold caused a gold rush", "gold", "", "unknown"],
            "answers": [["gold rush"], ["gold rush"], ["gold rush"], ["gold rush"]],
            "predicted_unknown": [False, False, False, None],
        }
    )
    table = qa_scores(frame)
    assert _get(table, metric="contains")["value"] == pytest.approx(1 / 4)  # not "gold"
    assert _get(table, metric="em")["value"] == 0
    assert _get(table, metric="empty")["value"] == pytest.approx(1 / 4)  # "" flagged known
    assert _get(table, metric="unk")["value"] == pytest.approx(1 / 4)


@pytest.mark.parametrize(
    "reply, answer",
    [
        (" The answer is 1983.", "1983"),
        ('The answer is "electric power"', "electric power"),
        ("A: Denver Broncos", "Denver Broncos"),
        ("A. Electricity", "Electricity"),
        ("A.D. 1200", "A.D. 1200"),
        ("Answer: The answer to the question is: gilt bronze.", "gilt bronze"),
        ("\nA:", ""),
        ("A:", ""),
        (
            "The Gloucester Candlestick is made from gilt bronze.",
            "The Gloucester Candlestick is made from gilt bronze",
        ),
        ("U.S.", "U.S"),
        ("Paris\nQ: next", "Paris"),
        ("\u201cIt\u2019s the Great Pumpkin\u201d.", "It\u2019s the Great Pumpkin"),
        ("answer", "answer"),
    ],
)
def test_extract_answer(reply, answer):
    assert extract_answer(reply) == answer


def test_contains_answer():
    assert contains_answer("It was the Denver Broncos.", ["Broncos", "x"]) == 1.0
    assert contains_answer("in 2015", "2") == 0.0  # whole tokens only
    assert contains_answer("", "") == 1.0 and contains_answer("x", "") == 0.0


def test_qa_scores_clustered():
    table = qa_scores(qa_frame(), cluster="article")
    em = _get(table, variant="OS", metric="em")
    assert em["value"] == pytest.approx(1 / 3) and em["n"] == 3 and em["n_clusters"] == 2
    assert _get(table, variant="OS", metric="unk")["n_clusters"] == 2


def test_negation_accuracy_hand_computed():
    rows = []
    # item: (original gold, prediction), (modified gold, prediction)
    items = {
        "i1": (("yes", "Yes."), ("no", "no")),  # both right
        "i2": (("yes", "yes"), ("no", "yes")),  # original only
        "i3": (("no", "yes"), ("yes", "yes")),  # modified only
        "i4": (("no", "No"), ("yes", "yes, it was")),  # both right
    }
    for item, sides in items.items():
        for variant, (gold, pred) in zip(("original", "negated"), sides, strict=True):
            rows.append(("m", item, variant, pred, [gold]))
    rows.append(("m", "i5", "original", "yes", ["yes"]))  # no partner: left out
    frame = pd.DataFrame(
        rows, columns=["subject", "original_id", "variant", "prediction", "answers"]
    )
    table = negation_accuracy(frame)
    want = {"org_acc": (3, "Org-Acc"), "mod_acc": (3, "Mod-Acc"), "comb_acc": (2, "Comb-Acc"),
            "org_no": (1, "no% Org"), "mod_no": (1, "no% Mod")}  # fmt: skip
    for metric, (k, label) in want.items():
        row = _get(table, metric=metric)
        assert row["label"] == label and row["n"] == 4 and row["n_unpaired"] == 1
        assert row["value"] == pytest.approx(k / 4)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(wilson(k, 4))


def test_generated_replies_count_only_yes_or_no_as_answers():
    """A chat model's hedge "No, not necessarily", abstention and refusal are neither yes nor
    no: wrong on both sides and never counted as "no"."""
    rows = [  # item, variant, gold, prediction as read, reply kind
        ("i1", "original", "yes", "yes", "yes"),
        ("i1", "negated", "no", "No, not necessarily", "hedge"),
        ("i2", "original", "no", "no", "no"),
        ("i2", "negated", "yes", "The story does not say", "abstention"),
        ("i3", "original", "yes", "I cannot answer that", "refusal"),
        ("i3", "negated", "no", "no", "no"),
    ]
    frame = pd.DataFrame(
        [("m", i, v, p, [g], k, k == "abstention") for i, v, g, p, k in rows],
        columns=["subject", "original_id", "variant", "prediction", "answers", "reply_kind",
                 "predicted_unknown"],
    )  # fmt: skip
    table = negation_accuracy(frame)
    want = {"org_acc": 2, "mod_acc": 1, "comb_acc": 0, "org_no": 1, "mod_no": 1}
    for metric, k in want.items():
        assert _get(table, metric=metric)["value"] == pytest.approx(k / 3), metric
    # without the reply kinds the hedge would have been read as a "no"
    plain = negation_accuracy(frame.drop(columns="reply_kind"))
    assert _get(plain, metric="mod_no")["value"] == pytest.approx(2 / 3)


def test_reply_kind_shares_hand_computed():
    kinds = ["yes", "no", "no", "hedge", "abstention", "answer", "abstention"]
    frame = pd.DataFrame(
        {
            "subject": ["m"] * 7,
            "variant": ["OS"] * 5 + ["TS-R"] * 2,
            "yes_no": [True] * 5 + [False] * 2,
            "reply_kind": kinds,
            "story": ["s1", "s1", "s2", "s2", "s3", "s1", "s2"],
        }
    )
    frame.loc[7] = ["m", "OS", True, None, "s3"]  # no reply (a dropped pair): left out
    table = reply_kind_shares(frame, ["variant"])
    os_ = table[table["variant"] == "OS"]
    assert list(os_["kind"]) == ["yes", "no", "abstention", "hedge", "refusal", "other", "empty"]
    assert list(os_["count"]) == [1, 2, 1, 1, 0, 0, 0] and set(os_["n"]) == {5}
    no = _get(table, variant="OS", kind="no")
    assert no["value"] == pytest.approx(2 / 5)
    assert (no["ci_low"], no["ci_high"]) == pytest.approx(wilson(2, 5))
    ts_r = table[table["variant"] == "TS-R"]
    assert list(ts_r["kind"]) == ["answer", "abstention", "hedge", "refusal", "empty"]
    assert list(ts_r["count"]) == [1, 1, 0, 0, 0]
    clustered = reply_kind_shares(frame, ["variant"], cluster="story", seed=1)
    assert _get(clustered, variant="OS", kind="no")["n_clusters"] == 3


def probe_frame():
    golds = ["yes", "yes", "no", "no"]
    answers = {
        ("st1", "original", "original"): ["yes", "yes", "yes", "no"],
        ("st1", "original", "control"): ["yes", "yes", "yes", "yes"],
        ("st1", "space", "original"): ["yes", "yes", "no", "no"],
        ("st1", "newline", "original"): ["yes", "yes", "yes", "I don't know"],
        ("st2", "original", "original"): ["no", "no", "no", "no"],
        ("st2", "space", "original"): ["no", "no", "no", "no"],
    }
    rows = []
    for (story, variant, form), preds in answers.items():
        for q, (gold, pred) in enumerate(zip(golds, preds, strict=True)):
            rows.append(("m", story, f"{story}/q{q}", variant, form, pred, [gold]))
    columns = ["subject", "story_id", "original_id", "variant", "form", "prediction", "answers"]
    return pd.DataFrame(rows, columns=columns)


def test_predicate_argument_accuracy_hand_computed():
    frame = probe_frame()
    frame = frame[frame["story_id"] == "st1"]
    table = predicate_argument_accuracy(frame, cluster=None)
    org = _get(table, variant="original", form="original", metric="accuracy")
    assert org["label"] == "Org-Acc" and org["value"] == pytest.approx(3 / 4) and org["n"] == 4
    assert (org["ci_low"], org["ci_high"]) == pytest.approx(wilson(3, 4))
    assert _get(table, variant="original", form="original", metric="share_no")["value"] == 0.25
    control = _get(table, variant="original", form="control", metric="accuracy")
    assert control["label"] == "New-Acc" and control["value"] == 0.5
    assert _get(table, variant="original", form="control", metric="share_no")["value"] == 0.0
    assert _get(table, variant="space", form="original", metric="accuracy")["value"] == 1.0
    # flips against the original story: space changes q2 (yes -> no); newline changes q3
    # (no -> an abstention)
    assert _get(table, variant="space", metric="flip_rate")["value"] == 0.25
    assert _get(table, variant="newline", metric="flip_rate")["value"] == 0.25
    # the control form has no formatting variant: no flip row
    assert len(table[(table["metric"] == "flip_rate") & (table["form"] == "control")]) == 0


def test_predicate_argument_clusters_by_story():
    table = predicate_argument_accuracy(probe_frame())
    org = _get(table, variant="original", form="original", metric="accuracy")
    # st1: 3/4 right, st2 ("no" to everything): 2/4 right
    assert org["value"] == pytest.approx(5 / 8) and org["n"] == 8 and org["n_clusters"] == 2
    assert _get(table, variant="original", form="original", metric="share_no")["value"] == 5 / 8
    flips = formatting_flip_rate(probe_frame())
    space = _get(flips, variant="space", form="original")
    assert space["value"] == pytest.approx(1 / 8) and space["n_clusters"] == 2
    assert space["n_unpaired"] == 0


def test_subject_differences_compare_the_items_both_answered():
    rows = []
    for subject, unknowns in (("OT", {"a"}), ("IBT", {"a", "b", "c"})):
        for item, passage in (("a", "p1"), ("b", "p1"), ("c", "p2"), ("d", "p3")):
            if subject == "OT" and item == "d":
                continue  # OT did not answer d: it is left out of the comparison
            unk = item in unknowns
            rows.append({"subject": subject, "variant": "TS-R", "original_id": item,
                         "passage_id": passage, "answers": ["x"],
                         "prediction": "" if unk else "x", "predicted_unknown": unk})  # fmt: skip
    table = subject_differences(pd.DataFrame(rows))
    assert set(table["subject"]) == {"IBT"} and set(table["reference"]) == {"OT"}
    unk = table[table["metric"] == "unk"].iloc[0]
    # per passage IBT - OT: p1 (a, b) 1.0 - 0.5 = 0.5; p2 (c) 1 - 0 = 1
    assert unk["items"] == 3 and unk["n"] == 2
    assert unk["difference"] == pytest.approx(0.75)
    em = table[table["metric"] == "em"].iloc[0]
    assert em["difference"] == pytest.approx(-0.75)
