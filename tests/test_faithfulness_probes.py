"""The faithfulness suite's negation pairs (edit file, rule negator; Org/Mod/Comb-Acc) and
predicate–argument probe (exact counts, Table 12 keys), with a tiny causal LM."""

import json

import pandas as pd
import pytest

from faithprobe.errors import UsageError
from faithprobe.expectations import ANSWER_FLIPS, ANSWER_UNCHANGED
from faithprobe.report import run_to_folder
from faithprobe.runner import RunConfig
from faithprobe.subjects.hf.causal import HFCausal
from faithprobe.suite_protocol import get_suite

STORY = "Tom has a red ball. He can play in the park. Ann has a cat. The cat is black."
TURNS = [  # question, answer, rationale
    ("Does Tom have a ball?", "yes", "Tom has a red ball."),
    ("Can he play in the park?", "yes", "He can play in the park."),
    ("Is the cat black?", "yes", "The cat is black."),
    ("Does Ann have a dog?", "no", "Ann has a cat."),
    ("What does Tom have?", "a red ball", "Tom has a red ball."),
]
EDITS = [
    {"id": "coqa-s1-1", "original": "Tom has a red ball", "replacement": "Tom has no ball",
     "answer": "no"},
    {"id": "coqa-s1-4", "original": "Ann has a cat", "replacement": "Ann has a dog",
     "answer": "yes"},
]  # fmt: skip


@pytest.fixture
def files(tmp_path):
    answers = []
    for turn, (_, answer, rationale) in enumerate(TURNS, 1):
        start = STORY.index(rationale)
        answers.append({"turn_id": turn, "input_text": answer, "span_start": start,
                        "span_end": start + len(rationale), "span_text": rationale})  # fmt: skip
    story = {"source": "mctest", "id": "s1", "story": STORY, "answers": answers,
             "questions": [{"turn_id": i, "input_text": q} for i, (q, _, _) in
                           enumerate(TURNS, 1)]}  # fmt: skip
    data = tmp_path / "coqa.json"
    data.write_text(json.dumps({"version": "1.0", "data": [story]}))
    edits = tmp_path / "edits.jsonl"
    edits.write_text("".join(json.dumps(e) + "\n" for e in EDITS))
    return data, edits


def _neg(pairs):
    return {p.id: p for p in pairs if p.id.startswith("NEG:")}


def test_edit_file_and_rule_negator_give_neg_pairs(files):
    data, edits = files
    neg = _neg(get_suite("faithfulness", {"edits": str(edits)}).pairs(data, 0))
    assert sorted(neg) == ["NEG:coqa-s1-1", "NEG:coqa-s1-4"]
    one = neg["NEG:coqa-s1-1"]
    assert one.expectation is ANSWER_FLIPS and one.intervention == "negation_edit"
    assert one.intervened.context.startswith("Tom has no ball.")
    assert one.intervened.answers == ("no",) and one.original.answers == ("yes",)
    assert one.intervened.features["variant"] == "NEG"
    both = _neg(get_suite("faithfulness", {"edits": str(edits), "negate": "rule"}).pairs(data, 0))
    assert sorted(both) == [f"NEG:coqa-s1-{i}" for i in (1, 2, 3, 4)]
    two = both["NEG:coqa-s1-2"].intervened
    assert "He cannot play in the park." in two.context and two.answers == ("no",)
    assert two.features["negation"] == "rule-based"
    assert both["NEG:coqa-s1-1"].intervened.features["negation"] == "edit-file"
    with pytest.raises(UsageError, match="negate"):
        get_suite("faithfulness", {"negate": "always"})


def test_negate_on_ts_edits_the_truncated_story(files):
    """As the method edits CoQA: the edit lands in TS (the story cut after the rationale's
    sentence), and Org-Acc is then read on TS; an edit past the cut cannot be applied and is
    counted; the rule negator negates TS's rationale sentence."""
    data, edits = files
    suite = get_suite("faithfulness", {"edits": str(edits), "negate": "rule", "negate_on": "ts"})
    neg = _neg(suite.pairs(data, 0))
    one = neg["NEG:coqa-s1-1"].intervened  # rationale in the first sentence: TS is that one
    assert one.context == "Tom has no ball." and one.features["negated_from"] == "TS"
    four = neg["NEG:coqa-s1-4"].intervened
    assert four.context == "Tom has a red ball. He can play in the park. Ann has a dog."
    two = neg["NEG:coqa-s1-2"].intervened
    assert two.context == "Tom has a red ball. He cannot play in the park."
    assert two.features["negation"] == "rule-based"
    os_neg = _neg(get_suite("faithfulness", {"edits": str(edits)}).pairs(data, 0))
    assert os_neg["NEG:coqa-s1-4"].intervened.context == STORY.replace("a cat", "a dog")
    assert os_neg["NEG:coqa-s1-4"].intervened.features["negated_from"] == "OS"
    with pytest.raises(UsageError, match="negate_on"):
        get_suite("faithfulness", {"negate_on": "tsr"})


def test_an_edit_past_the_truncation_is_kept_dropped(files, tmp_path):
    data, _ = files
    late = tmp_path / "late.jsonl"  # the question's rationale is the first sentence
    late.write_text(json.dumps({"id": "coqa-s1-1", "original": "The cat is black",
                                "replacement": "The cat is white", "answer": "no"}) + "\n")  # fmt: skip
    (pair,) = _neg(get_suite("faithfulness", {"edits": str(late), "negate_on": "ts"})
                   .pairs(data, 0)).values()  # fmt: skip
    assert pair.dropped == "the edited text is not in the truncated story (TS)"
    assert pair.intervened.features["negation"] == "edit-file"


def test_negation_on_ts_is_scored_against_ts(tmp_path, files, tiny_llama, tiny_tokenizer):
    data, edits = files
    subject = HFCausal(tiny_llama, tiny_tokenizer, name="tiny", batch_size=4)
    config = RunConfig(suite="faithfulness", data=data, out=tmp_path / "neg-ts", cache=False,
                       options={"edits": str(edits), "negate_on": "ts",
                                "max_new_tokens": "4"})  # fmt: skip
    out = run_to_folder(config, subjects=[subject])
    res = pd.read_parquet(out / "results.parquet")
    neg = res[res["variant"] == "NEG"].set_index("original_id")
    assert set(neg["negated_from"]) == {"TS"}
    ts = res[(res["variant"] == "TS") & res["original_id"].isin(neg.index)].set_index("original_id")
    metrics = json.loads((out / "metrics.json").read_text())
    got = {r["metric"]: r for r in metrics["negation"]}
    assert got["org_acc"]["value"] == pytest.approx(ts["correct"].astype(bool).mean())
    both = ts["correct"].astype(bool) & neg["correct"].astype(bool)
    assert got["comb_acc"]["value"] == pytest.approx(both.mean())


def test_negation_run_with_a_tiny_lm(tmp_path, files, tiny_llama, tiny_tokenizer):
    data, edits = files
    subject = HFCausal(tiny_llama, tiny_tokenizer, name="tiny", batch_size=4)
    config = RunConfig(suite="faithfulness", data=data, out=tmp_path / "neg", cache=False,
                       options={"edits": str(edits), "negate": "rule", "max_new_tokens": "4"})  # fmt: skip
    out = run_to_folder(config, subjects=[subject])
    res = pd.read_parquet(out / "results.parquet")
    neg = res[res["variant"] == "NEG"].set_index("original_id")
    assert len(neg) == 4 and set(neg["prediction"]) <= {"yes", "no"}
    assert {i: list(a) for i, a in neg["answers"].items()} == {
        "coqa-s1-1": ["no"], "coqa-s1-2": ["no"], "coqa-s1-3": ["no"], "coqa-s1-4": ["yes"]
    }  # fmt: skip
    assert dict(neg["negation"]) == {"coqa-s1-1": "edit-file", "coqa-s1-2": "rule-based",
                                     "coqa-s1-3": "rule-based", "coqa-s1-4": "edit-file"}  # fmt: skip
    metrics = json.loads((out / "metrics.json").read_text())
    got = {(r["negation"], r["metric"]): r for r in metrics["negation"]}
    kinds = ("all", "edit-file", "rule-based")
    assert set(got) == {
        (k, a) for k in kinds for a in ("org_acc", "mod_acc", "comb_acc", "org_no", "mod_no")
    }
    assert [got[(k, "org_acc")]["n"] for k in kinds] == [4, 2, 2]
    assert all(r["n_unpaired"] == 0 for r in metrics["negation"])
    os_ = res[(res["variant"] == "OS") & res["original_id"].isin(neg.index)].set_index(
        "original_id"
    )
    right_org = os_["correct"].astype(bool)
    right_mod = neg["correct"].astype(bool)
    assert got[("all", "org_acc")]["value"] == pytest.approx(right_org.mean())
    assert got[("all", "mod_acc")]["value"] == pytest.approx(right_mod.mean())
    assert got[("all", "comb_acc")]["value"] == pytest.approx((right_org & right_mod).mean())
    # NEG rows are not in the deletion tables
    assert {r["variant"] for r in metrics["scores"]} == {"OS", "TS", "TS-R"}
    table = (out / "tables" / "negation.md").read_text()
    for word in ("Org-Acc", "Mod-Acc", "Comb-Acc", "rule-based"):
        assert word in table


def test_predicate_argument_pairs():
    suite = get_suite("faithfulness", {"probe": "predicate-argument"})
    pairs = suite.pairs(None, 0)
    assert len(pairs) == 5850 and len({p.original.id for p in pairs}) == 520
    stories = {p.intervened.features["story_id"] for p in pairs}
    assert len(stories) == 130
    counts = pd.Series(
        [(p.intervened.features["variant"], p.intervened.features["form"]) for p in pairs]
    ).value_counts()
    for form in ("original", "paraphrase", "control"):
        for variant in ("original", "space", "newline"):
            assert counts[(variant, form)] == 520
        assert counts[("negated", form)] == 390
    for p in pairs:
        o, x = p.original.features, p.intervened.features
        assert (o["variant"], o["form"], o["item_id"]) == ("original", "original", x["item_id"])
        assert p.expectation is (ANSWER_FLIPS if x["flipped"] else ANSWER_UNCHANGED)
    with pytest.raises(UsageError, match="probe"):
        get_suite("faithfulness", {"probe": "colours"})


def test_predicate_argument_run_with_a_tiny_lm(tmp_path, tiny_llama, tiny_tokenizer):
    subject = HFCausal(tiny_llama, tiny_tokenizer, name="tiny", batch_size=64)
    config = RunConfig(suite="faithfulness", out=tmp_path / "pa", cache=False,
                       options={"probe": "predicate-argument"})  # fmt: skip
    out = run_to_folder(config, subjects=[subject])
    res = pd.read_parquet(out / "results.parquet")
    assert len(res) == 5850 and res["story_id"].nunique() == 130
    assert set(res["prediction"]) <= {"yes", "no"}
    per = res.groupby(["variant", "form"]).size()
    assert set(per[[(v, f) for v in ("original", "space", "newline") for f in
                    ("original", "paraphrase", "control")]]) == {520}  # fmt: skip
    assert set(per.loc["negated"]) == {390}
    flipped = res[res["flipped"].astype(bool)]
    assert len(flipped) == 390 and set(flipped["answers"].map(tuple)) == {("no",)}
    metrics = json.loads((out / "metrics.json").read_text())
    assert "scores" not in metrics
    pa = metrics["predicate_argument"]
    acc = {(r["variant"], r["form"], r["metric"]): r for r in pa if r["metric"] != "flip_rate"}
    variants = ("original", "space", "newline", "negated")
    forms = ("original", "paraphrase", "control")
    assert set(acc) == {
        (v, f, k) for v in variants for f in forms for k in ("accuracy", "share_no")
    }
    assert {acc[(v, "original", "accuracy")]["n"] for v in variants[:3]} == {520}
    assert acc[("original", "original", "accuracy")]["n_clusters"] == 130
    assert acc[("original", "paraphrase", "accuracy")]["label"] == "Mod-Acc"
    flips = {(r["variant"], r["form"]) for r in pa if r["metric"] == "flip_rate"}
    assert flips == {(v, f) for v in ("space", "newline") for f in forms}
    table = (out / "tables" / "predicate_argument.md").read_text()
    for word in ("Org-Acc", "Mod-Acc", "New-Acc", "no% (Org-Acc)", "negated", "520", "390"):
        assert word in table
    assert "flip" in (out / "tables" / "formatting_flips.md").read_text().lower()
    assert '<section id="predicate_argument">' in (out / "report.html").read_text()


def test_the_headline_follows_what_the_run_measured():
    from faithprobe.report import summary_title

    probe = {"suite": "faithfulness", "options": {"probe": "predicate-argument"}}
    assert "predicate–argument" in summary_title(probe)
    assert "deleting" in summary_title({"suite": "faithfulness", "options": {"probe": None}})


def _extractive(tokenizer, bias=None):
    """A random tiny BERT QA model, with an answer-kind head of zero weights and ``bias``
    (one answer for every input) unless ``bias`` is None."""
    import torch
    from transformers import BertForQuestionAnswering

    from conftest import tiny_bert_config
    from faithprobe.subjects.hf.answer_kind_head import AnswerKindHead
    from faithprobe.subjects.hf.extractive_qa import HFQA

    torch.manual_seed(0)
    model = BertForQuestionAnswering(tiny_bert_config(len(tokenizer))).eval()
    head = None
    if bias is not None:
        head = AnswerKindHead(model.config.hidden_size)
        with torch.no_grad():
            head.classifier.weight.zero_()
            head.classifier.bias.copy_(torch.tensor(bias))
    return HFQA(model, tokenizer, name="qa", answer_kind_head=head)


def test_an_extractive_model_answers_yes_no_with_its_head(tmp_path, files, tiny_pair_tokenizer):
    data, edits = files
    options = {"edits": str(edits), "splitter": "pysbd"}
    always_yes = _extractive(tiny_pair_tokenizer, bias=(0.0, 5.0, 0.0, 0.0))
    out = run_to_folder(RunConfig(suite="faithfulness", data=data, out=tmp_path / "yes",
                                  cache=False, options=options), subjects=[always_yes])  # fmt: skip
    res = pd.read_parquet(out / "results.parquet")
    answered = res[res["dropped_reason"].isna()]
    yes_no = answered[answered["yes_no"]]
    assert set(yes_no["prediction"]) == {"yes"} and not yes_no["predicted_unknown"].any()
    assert set(yes_no["answer_mode"]) == {"answer-kind head"} and set(yes_no["reply_kind"]) == {
        "yes"
    }
    assert yes_no["unknown_logprob"].notna().all() and yes_no["null_score"].isna().all()
    span = answered[~answered["yes_no"]]  # "What does Tom have?" is still asked for a span
    assert span["null_score"].notna().all() and span["unknown_logprob"].isna().all()
    metrics = json.loads((out / "metrics.json").read_text())
    got = {r["metric"]: r["value"] for r in metrics["negation"] if r["negation"] == "all"}
    # golds yes (edited to no) and no (edited to yes): "yes" is right once on each side
    assert (got["org_acc"], got["mod_acc"], got["comb_acc"]) == (0.5, 0.5, 0.0)

    abstains = _extractive(tiny_pair_tokenizer, bias=(0.0, 0.0, 0.0, 5.0))
    out = run_to_folder(RunConfig(suite="faithfulness", data=data, out=tmp_path / "unk",
                                  cache=False, options=options), subjects=[abstains])  # fmt: skip
    res = pd.read_parquet(out / "results.parquet")
    yes_no = res[res["dropped_reason"].isna() & res["yes_no"]]
    assert yes_no["predicted_unknown"].all() and set(yes_no["prediction"]) == {"unknown"}
    assert set(yes_no["reply_kind"]) == {"abstention"}
    tsr = yes_no[yes_no["variant"] == "TS-R"]
    assert len(tsr) and tsr["expectation_met"].all()  # abstaining is right once it is gone


def test_without_a_head_yes_no_questions_get_a_span(tmp_path, files, tiny_pair_tokenizer):
    data, _ = files
    subject = _extractive(tiny_pair_tokenizer)
    out = run_to_folder(RunConfig(suite="faithfulness", data=data, out=tmp_path / "plain",
                                  cache=False, options={"splitter": "pysbd"}),
                        subjects=[subject])  # fmt: skip
    res = pd.read_parquet(out / "results.parquet")
    yes_no = res[res["dropped_reason"].isna() & res["yes_no"]]
    assert yes_no["null_score"].notna().all() and "unknown_logprob" not in res
    assert not set(yes_no["prediction"]) & {"yes", "no"}
    assert "extractive models without an answer-kind head" in (out / "report.html").read_text()


def test_the_probe_runs_on_an_extractive_model_with_a_head(tmp_path, tiny_pair_tokenizer):
    subject = _extractive(tiny_pair_tokenizer, bias=(0.0, 0.0, 5.0, 0.0))
    config = RunConfig(suite="faithfulness", out=tmp_path / "pa", cache=False, limit=8,
                       options={"probe": "predicate-argument"})  # fmt: skip
    res = pd.read_parquet(run_to_folder(config, subjects=[subject]) / "results.parquet")
    assert res["original_id"].nunique() == 8 and set(res["prediction"]) == {"no"}
    metrics = json.loads((tmp_path / "pa" / "metrics.json").read_text())
    share = {(r["variant"], r["form"]): r["value"] for r in metrics["predicate_argument"]
             if r["metric"] == "share_no"}  # fmt: skip
    assert set(share.values()) == {1.0}
