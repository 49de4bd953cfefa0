"""The right-reasons suite: pairs from the generated comparison items and from a SQuAD-format
file, an end-to-end command-line run with a tiny random BERT QA model (both saliency
methods, then a re-run served from the cache), and saliency answers that do not depend on
the batch size."""

import json
from collections import Counter
from types import SimpleNamespace

import pandas as pd
import pytest
import torch
from typer.testing import CliRunner

from faithprobe.cli import app
from faithprobe.coreference.selection import NO_CLUSTER
from faithprobe.interventions.comparative import NOT_IN_MAP
from faithprobe.requests import SaliencyRequest, TokenSaliency
from faithprobe.runner import result_rows
from faithprobe.subjects.hf.extractive_qa import HFQA
from faithprobe.suite_protocol import get_suite
from faithprobe.suites.right_reasons.suite import NO_IMPORTED
from test_hf_qa import CONTEXT, QUESTION, _random_qa


@pytest.fixture(scope="module")
def generated_pairs():
    return get_suite("right-reasons").pairs(None, 0)


def test_pairs_from_generated_items(generated_pairs):
    pairs = generated_pairs
    items = {p.original.id for p in pairs}
    assert len(items) == 4600 and len(pairs) == 2 * 4600
    cells = Counter(
        (p.original.features["dataset"], p.intervened.features["variant"]) for p in pairs
    )
    assert set(cells) == {
        (f"comparison-{c}", v) for c in ("supporting", "paragraph") for v in ("CF", "CF-ood")
    }
    drops = Counter(p.intervened.features.get("dropped") for p in pairs)
    # 'first' has no out-of-distribution antonym: those CF-ood variants are dropped
    assert set(drops) == {None, NOT_IN_MAP}
    for p in pairs:
        if p.intervened.features.get("dropped"):
            assert p.intervened.features["variant"] == "CF-ood"
            assert p.intervened.id == p.original.id  # nothing new is asked
        else:
            assert p.intervened.answers != p.original.answers  # the other entity
    suite = get_suite("right-reasons")
    sampled = suite.sample(pairs, 5, seed=0)
    assert len({p.original.id for p in sampled}) == 5 and len(sampled) == 10


def test_comparison_questions_selected_from_a_squad_file(tmp_path, tiny_pair_tokenizer):
    context = "Red Harbor came out in 1950. Blue Field came out in 1960."
    qas = [
        {"id": "c1", "question": "Which film came out earlier, Red Harbor or Blue Field?",
         "answers": [{"text": "Red Harbor", "answer_start": 0}]},
        {"id": "c2", "question": "When did Blue Field come out?",
         "answers": [{"text": "1960", "answer_start": context.index("1960")}]},
    ]  # fmt: skip
    path = tmp_path / "squad.json"
    data = {"data": [{"title": "t", "paragraphs": [{"context": context, "qas": qas}]}]}
    path.write_text(json.dumps(data))
    suite = get_suite("right-reasons")
    pairs = suite.pairs(path, 0)
    assert {p.id for p in pairs} == {"CF:squad-c1/cf", "CF-ood:squad-c1/cf-ood"}
    assert all(p.original.features["dataset"] == "comparison-squad" for p in pairs)
    assert "later" in next(p for p in pairs if p.id.startswith("CF:")).intervened.question
    assert suite.metrics(pd.DataFrame(), 0)["selection"] == [
        {"dataset": "comparison-squad", "reason": "no comparative", "count": 1}
    ]
    # the counts live in run.json, and a rebuild from the run folder gets them back
    from faithprobe.report import rebuild
    from faithprobe.report import run_to_folder as run
    from faithprobe.runner import RunConfig

    model = _random_qa(tiny_pair_tokenizer)
    subject = HFQA(model, tiny_pair_tokenizer, name="tiny")
    config = RunConfig(suite="right-reasons", models=[], data=path, out=tmp_path / "run",
                       options={"saliency": "occlusion"}, cache=False)  # fmt: skip
    folder = run(config, subjects=[subject])
    before = json.loads((folder / "metrics.json").read_text())["selection"]
    (folder / "metrics.json").unlink()
    rebuild([folder])
    assert json.loads((folder / "metrics.json").read_text())["selection"] == before
    assert before == [{"dataset": "comparison-squad", "reason": "no comparative", "count": 1}]


def test_cli_run_writes_results_metrics_tables_and_reruns_from_the_cache(
    tmp_path, tiny_pair_tokenizer
):
    model_dir = tmp_path / "qa"
    _random_qa(tiny_pair_tokenizer).save_pretrained(model_dir)
    tiny_pair_tokenizer.save_pretrained(model_dir)
    runs = []
    for attempt in ("first", "again"):
        out = tmp_path / attempt
        args = ["run", "right-reasons", "--model", f"hf-qa:{model_dir}", "--limit", 4,
                "--out", out, "--cache-dir", tmp_path / "c", "-o", "ig_steps=4"]  # fmt: skip
        res = CliRunner().invoke(app, [str(a) for a in args])
        assert res.exit_code == 0, res.output
        runs.append(out)
    first, again = runs
    results = pd.read_parquet(first / "results.parquet")
    assert results["original_id"].nunique() == 4 and len(results) == 8
    answered = results[results["dropped_reason"].isna()]
    assert results["intervened_id"].isna().equals(results["dropped_reason"].notna())
    # both expectations (other entity, new entity): the counterfactual answered exactly right
    assert answered["expectation_met"].astype(bool).equals(answered["cf_em"] == 1)
    assert results.loc[results["dropped_reason"].notna(), "expectation_met"].isna().all()
    scorers = ("ig-l2", "ig-l1", "ig-dot", "occlusion")
    for scorer in scorers:
        assert answered[f"{scorer}_aligned"].notna().all()
        assert answered[f"{scorer}_control_aligned"].notna().all()
        assert (answered[f"{scorer}_n_positive"] >= 1).all()
    # the three IG summaries read one answer: same partitions, different decisions possible
    assert answered["ig-l2_n_negative"].equals(answered["ig-dot_n_negative"])
    assert answered["og_f1"].between(0, 1).all() and answered["cf_f1"].between(0, 1).all()
    metrics = json.loads((first / "metrics.json").read_text())
    assert {r["method"] for r in metrics["alignment"]} == set(scorers)
    for r in metrics["alignment"]:
        assert 0 <= r["control_significant"] <= 1 and 0 <= r["significance_p"] <= 1
    # answer consistency: per (subject, dataset, variant), the share of same answers
    same = answered.groupby(["dataset", "variant"])["same_answer"].mean()
    assert {(r["dataset"], r["variant"]): r["value"] for r in metrics["consistency"]} == (
        pytest.approx(same.to_dict())
    )
    assert {(r["metric"], r["side"]) for r in metrics["scores"]} == {
        (m, s) for m in ("em", "f1") for s in ("og", "cf")
    }
    assert metrics["tests"] and metrics["sizes"]
    assert len(metrics["competence"]) == 1 and metrics["competence"][0]["n"] == 4
    assert {(f["dataset"], f["variant"]) for f in metrics["follows"]} == set(same.index)
    for table in ("competence", "follows", "scores", "consistency", "alignment", "sizes"):
        assert (first / "tables" / f"{table}.csv").is_file()
    html = (first / "report.html").read_text()
    assert "Answer consistency" in html and "random significant" in html
    # 4 originals x (1 span + 2 saliency) + the answered counterfactuals
    (subject,) = json.loads((first / "run.json").read_text())["subjects"]
    assert subject["computed_requests"] == 4 * 3 + len(answered)
    (subject,) = json.loads((again / "run.json").read_text())["subjects"]
    assert subject["computed_requests"] == 0
    pd.testing.assert_frame_equal(results, pd.read_parquet(again / "results.parquet"))


def test_saliency_answers_do_not_depend_on_the_batch_size(tiny_pair_tokenizer):
    model = _random_qa(tiny_pair_tokenizer)
    requests = [
        SaliencyRequest(QUESTION, CONTEXT, "ig", 8),
        SaliencyRequest(QUESTION, CONTEXT, "occlusion"),
        SaliencyRequest("Who lives in Finland?", CONTEXT, "occlusion"),
    ]
    answers = [
        HFQA(model, tiny_pair_tokenizer, name="qa", batch_size=bs).answer(requests) for bs in (1, 7)
    ]
    for a, b in zip(*answers, strict=True):
        assert isinstance(a, TokenSaliency) and a.tokens == b.tokens and a.target == b.target
        assert a.saliency == pytest.approx(b.saliency, abs=1e-4)
        assert TokenSaliency.from_json(a.to_json()) == a
    assert torch.is_grad_enabled()  # answering left autograd as it was


def test_coreference_pairs_by_rule_and_imported(tmp_path):
    context = "Frankie Bono lives in Rome. He works as a pilot. Anna Weber lives in Bonn."
    qas = [
        {"id": "q1", "question": "What is the first name of the man who works as a pilot?",
         "answers": [{"text": "Frankie", "answer_start": 0}]},
        {"id": "q2", "question": "Who lives in Rome?",
         "answers": [{"text": "Frankie Bono", "answer_start": 0}]},
        {"id": "q3", "question": "Where does Anna Weber live?",
         "answers": [{"text": "Bonn", "answer_start": context.index("Bonn")}]},
    ]  # fmt: skip
    para = {"context": context, "context_id": "c1", "qas": qas}
    path = tmp_path / "quoref.json"
    path.write_text(json.dumps({"data": [{"title": "t", "paragraphs": [para]}]}))
    suite = get_suite("right-reasons")
    pairs = {p.id: p for p in suite.pairs(path, 0)}
    # q3's answer is in no cluster; q2 has no rule counterfactual (question shape)
    assert set(pairs) == {"CF:quoref-q1/cf", "CF:quoref-q2"}
    assert pairs["CF:quoref-q2"].intervened.features["dropped"]
    # q2 has no counterfactual, so alignment is undefined and its saliency is not asked
    saliency_model = SimpleNamespace(accepts={"span-answer", "saliency"})
    assert suite.extra_requests(pairs["CF:quoref-q2"].original, saliency_model) == {}
    assert set(suite.extra_requests(pairs["CF:quoref-q1/cf"].original, saliency_model)) == {
        "ig", "occlusion"
    }  # fmt: skip
    assert pairs["CF:quoref-q1/cf"].original.features["dataset"] == "coreference"
    selection = suite.metrics(pd.DataFrame(), 0)["selection"]
    assert selection == [{"dataset": "coreference", "reason": NO_CLUSTER, "count": 1}]

    new = context + " It was Robin Hale who flew."
    record = {"id": "cf-1", "original_id": "quoref-q2", "context": new,
              "question": "Who lives in Rome?", "answer": "Robin Hale",
              "answer_start": new.index("Robin")}  # fmt: skip
    cfs = tmp_path / "cf.jsonl"
    cfs.write_text(json.dumps(record) + "\n")
    imported = get_suite("right-reasons", {"counterfactuals": str(cfs)}).pairs(path, 0)
    by_id = {p.id: p for p in imported}
    assert by_id["CF:cf-1"].intervened.answers == ("Robin Hale",)
    assert by_id["CF:quoref-q1"].intervened.features["dropped"] == NO_IMPORTED
    # rows say which resolver made the cluster and how the counterfactual was made
    from faithprobe.requests import SpanAnswer

    every = [*pairs.values(), by_id["CF:cf-1"]]
    asked = {e.id for p in every for e in (p.original, p.intervened)}
    answers = {i: SpanAnswer("Frankie", 0, 7, 1.0, 0.0) for i in asked}
    reader = SimpleNamespace(name="s", fingerprint="f", accepts={"span-answer"})
    rows = result_rows(suite, every, reader, answers)
    made = {r["pair_id"]: (r["resolver"], r["cf_generated"]) for r in rows}
    assert made == {"CF:quoref-q1/cf": ("fallback-rule", True),
                    "CF:quoref-q2": ("fallback-rule", None),
                    "CF:cf-1": ("fallback-rule", False)}  # fmt: skip
    # the runner's columns: the dropped pair has no intervened example and nothing to judge
    judged = {r["pair_id"]: (r["intervened_id"], r["expectation_met"]) for r in rows}
    assert judged == {"CF:quoref-q1/cf": ("quoref-q1/cf", False), "CF:quoref-q2": (None, None),
                      "CF:cf-1": ("cf-1", False)}  # fmt: skip
    from faithprobe.suites.right_reasons.metrics import sizes

    (size,) = sizes(pd.DataFrame(rows))
    assert size == {"dataset": "coreference", "variant": "CF", "items": 3, "answered": 2,
                    "dropped": 1, "resolver": "fallback-rule", "cf_by_rule": 1,
                    "cf_imported": 1}  # fmt: skip


def test_comparison_questions_of_a_hotpotqa_file_in_both_conditions(tmp_path):
    def record(qid, question, answer, facts):
        return {"_id": qid, "question": question, "answer": answer, "type": "comparison",
                "level": "hard", "supporting_facts": facts,
                "context": [["Red Harbor", ["Red Harbor is a film.", "It came out in 1950."]],
                            ["Blue Field", ["Blue Field is a film.", "It came out in 1960."]],
                            ["Distractor", ["Nothing here."]]]}  # fmt: skip

    both = [["Red Harbor", 0], ["Red Harbor", 1], ["Blue Field", 0], ["Blue Field", 1]]
    records = [
        record("h1", "Which film came out earlier, Red Harbor or Blue Field?", "Red Harbor", both),
        # Blue Field is named only in a title and a sentence that is not a supporting fact
        record("h2", "Which film came out later, Red Harbor or Blue Field?", "Red Harbor",
               [["Red Harbor", 0], ["Red Harbor", 1], ["Blue Field", 1]]),
        record("h3", "When did Blue Field come out?", "1960", both),
    ]  # fmt: skip
    path = tmp_path / "hotpot.json"
    path.write_text(json.dumps(records))
    suite = get_suite("right-reasons")
    pairs = {p.id: p for p in suite.pairs(path, 0)}
    assert set(pairs) == {
        "CF:hotpot-h1/cf", "CF-ood:hotpot-h1/cf-ood", "CF:hotpot-h2/cf", "CF-ood:hotpot-h2/cf-ood",
        "CF:hotpot-h1/supporting/cf", "CF-ood:hotpot-h1/supporting/cf-ood",
    }  # fmt: skip
    cut = pairs["CF:hotpot-h1/supporting/cf"]
    assert cut.original.context == (
        "Red Harbor is a film. It came out in 1950. Blue Field is a film. It came out in 1960."
    )
    assert cut.original.features["dataset"] == "comparison-hotpotqa-supporting"
    assert cut.intervened.answers == ("Blue Field",) and "later" in cut.intervened.question
    (start,) = cut.intervened.answer_starts
    assert cut.intervened.context[start : start + len("Blue Field")] == "Blue Field"
    full = pairs["CF:hotpot-h1/cf"].original
    assert full.features["dataset"] == "comparison-hotpotqa-paragraph"
    assert "Red Harbor\n" in full.context and "Distractor" not in full.context
    selection = {(r["dataset"], r["reason"]): r["count"]
                 for r in suite.metrics(pd.DataFrame(), 0)["selection"]}  # fmt: skip
    assert selection == {
        ("comparison-hotpotqa-paragraph", "no comparative"): 1,
        ("comparison-hotpotqa-supporting", "no comparative"): 1,
        ("comparison-hotpotqa-supporting", "the other entity does not occur in the context"): 1,
    }


def test_without_saliency_there_is_no_alignment_table():
    from faithprobe.suites.right_reasons.metrics import right_reasons_metrics

    rows = pd.DataFrame([{"subject": "s", "dataset": "d", "variant": "CF", "pair_id": "p",
                          "original_id": "o", "passage_id": "x", "dropped_reason": None,
                          "og_answers": ["Red Harbor"], "og_em": 1.0, "cf_em": 0.0,
                          "og_f1": 1.0, "cf_f1": 0.5, "same_answer": True}])  # fmt: skip
    metrics = right_reasons_metrics(rows, (), seed=0)
    assert metrics["alignment"] == [] and len(metrics["scores"]) == 4
    assert [c["value"] for c in metrics["consistency"]] == [1.0]
    (able,) = metrics["competence"]
    assert (able["value"], able["baseline_answer"]) == (1.0, "text:red harbor")
    (follows,) = metrics["follows"]
    assert (follows["agrees"], follows["keeps"], follows["value"]) == (0.0, 1.0, -1.0)
    # a results table from before the column: no consistency, the rest as before
    older = right_reasons_metrics(rows.drop(columns="same_answer"), (), seed=0)
    assert older["consistency"] == [] and older["follows"] == [] and len(older["scores"]) == 4


def test_competence_counts_each_original_once_and_alignment_shares_one_denominator():
    """An original with a CF and a CF-ood pair (and one whose counterfactual was dropped) is
    one question of the competence check; alignment divides by the instances answered right
    on both inputs, the same ones for every saliency method (an instance one method did not
    decide is left out of all)."""
    from faithprobe.suites.right_reasons.metrics import right_reasons_metrics

    def row(original, variant, og_em, cf_em, ig, occlusion, dropped=None):
        decided = {
            f"{m}_{c}": None if v is None else v and c in ("aligned", "passed")
            for m, v in (("ig-l2", ig), ("occlusion", occlusion))
            for c in ("aligned", "control_aligned", "passed", "control_passed")
        }
        return {"subject": "s", "dataset": "d", "variant": variant, "original_id": original,
                "pair_id": f"{variant}:{original}", "passage_id": original,
                "dropped_reason": dropped, "og_answers": [original], "og_em": og_em,
                "cf_em": cf_em, "og_f1": og_em, "cf_f1": cf_em, "same_answer": False,
                **decided}  # fmt: skip

    rows = pd.DataFrame([
        row("a", "CF", 1.0, 1.0, True, True), row("a", "CF-ood", 1.0, 0.0, False, False),
        row("b", "CF", 1.0, 1.0, False, True), row("c", "CF", 0.0, 1.0, False, False),
        row("d", "CF", 1.0, 1.0, True, None),  # occlusion did not decide: out for both
        row("e", "CF", 0.0, None, None, None, dropped="no antonym"),
    ])  # fmt: skip
    metrics = right_reasons_metrics(rows, ("ig-l2", "occlusion"), seed=0)
    (able,) = metrics["competence"]
    assert (able["n"], able["value"]) == (5, 0.6)  # a, b, c, d, e: once each
    by = {(r["variant"], r["method"]): r for r in metrics["alignment"]}
    ig, occlusion = by[("CF", "ig-l2")], by[("CF", "occlusion")]
    assert (ig["instances"], ig["n"]) == (occlusion["instances"], occlusion["n"]) == (3, 2)
    assert (ig["aligned"], occlusion["aligned"]) == (0.5, 1.0)
    assert by[("CF-ood", "ig-l2")]["n"] == 0
