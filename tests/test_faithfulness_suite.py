"""The faithfulness suite: variants and drops on a hand-made SQuAD-format file, requests per
subject kind, and end-to-end runs with a tiny causal LM, a tiny extractive QA model and the
command line."""

import json

import pandas as pd
import pytest
import torch
from typer.testing import CliRunner

from conftest import tiny_bert_config
from faithprobe.cli import app
from faithprobe.errors import UsageError
from faithprobe.interventions.deletion import AUGMENT_FAILED, FIRST_SENTENCE
from faithprobe.qa.prompt import DEFAULT_TEMPLATE, UNKNOWN_INSTRUCTION
from faithprobe.records import QAExample
from faithprobe.report import run_to_folder
from faithprobe.requests import (
    AnswerKindRequest,
    CandidateScoreRequest,
    Generation,
    GenerationRequest,
    SpanAnswerRequest,
)
from faithprobe.runner import RunConfig
from faithprobe.subjects.hf.causal import HFCausal
from faithprobe.subjects.hf.extractive_qa import HFQA
from faithprobe.suite_protocol import get_suite
from faithprobe.suites.faithfulness.metrics import reinserted
from faithprobe.suites.faithfulness.suite import augmented_pairs

P1 = "Anna was born in Oslo. She moved to Paris in 1990. There she studied music. Later she taught piano."
P2 = "The bridge opened in 1932. It is made of steel. Engineers painted it red."
QUESTIONS = [
    (P1, "q1", "Where did Anna move in 1990?", "Paris"),
    (P1, "q2", "Where was Anna born?", "Oslo"),  # rationale in the first sentence: TS-R drops
    (P1, "q3", "What did Anna teach?", "piano"),
    (P2, "q4", "What is the bridge made of?", "steel"),
    (P2, "q5", "What colour is the bridge?", "red"),
]
ROW_COLUMNS = {
    "subject", "pair_id", "original_id", "variant", "expected", "dropped_reason", "question",
    "context_chars", "answers", "prediction", "predicted_unknown", "em", "f1",
    "yes_no", "expectation_met",
}  # fmt: skip


def squad_doc():
    paragraphs = {}
    for context, qid, question, answer in QUESTIONS:
        qa = {"id": qid, "question": question,
              "answers": [{"text": answer, "answer_start": context.index(answer)}]}  # fmt: skip
        paragraphs.setdefault(context, []).append(qa)
    return {
        "version": "1.1",
        "data": [
            {"title": "T", "paragraphs": [{"context": c, "qas": q} for c, q in paragraphs.items()]}
        ],
    }


@pytest.fixture(scope="module")
def squad_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("faith") / "mini-squad.json"
    path.write_text(json.dumps(squad_doc()))
    return path


def by_pair(pairs):
    return {p.id: p for p in pairs}


def test_variants_drops_and_texts(squad_file):
    pairs = by_pair(get_suite("faithfulness").pairs(squad_file, 0))
    assert len(pairs) == 15  # 5 questions x OS, TS, TS-R
    assert {pid.split(":")[0] for pid in pairs} == {"OS", "TS", "TS-R"}
    os1 = pairs["OS:squad-q1"]
    assert os1.intervention == "none" and os1.intervened.context == P1
    assert (
        pairs["TS:squad-q1"].intervened.context
        == "Anna was born in Oslo. She moved to Paris in 1990."
    )
    tsr = pairs["TS-R:squad-q1"].intervened
    assert tsr.context == "Anna was born in Oslo. Paris"  # the answer is re-inserted
    assert tsr.features["expected"] == "unknown"
    assert pairs["TS-R:squad-q3"].intervened.context == (
        "Anna was born in Oslo. She moved to Paris in 1990. There she studied music. piano"
    )
    dropped = pairs["TS-R:squad-q2"]
    assert dropped.intervened.features["dropped"] == FIRST_SENTENCE
    assert dropped.intervened.id == dropped.original.id  # nothing new to ask
    assert pairs["TS:squad-q2"].intervened.context == "Anna was born in Oslo."


def test_limit_keeps_whole_items(squad_file):
    suite = get_suite("faithfulness")
    pairs = suite.pairs(squad_file, 0)
    small = suite.sample(pairs, 3, 0)
    items = {p.original.id for p in small}
    assert len(items) == 3 and len(small) == 9
    assert items <= {p.original.id for p in suite.sample(pairs, 4, 0)}
    assert suite.sample(pairs, 3, 0) == small


class _Subject:
    def __init__(self, accepts):
        self.accepts = frozenset(accepts)
        self.name = "s"
        self.has_chat_template = False


def test_requests_per_subject_kind():
    suite = get_suite("faithfulness")
    ex = QAExample("c-1", "Tom has a dog. It is brown.", "Is it black?", ("no",), "no",
                   history=(("What does Tom have?", "a dog"),))  # fmt: skip
    span = suite.request(ex, _Subject({"span-answer"}))
    assert span == SpanAnswerRequest("What does Tom have? a dog Is it black?", ex.context)
    lm = _Subject({"generation", "candidate-scores"})
    yes_no = suite.request(ex, lm)
    assert isinstance(yes_no, CandidateScoreRequest) and yes_no.candidates == ("yes", "no")
    assert yes_no.context == (
        f"{ex.context}\n\n{UNKNOWN_INSTRUCTION}\n\nQ: What does Tom have?\nA: a dog\n"
        "Q: Is it black?\nA:"
    )
    gen = suite.request(QAExample("c-2", "Tom has a dog.", "What?", ("a dog",)), lm)
    assert isinstance(gen, GenerationRequest)
    assert gen.max_new_tokens == 24 and gen.stop == ("\n",)
    assert gen.prompt == DEFAULT_TEMPLATE.format(
        context="Tom has a dog.", history="", question="What?"
    )
    custom = get_suite("faithfulness", {"template": "{context}\\nQ: {question}\\nA:"})
    assert custom.request(ex, lm).context == (
        f"{ex.context}\nQ: What does Tom have? a dog Is it black?\nA:"
    )
    with pytest.raises(UsageError, match="question"):
        get_suite("faithfulness", {"template": "{context}"})
    with pytest.raises(UsageError, match="neither"):
        suite.request(ex, _Subject({"text-pair-classes"}))
    # an extractive model with an answer-kind head is asked yes/no questions through it
    headed = _Subject({"span-answer", "answer-kind"})
    assert suite.request(ex, headed) == AnswerKindRequest(span.question, ex.context)
    plain = QAExample("c-2", "Tom has a dog.", "What?", ("a dog",), answer_starts=(8,))
    assert suite.request(plain, headed) == SpanAnswerRequest("What?", "Tom has a dog.")


def _check_run(out, n_items=5):
    res = pd.read_parquet(out / "results.parquet")
    assert set(res.columns) >= ROW_COLUMNS
    assert len(res) == 3 * n_items
    dropped = res[res["dropped_reason"].notna()]
    assert list(dropped["pair_id"]) == ["TS-R:squad-q2"]
    assert dropped["prediction"].isna().all() and dropped["em"].isna().all()
    answered = res[res["dropped_reason"].isna()]
    assert answered["em"].between(0, 1).all() and answered["f1"].between(0, 1).all()
    assert (answered["em"] <= answered["f1"]).all()
    golds = res.drop_duplicates("original_id").set_index("original_id")["answers"]
    assert {i: list(a) for i, a in golds.items()} == {f"squad-{q[1]}": [q[3]] for q in QUESTIONS}
    assert set(res.loc[res["variant"] == "TS-R", "expected"]) == {"unknown"}
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics) >= {"sizes", "drops", "scores", "scores_by_answer_kind", "expectation"}
    assert metrics["drops"] == [{"variant": "TS-R", "reason": FIRST_SENTENCE, "count": 1}]
    sizes = {r["variant"]: r for r in metrics["sizes"]}
    tsr = sizes["TS-R"]
    assert (tsr["items"], tsr["answered"], tsr["dropped"]) == (5, 4, 1)
    keys = {(r["variant"], r["metric"]) for r in metrics["scores"]}
    assert keys == {
        (v, k) for v in ("OS", "TS", "TS-R") for k in ("em", "f1", "contains", "unk", "empty")
    }
    n = {r["variant"]: r["n"] for r in metrics["scores"] if r["metric"] == "em"}
    assert n == {"OS": 5, "TS": 5, "TS-R": 4}
    for r in metrics["scores"]:
        assert {"value", "ci_low", "ci_high", "n", "n_clusters", "method"} <= set(r)
    reinsertions = [r for r in metrics["scores_by_reinsertion"] if r["metric"] == "unk"]
    appended = res.loc[(res["variant"] == "TS-R") & res["dropped_reason"].isna(), "appended"]
    assert sum(r["n"] for r in reinsertions) == len(appended) == 4
    assert {r["reinserted"] for r in reinsertions} == {
        "bare answer" if a else "nothing: the answer is still in the text" for a in appended
    }
    assert (out / "tables" / "scores_by_reinsertion.md").is_file()
    html = (out / "report.html").read_text()
    for section in ("scores", "drops", "details", "examples"):
        assert f'<section id="{section}">' in html
    table = (out / "tables" / "scores.md").read_text()
    for word in ("EM", "F1", "unk%", "dropped", "TS-R"):
        assert word in table
    return res


def test_run_with_a_tiny_lm_is_batch_size_invariant(
    tmp_path, squad_file, tiny_llama, tiny_tokenizer
):
    frames = []
    for bs in (1, 8):
        subject = HFCausal(tiny_llama, tiny_tokenizer, name="tiny", batch_size=bs)
        config = RunConfig(
            suite="faithfulness", data=squad_file, out=tmp_path / f"bs{bs}", cache=False,
            options={"max_new_tokens": "6"},
        )  # fmt: skip
        frames.append(_check_run(run_to_folder(config, subjects=[subject])).sort_values("pair_id"))
    a, b = frames
    assert a["prediction"].fillna("-").tolist() == b["prediction"].fillna("-").tolist()
    assert (a["n_tokens"].dropna() <= 6).all()


def test_run_with_a_tiny_extractive_model(tmp_path, squad_file, tiny_pair_tokenizer):
    from transformers import BertForQuestionAnswering

    torch.manual_seed(0)
    model = BertForQuestionAnswering(tiny_bert_config(len(tiny_pair_tokenizer))).eval()
    frames = []
    for bs in (1, 8):
        subject = HFQA(model, tiny_pair_tokenizer, name="qa", batch_size=bs)
        config = RunConfig(
            suite="faithfulness", data=squad_file, out=tmp_path / f"qa{bs}", cache=False
        )
        res = _check_run(run_to_folder(config, subjects=[subject]))
        answered = res[res["dropped_reason"].isna()]
        assert answered["null_score"].notna().all()
        # a non-null prediction is a span of the variant's context
        for pred, unk in zip(answered["prediction"], answered["predicted_unknown"], strict=True):
            assert unk == (pred == "")
        frames.append(res.sort_values("pair_id"))
    a, b = frames
    assert a["prediction"].fillna("").tolist() == b["prediction"].fillna("").tolist()


def test_cli_run(tmp_path, squad_file, tiny_llama, tiny_tokenizer):
    model_dir = tmp_path / "llama"
    tiny_llama.save_pretrained(model_dir)
    tiny_tokenizer.save_pretrained(model_dir)
    out = tmp_path / "cli"
    args = ["run", "faithfulness", "--data", squad_file, "--limit", 3, "--model", model_dir,
            "--out", out, "--cache-dir", tmp_path / "c", "-o", "max_new_tokens=4"]  # fmt: skip
    res = CliRunner().invoke(app, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    results = pd.read_parquet(out / "results.parquet")
    assert results["original_id"].nunique() == 3 and len(results) == 9
    assert "EM" in res.output and "unk%" in res.output


def test_cli_run_with_augmentation_and_chat(tmp_path, squad_file, tiny_chat_llama_dir):
    """A random tiny LM writes the +Aug sentences: they lack the answers, so every +Aug item
    is dropped and counted; the sentences come from the answer cache on a re-run."""
    model_dir = tiny_chat_llama_dir
    for attempt in ("first", "again"):
        out = tmp_path / attempt
        args = ["run", "faithfulness", "--data", squad_file, "--model", model_dir, "--out", out,
                "--cache-dir", tmp_path / "c", "-o", "max_new_tokens=4",
                "-o", f"augment={model_dir}", "-o", "chat=true"]  # fmt: skip
        res = CliRunner().invoke(app, [str(a) for a in args])
        assert res.exit_code == 0, res.output
        (pool,) = json.loads((out / "run.json").read_text())["pair_models"]
        assert pool["computed_requests"] == (4 if attempt == "first" else 0)
    results = pd.read_parquet(out / "results.parquet")
    aug = results[results["variant"] == "TS-R+Aug"]
    assert len(aug) == 5 and aug["dropped_reason"].notna().all()
    assert set(aug["dropped_reason"]) == {FIRST_SENTENCE, AUGMENT_FAILED}
    assert aug["drop_detail"].notna().sum() == 4
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["options"]["chat"] == "true"
    sizes = {r["variant"]: r for r in metrics["sizes"]}
    assert sizes["TS-R+Aug"]["dropped"] == 5


def test_augmented_pairs_put_a_generated_sentence_in_place_of_the_answer(squad_file):
    suite = get_suite("faithfulness")
    pairs = suite.pairs(squad_file, seed=0)
    asked = []
    sentences = {
        "Where did Anna move in 1990?": "Anna moved to Paris in 1990.",
        "What did Anna teach?": "She taught music.",  # lacks "piano": dropped
        "What is the bridge made of?": "The bridge is made of steel.",
        "What colour is the bridge?": "The bridge is red.",
    }

    def generate(requests):
        asked.extend(requests)
        return [Generation(" " + sentences[r.prompt.split('"')[1]], 7) for r in requests]

    aug = {p.pair_id: p for p in augmented_pairs(pairs, generate)}
    assert len(asked) == 4 and all(r.chat for r in asked)
    assert sorted(aug) == [f"TS-R+Aug:squad-q{i}" for i in range(1, 6)]
    q1 = aug["TS-R+Aug:squad-q1"].intervened
    assert q1.context == "Anna was born in Oslo. Anna moved to Paris in 1990."
    assert q1.features["variant"] == "TS-R+Aug" and q1.features["expected"] == "unknown"
    q3 = aug["TS-R+Aug:squad-q3"].intervened.features
    assert (q3["dropped"], q3["drop_detail"]) == (AUGMENT_FAILED, "She taught music.")
    assert aug["TS-R+Aug:squad-q2"].intervened.features["dropped"] == FIRST_SENTENCE
    q4 = aug["TS-R+Aug:squad-q4"].intervened
    assert q4.context == "The bridge opened in 1932. The bridge is made of steel."


def test_data_options_reach_the_reader_and_the_deletions(squad_file):
    by_answer = get_suite("faithfulness", {"rationale": "answer"}).pairs(squad_file, seed=0)
    q1 = next(p.original for p in by_answer if p.pair_id == "OS:squad-q1")
    assert [q1.context[s:e] for s, e in q1.rationale] == ["Paris"]
    pysbd = get_suite("faithfulness", {"splitter": "pysbd"}).pairs(squad_file, seed=0)
    tsr = next(p.intervened for p in pysbd if p.pair_id == "TS-R:squad-q1")
    assert tsr.features["deletion_splitter"] == "pysbd"
    assert tsr.context == "Anna was born in Oslo. Paris"
    for bad in ({"splitter": "nltk"}, {"rationale": "paragraph"}, {"history_turns": "-1"}):
        with pytest.raises(UsageError):
            get_suite("faithfulness", bad)


def test_reinserted_names_what_replaced_the_support():
    rows = [
        ("TS-R", None, "span"),
        ("TS-R", "Ann", "span"),
        ("TS-R+Aug", "It was Ann.", "span"),
        ("OS-R", float("nan"), "span"),
        ("OS-R", None, "yes"),  # HotpotQA's yes/no answers are never re-inserted
        ("TS-R", None, "free"),
    ]
    frame = pd.DataFrame(rows, columns=["variant", "appended", "answer_type"])
    assert list(frame.apply(reinserted, axis=1)) == [
        "nothing: the answer is still in the text",
        "bare answer",
        "generated sentence",
        "nothing: the answer is still in the text",
        "nothing: not a span answer (yes/no, free)",
        "nothing: not a span answer (yes/no, free)",
    ]


def test_an_item_ts_r_drops_is_dropped_by_aug_for_the_same_reason_unasked():
    """The answer is its whole sentence: TS-R re-inserting it restores the text (dropped);
    +Aug drops it the same way and asks no sentence for it (a sentence would not restore
    the text, and none was asked)."""
    from faithprobe.interventions.deletion import RESTORED
    from faithprobe.interventions.deletion_variants import variant_pairs

    ex = QAExample("r", "Tom lives in Rome. Paris", "Where?", ("Paris",), "span",
                   answer_starts=(19,), rationale=((19, 24),))  # fmt: skip
    pairs = variant_pairs(ex, splitter="pysbd")
    assert {p.pair_id: p.dropped for p in pairs}["TS-R:r"] == RESTORED
    asked = []

    def generate(requests):
        asked.extend(requests)
        return [Generation("It is Paris.", 4) for _ in requests]

    (aug,) = augmented_pairs(pairs, generate, splitter="pysbd")
    assert (aug.pair_id, aug.dropped, asked) == ("TS-R+Aug:r", RESTORED, [])
    assert aug.intervened.features["variant"] == "TS-R+Aug"
