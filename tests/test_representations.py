"""The representation analysis: token alignment by character offsets on hand-made offset
lists, cosines on hand-made tensors, the encoding against the extractive QA backend's, and
end-to-end runs (library and command line) with two tiny random BERT QA models on a
hand-made SQuAD-format file and a hand-written HotpotQA file (OS vs OS-R, the method's
Table 9)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from typer.testing import CliRunner

from conftest import tiny_bert_config
from faithprobe.cli import app
from faithprobe.errors import ModelError, UsageError
from faithprobe.qa.questions import history_question
from faithprobe.representations.alignment import shared_tokens
from faithprobe.representations.analysis import analyze, read_items
from faithprobe.representations.config import (
    AnalysisConfig,
    NamedEncoder,
    parse_named_encoder,
    parse_named_encoders,
)
from faithprobe.representations.similarity import (
    Encoder,
    cosines,
    encode,
    mean_or_nan,
    summary_cosine,
    summary_position,
    token_cosines,
)
from faithprobe.requests import SpanAnswerRequest
from faithprobe.subjects.hf.extractive_qa import HFQA

# -- alignment ------------------------------------------------------------------------

Q, C = 0, 1


def test_identical_inputs_pair_every_token_but_the_specials():
    offsets = [None, (Q, 0, 4), (Q, 4, 9), None, (C, 0, 5), (C, 5, 11), None]
    ids = [1, 10, 11, 2, 20, 21, 2]
    pairs = shared_tokens(offsets, ids, offsets, ids, [(0, 0, 11)])
    assert pairs == [(1, 1), (2, 2), (4, 4), (5, 5)]


def test_deletion_in_the_middle_pairs_by_offsets_not_positions():
    # original context "Ann sat. Bob ran. Cat hid." ; TS-R removed " Bob ran."
    #                   0123456789012345678901234
    original = [None, (Q, 0, 3), None, (C, 0, 3), (C, 3, 7), (C, 7, 8),
                (C, 8, 12), (C, 12, 16), (C, 16, 17), (C, 17, 21), (C, 21, 25), (C, 25, 26), None]  # fmt: skip
    o_ids = [1, 9, 2, 30, 31, 32, 40, 41, 32, 50, 51, 32, 2]
    # new context "Ann sat. Cat hid." = "Ann sat." (0..8) + " Cat hid." (orig 17..26)
    new = [None, (Q, 0, 3), None, (C, 0, 3), (C, 3, 7), (C, 7, 8),
           (C, 8, 12), (C, 12, 16), (C, 16, 17), None]  # fmt: skip
    n_ids = [1, 9, 2, 30, 31, 32, 50, 51, 32, 2]
    copied = [(0, 0, 8), (8, 17, 9)]
    pairs = shared_tokens(original, o_ids, new, n_ids, copied)
    assert pairs == [(1, 1), (3, 3), (4, 4), (5, 5), (9, 6), (10, 7), (11, 8)]


def test_truncation_pairs_the_kept_prefix():
    original = [None, (Q, 0, 2), None, (C, 0, 4), (C, 4, 8), (C, 8, 12), (C, 12, 16), None]
    ids = [1, 5, 2, 20, 21, 22, 23, 2]
    new = [None, (Q, 0, 2), None, (C, 0, 4), (C, 4, 8), None]
    pairs = shared_tokens(original, ids, new, [1, 5, 2, 20, 21, 2], [(0, 0, 8)])
    assert pairs == [(1, 1), (3, 3), (4, 4)]


def test_tokens_at_the_cut_boundary_are_not_paired():
    # original "ab cd ef gh" ; new "ab ef gh": pieces "ab" (0..2) and " ef gh" (orig 5..11)
    original = [None, (C, 0, 2), (C, 2, 5), (C, 5, 8), (C, 8, 11), None]
    o_ids = [1, 10, 11, 12, 13, 2]
    copied = [(0, 0, 2), (2, 5, 6)]
    # " ef" has the right span but another id (the text around it tokenised differently)
    new = [None, (C, 0, 2), (C, 2, 5), (C, 5, 8), None]
    assert shared_tokens(original, o_ids, new, [1, 10, 77, 13, 2], copied) == [(1, 1), (4, 3)]
    # "abef" straddles the cut (one piece ends inside it): not paired even though "ab ef"
    # would map to some span; "b" maps to (1, 2), which no original token has
    new = [None, (C, 0, 5), (C, 5, 8), None]
    assert shared_tokens(original, o_ids, new, [1, 12, 13, 2], copied) == [(4, 2)]
    new = [None, (C, 1, 2), (C, 1, 4), (C, 2, 5), None]
    assert shared_tokens(original, o_ids, new, [1, 10, 12, 12, 2], copied) == [(3, 3)]
    # a span running past the last copied piece (appended text) is not paired
    new = [None, (C, 5, 9), None]
    assert shared_tokens(original, o_ids, new, [1, 13, 2], copied) == []


def test_question_tokens_pair_by_question_offsets_and_specials_never():
    original = [None, (Q, 0, 3), (Q, 3, 6), None, (C, 0, 3), None]
    new = [None, (Q, 0, 3), (Q, 3, 6), None, (C, 0, 3), None]
    # the context token (0, 3) is not copied (e.g. appended): only the question pairs
    assert shared_tokens(original, [1, 5, 6, 2, 7, 2], new, [1, 5, 6, 2, 7, 2], []) == [
        (1, 1),
        (2, 2),
    ]
    # a question token with the span of a context token is not mistaken for it
    new = [None, (Q, 0, 3), None]
    assert shared_tokens(original, [1, 5, 6, 2, 7, 2], new, [1, 7, 2], [(0, 0, 3)]) == []


def test_repeated_spans_pair_in_order_and_empty_spans_never():
    original = [(C, 0, 1), (C, 0, 1), (C, 1, 1), (C, 1, 2)]
    ids = [5, 5, 6, 7]
    assert shared_tokens(original, ids, original, ids, [(0, 0, 2)]) == [(0, 0), (1, 1), (3, 3)]
    with pytest.raises(ValueError):
        shared_tokens(original, ids[:2], original, ids, [(0, 0, 2)])


# -- cosines --------------------------------------------------------------------------


def test_cosines_on_hand_made_tensors():
    a = torch.tensor([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [1.0, 1.0, 0.0]])
    b = torch.tensor([[0.0, 3.0, 0.0], [0.0, 5.0, 0.0], [-1.0, -1.0, 0.0]])
    assert cosines(a, b).tolist() == pytest.approx([0.0, 1.0, -1.0])
    assert summary_cosine(a, b) == pytest.approx(0.0)  # row 0 only
    assert summary_cosine(a, a) == pytest.approx(1.0)
    assert summary_cosine(a, b, "last") == pytest.approx(-1.0)  # the last row only
    cos = token_cosines(a, b, [(1, 1), (2, 0), (1, 0)])
    assert cos.tolist() == pytest.approx([1.0, math.sqrt(0.5), 1.0])
    assert mean_or_nan(cos) == pytest.approx((2 + math.sqrt(0.5)) / 3)
    assert len(token_cosines(a, b, [])) == 0 and math.isnan(mean_or_nan(np.zeros(0)))
    assert cosines(torch.zeros(1, 3), b[:1]).tolist() == [0.0]  # no division by zero


# -- data, models ---------------------------------------------------------------------

A1 = "Mia lives in a small town. She works at the library. The library opens at nine. Her dog is called Rex."
A2 = "The river is long. Boats carry wood on it. The water is cold in winter."
B1 = "Tom plays the violin. He practises every morning. His teacher comes from Vienna."
QUESTIONS = [
    ("a", A1, "q1", "Where does Mia work?", "the library"),
    ("a", A1, "q2", "What is the dog called?", "Rex"),  # last sentence: TS == OS
    ("a", A1, "q3", "Where does Mia live?", "a small town"),  # first sentence: TS-R drops
    ("a", A2, "q4", "What do boats carry?", "wood"),
    ("b", B1, "q5", "When does Tom practise?", "every morning"),
    ("b", B1, "q6", "Where is the teacher from?", "Vienna"),  # last sentence
]


def squad_doc() -> dict:
    articles: dict = {}
    for title, context, qid, question, answer in QUESTIONS:
        qa = {"id": qid, "question": question,
              "answers": [{"text": answer, "answer_start": context.index(answer)}]}  # fmt: skip
        articles.setdefault(title, {}).setdefault(context, []).append(qa)
    data = [
        {"title": t, "paragraphs": [{"context": c, "qas": q} for c, q in paragraphs.items()]}
        for t, paragraphs in articles.items()
    ]
    return {"version": "1.1", "data": data}


@pytest.fixture(scope="module")
def squad_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("repr") / "mini-squad.json"
    path.write_text(json.dumps(squad_doc()))
    return path


def _qa_model(tokenizer, seed: int):
    from transformers import BertForQuestionAnswering

    torch.manual_seed(seed)
    return BertForQuestionAnswering(tiny_bert_config(len(tokenizer))).eval()


@pytest.fixture(scope="module")
def model_folders(tiny_pair_tokenizer, tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    folders = {}
    for name, seed in (("OT", 0), ("IBT", 1)):
        folder = root / f"qa-{name.lower()}"
        _qa_model(tiny_pair_tokenizer, seed).save_pretrained(folder)
        tiny_pair_tokenizer.save_pretrained(folder)
        folders[name] = folder
    return folders


@pytest.fixture(scope="module")
def specs(model_folders):
    return [NamedEncoder(name, str(path)) for name, path in model_folders.items()]


def test_encoding_is_the_extractive_backends_first_window(tiny_pair_tokenizer):
    model = _qa_model(tiny_pair_tokenizer, 0)
    subject = HFQA(model, tiny_pair_tokenizer, name="qa", max_length=40, doc_stride=8)
    encoder = Encoder.build("qa", "-", model.base_model, tiny_pair_tokenizer, 40)
    assert encoder.max_length == subject.max_length and encoder.token_types
    for context in (B1, A1 + " " + A2):
        window, _ = subject._encode(SpanAnswerRequest("Where is the teacher from?", context))
        enc = encoder.encode("Where is the teacher from?", context)
        first = window.windows[0]
        assert (enc.ids, enc.types) == first.row
        assert [o[1:] if o and o[0] == 1 else None for o in enc.offsets] == list(first.offsets)
        assert enc.truncated == (len(window.windows) > 1)
    assert enc.truncated and len(enc) == 40
    # the question tokens carry offsets in the question; specials carry none
    assert enc.offsets[0] is None and enc.offsets[1][0] == 0
    plain = encode(tiny_pair_tokenizer, "q?", B1, max_length=300, token_types=False)
    assert plain.types is None and not plain.truncated


def test_hidden_states_are_the_qa_models_encoder_output(tiny_pair_tokenizer, model_folders):
    encoder = Encoder.load("OT", model_folders["OT"], 300)
    model = _qa_model(tiny_pair_tokenizer, 0)
    enc = encoder.encode("Where does Mia work?", A1)
    (states,) = encoder.hidden_states([enc])
    ids = torch.tensor([enc.ids])
    with torch.no_grad():
        expected = model.bert(input_ids=ids, token_type_ids=torch.tensor([enc.types]))[0][0]
    torch.testing.assert_close(states, expected, atol=1e-5, rtol=1e-4)


def test_the_summary_token_is_the_models_own_first_or_last():
    from transformers import BertConfig, GPT2Config, RobertaConfig, XLNetConfig

    assert summary_position(BertConfig()) == "first"
    assert summary_position(RobertaConfig()) == "first"
    assert summary_position(XLNetConfig()) == "last"  # <sep> <cls> end its inputs
    assert summary_position(GPT2Config()) == "last"
    assert summary_position(XLNetConfig(), "first") == "first"
    assert summary_position(BertConfig(), "last") == "last"
    with pytest.raises(UsageError, match="choose from auto, first, last"):
        summary_position(BertConfig(), "mean")


def test_a_last_token_model_is_compared_at_its_last_token(squad_file, specs):
    """Forcing the last token on the BERT models: each item's cosine is that of the inputs'
    last tokens' states (padding dropped), and the record says which token was compared."""
    forced = analyze(AnalysisConfig(models=specs[:1], data=squad_file, limit=2, pooling="last"))
    assert [m["summary_token"] for m in forced.metrics["models"]] == ["last"]
    encoder = Encoder.load(specs[0].name, specs[0].path, 300, "last")
    item = read_items(squad_file, limit=2).items[0]
    variant, changed = next(iter(item.variants.items()))
    o, x = (encoder.encode(history_question(e), e.context) for e in (item.original, changed))
    a, b = encoder.hidden_states([o, x])
    row = forced.similarities.query("item_id == @item.id and variant == @variant").iloc[0]
    assert row["cls_cosine"] == pytest.approx(float(cosines(a[-1:], b[-1:])[0]), abs=1e-6)
    assert row["cls_cosine"] != pytest.approx(float(cosines(a[:1], b[:1])[0]), abs=1e-6)
    with pytest.raises(UsageError, match="--pooling"):
        analyze(AnalysisConfig(models=specs, data=squad_file, pooling="mean"))


def test_read_items_uses_the_faithfulness_suites_variants(squad_file):
    read = read_items(squad_file, limit=None)
    assert [i.id for i in read.items] == [f"squad-q{k}" for k in range(1, 7)]
    by_id = {i.id: i for i in read.items}
    assert set(by_id["squad-q3"].variants) == {"TS"}
    assert set(by_id["squad-q1"].variants) == {"TS", "TS-R"}
    assert by_id["squad-q2"].variants["TS"].context == A1
    assert len(by_id["squad-q2"].inputs()) == 2  # OS (= TS) and TS-R
    assert read.drops == [
        {"variant": "TS-R", "reason": "the rationale begins in the first sentence", "count": 1}
    ]
    assert len(read_items(squad_file, limit=3).items) == 3


@pytest.fixture(scope="module")
def analysis(squad_file, specs):
    return analyze(AnalysisConfig(models=specs, data=squad_file, limit=None, batch_size=16))


def test_rows_per_model_item_and_comparison(analysis):
    sims = analysis.similarities
    assert len(sims) == 2 * (6 + 5)  # 2 models x (6 TS + 5 TS-R)
    assert set(sims["model"]) == {"OT", "IBT"}
    ts_r = sims[sims["comparison"] == "OS vs TS-R"]
    assert "squad-q3" not in set(ts_r["item_id"])
    assert sims["passage_id"].nunique() == 3
    assert not sims["truncated_original"].any()
    assert sims[["cls_cosine", "shared_token_mean"]].notna().all().all()
    assert analysis.metrics["sizes"]["compared"] == {"OS vs TS": 6, "OS vs TS-R": 5}
    assert [m["items_truncated"] for m in analysis.metrics["models"]] == [0, 0]


def test_identical_text_gives_cosine_one_and_pairs_every_token(analysis):
    sims = analysis.similarities
    same = sims[(sims["comparison"] == "OS vs TS") & sims["same_text"]]
    assert set(same["item_id"]) == {"squad-q2", "squad-q6"}
    assert np.allclose(same["cls_cosine"], 1.0, atol=1e-5)
    assert np.allclose(same["shared_token_mean"], 1.0, atol=1e-5)
    # every token but the three specials
    assert (same["n_shared_tokens"] == same["n_tokens_original"] - 3).all()
    assert (same["n_tokens_original"] == same["n_tokens_intervened"]).all()
    # a real change moves the states
    changed = sims[~sims["same_text"]]
    assert (changed["cls_cosine"] < 1 - 1e-4).all()


def test_ts_r_pairs_the_kept_text_not_the_appended_answer(analysis):
    sims = analysis.similarities.set_index(["model", "item_id", "comparison"])
    row = sims.loc[("OT", "squad-q1", "OS vs TS-R")]  # "the library" re-inserted at the end
    tokens = analysis.tokens
    q1 = tokens[(tokens["model"] == "OT") & (tokens["item_id"] == "squad-q1")
                & (tokens["comparison"] == "OS vs TS-R")]  # fmt: skip
    assert len(q1) == row["n_shared_tokens"]
    n_question = (q1["segment"] == "question").sum()
    assert n_question > 0 and row["n_shared_context_tokens"] == len(q1) - n_question
    assert 0 < row["n_shared_context_tokens"] < row["n_context_tokens_intervened"]
    # the token table holds one row per paired token
    total = analysis.similarities["n_shared_tokens"].sum()
    assert len(analysis.tokens) == total
    assert analysis.tokens["cosine"].dtype == np.float32


def test_a_deletion_in_the_middle_pairs_the_moved_tokens(squad_file, tiny_pair_tokenizer):
    """With a real tokenizer: OS-R of a rationale in the middle shifts the later tokens;
    they are still paired, each with the token covering the same original text."""
    from faithprobe.interventions.deletion import remove_support

    (item,) = [i for i in read_items(squad_file, limit=None).items if i.id == "squad-q1"]
    original = item.original
    changed = remove_support(original, reinsert=False).example
    assert (
        changed.context
        == "Mia lives in a small town. The library opens at nine. Her dog is called Rex."
    )
    encoder = Encoder.build("qa", "-", _qa_model(tiny_pair_tokenizer, 0).base_model,
                            tiny_pair_tokenizer, 300)  # fmt: skip
    o = encoder.encode(original.question, original.context)
    x = encoder.encode(changed.question, changed.context)
    pairs = shared_tokens(o.offsets, o.ids, x.offsets, x.ids, changed.features["copied"])
    moved = [(i, j) for i, j in pairs if i != j]
    assert len(moved) > 5
    for i, j in pairs:
        assert o.ids[i] == x.ids[j]
        (seq, s, e), (_, s2, e2) = o.offsets[i], x.offsets[j]
        text = original.context if seq == 1 else original.question
        new_text = changed.context if seq == 1 else changed.question
        assert text[s:e] == new_text[s2:e2]
    # every token but the specials and those at the cut is shared
    n_real = sum(off is not None for off in x.offsets)
    assert n_real - 2 <= len(pairs) <= n_real


def test_metrics_estimates_and_differences(analysis):
    m = analysis.metrics
    assert len(m["estimates"]) == 2 * 2 * 2  # models x comparisons x measures
    est = {(e["model"], e["comparison"], e["measure"]): e for e in m["estimates"]}
    e = est[("OT", "OS vs TS", "cls_cosine")]
    rows = analysis.similarities.query("model == 'OT' and comparison == 'OS vs TS'")
    assert e["mean"] == pytest.approx(rows["cls_cosine"].mean())
    assert e["std"] == pytest.approx(rows["cls_cosine"].std())
    assert e["n"] == 6 and e["n_passages"] == 3 and e["ci_low"] <= e["mean"] <= e["ci_high"]
    assert "passages" in e["method"]
    assert len(m["differences"]) == 2 * 2  # one model pair x comparisons x measures
    d = m["differences"][0]
    assert (d["model"], d["reference"]) == ("IBT", "OT") and d["n"] == 6
    ot = analysis.similarities.query("model == 'OT' and comparison == 'OS vs TS'")
    ibt = analysis.similarities.query("model == 'IBT' and comparison == 'OS vs TS'")
    assert d["difference"] == pytest.approx(ibt["cls_cosine"].mean() - ot["cls_cosine"].mean())
    assert "Wilcoxon" in d["test"]


def test_batch_size_changes_nothing(squad_file, specs, analysis):
    one = analyze(AnalysisConfig(models=specs, data=squad_file, limit=None, batch_size=1))
    cols = ["cls_cosine", "shared_token_mean"]
    pd.testing.assert_frame_equal(
        one.similarities.drop(columns=cols), analysis.similarities.drop(columns=cols)
    )
    np.testing.assert_allclose(one.similarities[cols], analysis.similarities[cols], atol=1e-5)
    np.testing.assert_allclose(one.tokens["cosine"], analysis.tokens["cosine"], atol=1e-5)


def test_a_short_window_cuts_and_says_so(squad_file, specs):
    cut = analyze(AnalysisConfig(models=specs, data=squad_file, limit=None, max_length=24))
    sims = cut.similarities
    assert sims["truncated_original"].any()
    assert (sims["n_tokens_original"] <= 24).all()
    assert cut.metrics["models"][0]["max_length"] == 24
    assert cut.metrics["models"][0]["items_truncated"] == 6


def test_model_arguments():
    assert parse_named_encoder("OT=models/qa-ot") == NamedEncoder("OT", "models/qa-ot")
    assert parse_named_encoder("models/qa-ibt/") == NamedEncoder("qa-ibt", "models/qa-ibt/")
    for bad in ("=models/x", "OT=", " = "):
        with pytest.raises(UsageError, match="NAME=PATH"):
            parse_named_encoder(bad)
    with pytest.raises(UsageError, match="two or more"):
        parse_named_encoders(["OT=a"])
    with pytest.raises(UsageError, match="differ"):
        parse_named_encoders(["OT=a", "OT=b"])
    with pytest.raises(ModelError, match="cannot load"):
        Encoder.load("X", "/nonexistent/model-folder")


# -- HotpotQA: OS vs OS-R (the method's Table 9) ------------------------------------------

HOTPOT = Path(__file__).parent / "data" / "hotpotqa_tiny.json"


def test_hotpotqa_items_are_compared_without_their_supporting_facts(specs):
    read = read_items(HOTPOT, limit=None)
    assert [i.id for i in read.items] == [f"hotpot-h{k}" for k in range(1, 5)]
    assert all(set(i.variants) == {"OS-R"} for i in read.items) and read.drops == []
    analysis = analyze(AnalysisConfig(models=specs, data=HOTPOT, limit=None))
    sims = analysis.similarities
    assert len(sims) == 2 * 4 and set(sims["comparison"]) == {"OS vs OS-R"}
    assert set(sims["variant"]) == {"OS-R"} and not sims["same_text"].any()
    assert (sims["cls_cosine"] < 1 - 1e-4).all()
    m = analysis.metrics
    assert m["sizes"]["compared"] == {"OS vs OS-R": 4} and m["sizes"]["passages"] == 4
    assert {(e["model"], e["comparison"]) for e in m["estimates"]} == {
        ("OT", "OS vs OS-R"), ("IBT", "OS vs OS-R")
    }  # fmt: skip
    est = {(e["model"], e["measure"]): e for e in m["estimates"]}
    ot = sims[sims["model"] == "OT"]
    assert est[("OT", "shared_token_mean")]["mean"] == pytest.approx(ot["shared_token_mean"].mean())
    assert [(d["comparison"], d["n"]) for d in m["differences"]] == [("OS vs OS-R", 4)] * 2
    # the re-inserted answers ("Norway", "cello") are not paired: fewer context tokens shared
    # than the intervened text has; h2 (yes/no) and h3 (answer still there) get none appended
    by_item = ot.set_index("item_id")
    for item in ("hotpot-h1", "hotpot-h4"):
        row = by_item.loc[item]
        assert row["n_shared_context_tokens"] < row["n_context_tokens_intervened"]
    appended = {i.id: i.variants["OS-R"].features["appended"] for i in read.items}
    assert appended == {"hotpot-h1": "Norway", "hotpot-h2": None, "hotpot-h3": None,
                        "hotpot-h4": "cello"}  # fmt: skip


def test_cli_on_hotpotqa_writes_the_os_r_comparison_only(model_folders, tmp_path):
    out = tmp_path / "repr-hotpot"
    args = ["analyze", "representations", "--data", str(HOTPOT), "--out", str(out),
            "--model", f"OT={model_folders['OT']}", "--model", f"IBT={model_folders['IBT']}"]  # fmt: skip
    result = CliRunner().invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    pngs = sorted(p.name for p in (out / "plots").glob("*.png"))
    assert pngs == ["cls_os-os-r.png", "tokens_os-os-r.png"]
    table = (out / "tables" / "shared_token_mean.md").read_text()
    assert "OS vs OS-R" in table and "OS vs TS" not in table and "IBT" in table
    assert "OS vs OS-R" in (out / "tables" / "differences.md").read_text()


# -- command line ---------------------------------------------------------------------


def test_cli_writes_tables_and_histograms(squad_file, model_folders, tmp_path):
    out = tmp_path / "repr"
    args = ["analyze", "representations", "--data", str(squad_file), "--out", str(out),
            "--model", f"OT={model_folders['OT']}", "--model", f"IBT={model_folders['IBT']}",
            "--batch-size", "4"]  # fmt: skip
    result = CliRunner().invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    for name in ("similarities.parquet", "token_similarities.parquet", "metrics.json"):
        assert (out / name).is_file()
    assert not list(out.glob("*.tmp"))
    for name in ("cls_cosine", "shared_token_mean", "differences", "sizes"):
        assert (out / "tables" / f"{name}.md").is_file()
        assert (out / "tables" / f"{name}.csv").is_file()
    pngs = sorted(p.name for p in (out / "plots").glob("*.png"))
    assert pngs == ["cls_os-ts-r.png", "cls_os-ts.png", "tokens_os-ts-r.png", "tokens_os-ts.png"]
    table = (out / "tables" / "cls_cosine.md").read_text()
    assert "OS vs TS-R" in table and "IBT" in table and " ± " in table
    assert "OS vs TS" in result.output and "items cut" in result.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["options"]["batch_size"] == 4 and metrics["sizes"]["items"] == 6
    assert len(pd.read_parquet(out / "similarities.parquet")) == 22


@pytest.mark.parametrize(
    ("models", "message"),
    [
        (["--model", "=x", "--model", "B=y"], "NAME=PATH"),
        (["--model", "A=x"], "two or more"),
        (["--model", "A=/nonexistent/a", "--model", "B=/nonexistent/b"], "cannot load"),
    ],
)
def test_cli_errors_exit_2_with_a_message(squad_file, tmp_path, models, message):
    args = ["analyze", "representations", "--data", str(squad_file),
            "--out", str(tmp_path / "o"), *models]  # fmt: skip
    result = CliRunner().invoke(app, args, terminal_width=200)
    assert result.exit_code == 2
    assert "error:" in result.output and message in " ".join(result.output.split())
    assert not (tmp_path / "o" / "metrics.json").exists()


def test_cli_missing_data_file(tmp_path, model_folders):
    args = ["analyze", "representations", "--data", str(tmp_path / "none.json"),
            "--out", str(tmp_path / "o"), "--model", f"A={model_folders['OT']}",
            "--model", f"B={model_folders['IBT']}"]  # fmt: skip
    result = CliRunner().invoke(app, args, terminal_width=200)
    assert result.exit_code == 2 and "no such data file" in " ".join(result.output.split())


def test_cli_heldout_of_a_folder_without_a_split(squad_file, model_folders, tmp_path):
    args = ["analyze", "representations", "--data", str(squad_file),
            "--out", str(tmp_path / "o"), "--heldout-of", str(model_folders["OT"]),
            "--model", f"A={model_folders['OT']}", "--model", f"B={model_folders['IBT']}"]  # fmt: skip
    result = CliRunner().invoke(app, args, terminal_width=200)
    assert result.exit_code == 2 and "training.json" in result.output
