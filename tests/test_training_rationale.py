"""``faithprobe train qa --rationale-tagging``: the rationale each training row carries, the
per-token targets, the joint loss, and a trained folder that loads as a plain QA model."""

from __future__ import annotations

import json

import torch

from conftest import tiny_bert_config
from faithprobe.subjects import load_subject
from faithprobe.subjects.hf.extractive_qa import HFQA
from faithprobe.training.configs import QATrainConfig
from faithprobe.training.extractive_qa import encode_items, train_qa, training_items
from faithprobe.training.joint_qa import IGNORE, JointQA, rationale_loss, rationale_targets
from test_training_qa import _config, base, examples, squad_file  # noqa: F401 (fixtures)


def test_a_token_is_in_the_rationale_when_it_overlaps_a_span():
    offsets = [None, None, (0, 4), (5, 10), (11, 13), (13, 18), None]
    assert rationale_targets(offsets, [(5, 12)]) == [IGNORE, IGNORE, 0, 1, 1, 0, IGNORE]
    assert rationale_targets(offsets, []) == [IGNORE, IGNORE, 0, 0, 0, 0, IGNORE]
    assert rationale_targets(offsets, [(0, 1), (17, 40)]) == [IGNORE, IGNORE, 1, 0, 0, 1, IGNORE]


def test_each_row_carries_its_variants_rationale(examples):  # noqa: F811
    items, _ = training_items(examples[1:2], "ibt", splitter="pysbd")
    by_variant = {item.variant: item for item in items}
    original = examples[1]
    assert by_variant["OS"].rationale == original.rationale != ()
    assert by_variant["TS"].rationale == original.rationale  # TS cuts after it
    assert by_variant["TS-R"].rationale == ()  # deleted
    assert {item.passage for item in items} == {by_variant["OS"].passage}


def test_the_targets_mark_the_rationale_tokens_of_each_window(examples, tiny_pair_tokenizer):  # noqa: F811
    items, _ = training_items(examples[1:2], "ibt", splitter="pysbd")
    cfg = QATrainConfig(out="x", train="x", strategy="ibt", max_length=128,
                        rationale_tagging=True)  # fmt: skip
    rows, labels, windows, _ = encode_items(tiny_pair_tokenizer, items, cfg, True)
    assert windows == [1] * len(items)  # one window each: rows line up with items
    for (ids, _), label, item in zip(rows, labels, items, strict=True):
        targets = label["rationale_labels"]
        assert len(targets) == len(ids)
        tagged = tiny_pair_tokenizer.decode(
            [i for i, t in zip(ids, targets, strict=True) if t == 1]
        )
        if item.rationale:
            ((start, end),) = item.rationale
            assert tagged.replace(" ", "") == item.context[start:end].replace(" ", "")
        else:
            assert tagged == ""
    plain = QATrainConfig(out="x", train="x", strategy="ibt", max_length=64, doc_stride=16)
    _, unlabelled, _, _ = encode_items(tiny_pair_tokenizer, items, plain, True)
    assert "rationale_labels" not in unlabelled[0]


def test_the_rationale_loss_counts_context_tokens_only():
    p = torch.tensor([[0.9, 0.2, 0.5]])
    t = torch.tensor([[1, 0, IGNORE]])
    expected = -(torch.log(torch.tensor(0.9)) + torch.log(torch.tensor(0.8))) / 2
    torch.testing.assert_close(rationale_loss(p, t), expected)
    assert rationale_loss(p, torch.full_like(t, IGNORE)) == 0


def test_the_joint_model_learns_to_tag_the_rationale(examples, tiny_pair_tokenizer):  # noqa: F811
    from transformers import BertForQuestionAnswering

    from faithprobe.subjects.hf.encoder import pad_rows
    from faithprobe.training.common import collate

    items, _ = training_items(examples[1:2], "ot", splitter="pysbd")  # one row, to fit
    cfg = QATrainConfig(out="x", train="x", strategy="ot", max_length=64, rationale_tagging=True)
    rows, labels, _, _ = encode_items(tiny_pair_tokenizer, items, cfg, True)
    batch = collate([{"row": r, "labels": lab} for r, lab in zip(rows, labels, strict=True)],
                    tiny_pair_tokenizer.pad_token_id)  # fmt: skip
    assert batch["rationale_labels"].shape == batch["input_ids"].shape
    assert pad_rows(rows, 0)["input_ids"].shape == batch["input_ids"].shape
    torch.manual_seed(0)
    config = tiny_bert_config(len(tiny_pair_tokenizer))
    model = JointQA(BertForQuestionAnswering(config), rationale=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for _ in range(30):
        optimizer.zero_grad()
        model(**batch)["loss"].backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        p = model(**{k: batch[k] for k in ("input_ids", "attention_mask", "token_type_ids")})
    probabilities, targets = p["rationale_probabilities"], batch["rationale_labels"]
    assert probabilities[targets == 1].mean() > 0.8 > 0.2 > probabilities[targets == 0].mean()


def test_a_rationale_tagging_model_trains_and_loads_as_plain_qa(squad_file, base, tmp_path):  # noqa: F811
    out = tmp_path / "rt"
    summary = train_qa(_config(squad_file, base, out, strategy="ot", rationale_tagging=True),
                       progress=False, log=lambda _: None)  # fmt: skip
    saved = json.loads((out / "training.json").read_text())
    assert saved["rationale_tagging"] == {"weight": 5.0, "head": "trained jointly, not saved"}
    assert saved["hyperparameters"]["rationale_tagging"] is True
    assert 0 < saved["train"]["rationale_token_share"] < 1
    assert saved["model_class"] == "JointQA" and summary["scores"]
    assert json.loads((out / "config.json").read_text())["architectures"] == [
        "BertForQuestionAnswering"
    ]
    assert not list(out.glob("answer_kind_head*")) and not list(out.glob("*rationale*"))
    assert isinstance(load_subject(str(out)), HFQA)
