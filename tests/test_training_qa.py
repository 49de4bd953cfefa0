"""The extractive-QA recipe (OT / IBT) on a hand-made SQuAD file and a tiny random BERT:
which rows each strategy trains on, their targets, the document split, training."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from conftest import check_resume, tiny_bert_config
from faithprobe.cli import app
from faithprobe.datasets.qa_formats import read_qa
from faithprobe.datasets.splits import document_key, heldout_split_of, split_documents
from faithprobe.errors import UsageError
from faithprobe.interventions.deletion import AUGMENT_FAILED, FIRST_SENTENCE
from faithprobe.records import QAExample
from faithprobe.requests import Generation
from faithprobe.subjects import load_subject
from faithprobe.subjects.hf.extractive_qa import HFQA
from faithprobe.suite_protocol import get_suite
from faithprobe.training import extractive_qa as recipe
from faithprobe.training.configs import QATrainConfig, parse_mix
from faithprobe.training.extractive_qa import (
    NO_TARGET,
    NOT_A_SPAN,
    WHOLE_STORY,
    encode_items,
    train_qa,
    training_items,
    window_target,
)

PARAGRAPH = (
    "Mara lives in Oslo. She works at the harbour. Her brother Finn sells boats. "
    "Finn owns a red kayak."
)
QUESTIONS = [  # (question, answer, rationale position)
    ("Where does Mara live?", "Oslo"),  # first sentence: no TS-R
    ("Who sells boats?", "Finn"),  # third sentence: TS and TS-R
    ("What does Finn own?", "a red kayak"),  # last sentence: TS is the whole story
]


def _squad(titles: list[str]) -> dict:
    data = []
    for t, title in enumerate(titles):
        context = PARAGRAPH.replace("Mara", title)
        qas = [
            {
                "id": f"{t}-{q}",
                "question": question.replace("Mara", title),
                "answers": [{"text": a, "answer_start": context.index(a, 30 if q == 1 else 0)}],
            }
            for q, (question, a) in enumerate(QUESTIONS)
        ]
        data.append({"title": title, "paragraphs": [{"context": context, "qas": qas}]})
    return {"version": "1.1", "data": data}


@pytest.fixture(scope="module")
def squad_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "squad.json"
    path.write_text(json.dumps(_squad(["Mara", "Ines", "Olga", "Pia"])))
    return path


@pytest.fixture(scope="module")
def examples(squad_file):
    return read_qa(squad_file, splitter="pysbd")


def test_ot_trains_on_the_original_stories_only(examples):
    items, skipped = training_items(examples[:3], "ot", splitter="pysbd")
    assert [(i.id, i.variant, i.answer) for i in items] == [
        (ex.id, "OS", ex.answers[0]) for ex in examples[:3]
    ]
    assert skipped == {}


def test_ot_ts_trains_on_os_and_ts_with_the_gold_span(examples):
    items, skipped = training_items(examples[:3], "ot-ts", splitter="pysbd")
    assert [(i.id.split("/")[-1], i.variant) for i in items] == [
        ("squad-0-0", "OS"),
        ("ts", "TS"),
        ("squad-0-1", "OS"),
        ("ts", "TS"),
        ("squad-0-2", "OS"),
    ]
    for item in items:
        assert item.context[item.start : item.start + len(item.answer)] == item.answer
        assert item.kind == "span"
    ts = items[1]
    assert ts.context == "Mara lives in Oslo." and ts.answer == "Oslo"
    assert skipped == {("TS", WHOLE_STORY): 1}


def test_ibt_adds_ts_r_with_the_null_answer(examples):
    ot, _ = training_items(examples[:3], "ot-ts", splitter="pysbd")
    items, skipped = training_items(examples[:3], "ibt", splitter="pysbd")
    extra = [i for i in items if i not in ot]
    assert [(i.variant, i.answer, i.start, i.kind) for i in extra] == [
        ("TS-R", None, -1, "unknown")
    ] * 2
    # the sentence holding the answer is gone; the bare answer is re-inserted at the end
    assert extra[0].context == "Mara lives in Oslo. She works at the harbour. Finn"
    assert skipped == {("TS", WHOLE_STORY): 1, ("TS-R", FIRST_SENTENCE): 1}
    assert {i.question for i in items} == {ex.question for ex in examples[:3]}


def test_ibt_noreinsert_puts_nothing_back(examples):
    ibt, _ = training_items(examples[:3], "ibt", splitter="pysbd")
    items, skipped = training_items(examples[:3], "ibt-noreinsert", splitter="pysbd")
    gone = [i for i in items if i.variant == "TS-R-noreinsert"]
    assert [(i.kind, i.answer) for i in gone] == [("unknown", None)] * 2
    # the TS-R text without the re-inserted answer: no answer anywhere
    assert gone[0].context == "Mara lives in Oslo. She works at the harbour."
    assert "Finn" not in gone[0].context and "kayak" not in gone[1].context
    bare = [i.context for i in ibt if i.variant == "TS-R"]
    answers = ("Finn", "a red kayak")
    assert [f"{i.context} {a}" for i, a in zip(gone, answers, strict=True)] == bare
    assert [i.variant for i in items if i.variant != "TS-R-noreinsert"] == [
        i.variant for i in ibt if i.variant != "TS-R"
    ]
    assert skipped == {("TS", WHOLE_STORY): 1, ("TS-R-noreinsert", FIRST_SENTENCE): 1}


def _writer(sentences: dict[str, str]):
    """A stand-in sentence writer: answers each augmentation request by the answer quoted
    in its prompt, from ``sentences`` (answer -> sentence)."""

    def generate(requests):
        assert all(r.chat and r.prompt.startswith("Write one short sentence") for r in requests)
        return [Generation(sentences[r.prompt.rsplit('"', 2)[-2]], 9) for r in requests]

    return generate


def test_ibt_aug_puts_a_generated_sentence_in_place_of_the_bare_answer(examples):
    ibt, _ = training_items(examples[:6], "ibt", splitter="pysbd")
    generate = _writer({"Finn": "The boats are sold by Finn.", "a red kayak": "No idea."})
    items, skipped = training_items(examples[:6], "ibt-aug", splitter="pysbd", generate=generate)
    plain = [(i.variant, i.context) for i in ibt if i.variant != "TS-R"]
    assert [(i.variant, i.context) for i in items if i.variant != "TS-R+Aug"] == plain
    aug = [i for i in items if i.variant == "TS-R+Aug"]
    assert [(i.id.split("/")[0], i.kind, i.answer) for i in aug] == [
        ("squad-0-1", "unknown", None),
        ("squad-1-1", "unknown", None),
    ]
    assert aug[0].context == (
        "Mara lives in Oslo. She works at the harbour. The boats are sold by Finn."
    )
    # a TS-R+Aug row is the TS-R row with the sentence for the bare answer
    bare = [i.context for i in ibt if i.variant == "TS-R" and i.id.split("/")[0].endswith("-1")]
    assert [i.context.replace("The boats are sold by Finn.", "Finn") for i in aug] == bare
    # "No idea." lacks the answer: those rows are skipped
    assert skipped == {
        ("TS", WHOLE_STORY): 2,
        ("TS-R+Aug", FIRST_SENTENCE): 2,
        ("TS-R+Aug", AUGMENT_FAILED): 2,
    }
    with pytest.raises(UsageError, match="sentences"):
        training_items(examples[:3], "ibt-aug", splitter="pysbd")


def test_answers_without_a_span_are_skipped():
    yes = QAExample(id="y", context="It rains.", question="Rain?", answers=("yes",),
                    answer_type="yes", rationale=((0, 9),))  # fmt: skip
    assert training_items([yes], "ibt") == ([], {("OS", NOT_A_SPAN): 1})
    with pytest.raises(UsageError, match="strategy"):
        training_items([yes], "both")


YES_NO_STORY = "Ada keeps bees. Her hives stand by the river. The bees made no honey this year."


def _yes_no(answer: str, rationale: str, n: int = 0) -> QAExample:
    start = YES_NO_STORY.index(rationale)
    return QAExample(id=f"yn-{n}", context=YES_NO_STORY, question="Did the bees make honey?",
                     answers=(answer,), answer_type=answer,
                     rationale=((start, start + len(rationale)),))  # fmt: skip


def test_yes_no_questions_train_the_head_with_their_answer_or_unknown():
    no = _yes_no("no", "Her hives stand by the river.")
    free = QAExample(id="f", context="It rains.", question="Why?", answers=("it is wet",),
                     answer_type="free")  # fmt: skip
    items, skipped = training_items([no, free], "ibt", splitter="pysbd", yes_no=True)
    assert [(i.variant, i.kind, i.answer) for i in items] == [
        ("OS", "no", None),
        ("TS", "no", None),
        ("TS-R", "unknown", None),
    ]
    assert items[1].context == "Ada keeps bees. Her hives stand by the river."
    assert items[2].context == "Ada keeps bees."  # a yes/no answer is never re-inserted
    assert skipped == {("OS", NO_TARGET): 1}
    (only,), _ = training_items([no], "ot", yes_no=True)
    assert (only.variant, only.kind) == ("OS", "no")


def test_encoded_head_targets_and_no_span_target_for_yes_no(examples, tiny_pair_tokenizer):
    from faithprobe.requests import ANSWER_KINDS
    from faithprobe.training.joint_qa import IGNORE

    no = _yes_no("no", "Her hives stand by the river.")
    items, _ = training_items([*examples[:2], no], "ibt", splitter="pysbd", yes_no=True)
    cfg = QATrainConfig(out="x", train="x", strategy="ibt", max_length=64, doc_stride=16,
                        answer_kind=True)  # fmt: skip
    rows, labels, windows, _ = encode_items(tiny_pair_tokenizer, items, cfg, True)
    r = 0
    for item, n in zip(items, windows, strict=True):
        for (ids, _), lab in zip(rows[r : r + n], labels[r : r + n], strict=True):
            cls = ids.index(tiny_pair_tokenizer.cls_token_id)
            assert lab["cls_index"] == cls
            kind = ANSWER_KINDS[lab["kind_labels"]]
            if item.kind in ("yes", "no"):
                assert lab["start_positions"] == lab["end_positions"] == IGNORE
                assert kind == item.kind
            elif lab["start_positions"] == cls:  # null target: unknown
                assert kind == "unknown"
            else:
                assert item.kind == kind == "span"
        r += n
    assert {ANSWER_KINDS[lab["kind_labels"]] for lab in labels} == {"span", "no", "unknown"}
    plain = QATrainConfig(out="x", train="x", strategy="ibt", max_length=64, doc_stride=16)
    _, unlabelled, _, _ = encode_items(tiny_pair_tokenizer, items[:2], plain, True)
    assert set(unlabelled[0]) == {"start_positions", "end_positions"}


def test_window_target_finds_the_answer_tokens_or_none():
    offsets = [None, None, (0, 4), (5, 10), (11, 13), (13, 18), None]  # [CLS] q [SEP] ctx [SEP]
    assert window_target(offsets, 5, 10) == (3, 3)
    assert window_target(offsets, 5, 18) == (3, 5)
    assert window_target(offsets, 6, 12) == (3, 4)  # partial tokens widen to whole ones
    assert window_target(offsets, 15, 25) is None  # runs past the window
    assert window_target([None, None], 0, 3) is None


def test_encoded_targets_point_at_the_answer_and_null_at_cls(examples, tiny_pair_tokenizer):
    items, _ = training_items(examples[:2], "ibt", splitter="pysbd")
    cfg = QATrainConfig(out="x", train="x", strategy="ibt", max_length=64, doc_stride=16)
    rows, labels, windows, nulls = encode_items(tiny_pair_tokenizer, items, cfg, True)
    assert len(rows) == sum(windows) and nulls >= 1
    r = 0
    for item, n in zip(items, windows, strict=True):
        found = []
        for (ids, _), lab in zip(rows[r : r + n], labels[r : r + n], strict=True):
            s, e = lab["start_positions"], lab["end_positions"]
            if s == e == ids.index(tiny_pair_tokenizer.cls_token_id):
                continue
            found.append(tiny_pair_tokenizer.decode(ids[s : e + 1]).strip())
        assert found == ([] if item.answer is None else [item.answer] * len(found))
        assert (item.answer is None) == (not found)
        r += n


def test_documents_are_split_whole_and_seeded(examples, squad_file, tmp_path):
    split = split_documents(examples, squad_file, 0.25, seed=3)
    assert len(split.heldout) == 1 and len(split.train) == 3
    assert set(split.train).isdisjoint(split.heldout)
    held = split.part(examples, "heldout")
    assert len(held) == 3 and {document_key(ex) for ex in held} == set(split.heldout)
    assert split == split_documents(examples, squad_file, 0.25, seed=3)
    other = tmp_path / "other.json"
    other.write_text(json.dumps(_squad(["Mara"])))
    with pytest.raises(UsageError, match="not the file this split was made from"):
        split.check_data(other)
    with pytest.raises(UsageError, match="no training.json"):
        heldout_split_of(tmp_path)


@pytest.fixture(scope="module")
def base(tmp_path_factory, tiny_pair_tokenizer):
    from transformers import BertModel

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("base")
    BertModel(tiny_bert_config(len(tiny_pair_tokenizer))).save_pretrained(folder)
    tiny_pair_tokenizer.save_pretrained(folder)
    return folder


def _config(squad_file, base, out, **kwargs):
    settings = dict(strategy="ibt", heldout=0.25, batch_size=4, max_steps=12, save_steps=100,
                    learning_rate=3e-3, max_length=64, doc_stride=16, splitter="pysbd",
                    warmup_ratio=0.0, epochs=1.0)  # fmt: skip
    settings.update(kwargs)
    return QATrainConfig(out=out, base=base, train=squad_file, **settings)


def _mean_loss(model, tokenizer, cfg, items) -> float:
    from faithprobe.subjects.hf.encoder import pad_rows

    rows, labels, _, _ = encode_items(tokenizer, items, cfg, True)
    batch = pad_rows(rows, tokenizer.pad_token_id)
    for key in ("start_positions", "end_positions"):
        batch[key] = torch.tensor([lab[key] for lab in labels])
    with torch.no_grad():
        return float(model.eval()(**batch).loss)


@pytest.fixture(scope="module")
def trained(squad_file, base, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "ibt"
    cfg = _config(squad_file, base, out)
    return train_qa(cfg, progress=False, log=lambda _: None), cfg


def test_training_lowers_the_loss_and_the_model_reloads(trained, examples, base):
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer, set_seed

    summary, cfg = trained
    split = heldout_split_of(cfg.out)
    items, _ = training_items(split.part(examples, "train"), "ibt", splitter="pysbd")
    tokenizer = AutoTokenizer.from_pretrained(cfg.out)
    set_seed(cfg.seed)  # the head the recipe started from
    before = AutoModelForQuestionAnswering.from_pretrained(base)
    after = AutoModelForQuestionAnswering.from_pretrained(cfg.out)
    assert _mean_loss(after, tokenizer, cfg, items) < 0.8 * _mean_loss(
        before, tokenizer, cfg, items
    )
    assert isinstance(load_subject(str(cfg.out)), HFQA)
    assert summary["steps"] == 12 and summary["strategy"] == "ibt"
    assert summary["train"]["rows_by_variant"] == {"OS": 9, "TS": 6, "TS-R": 6}
    assert summary["train"]["questions_used"] == 9
    assert summary["split"]["heldout_documents"] == 1
    scores = {(s["variant"], s["metric"]) for s in summary["evaluation"]["scores"]}
    assert scores == {(v, m) for v in ("OS", "TS-R") for m in ("em", "f1", "unk")}


def _asks_the_held_out_documents_only(model: Path, data: Path, questions: int) -> None:
    """The faithfulness suite with ``heldout_of=model`` asks the ``questions`` of ``data``'s
    held-out documents and no others."""
    split = heldout_split_of(model, data)
    suite = get_suite("faithfulness", {"heldout_of": str(model), "splitter": "pysbd"})
    pairs = suite.pairs(data, seed=0)
    assert {document_key(p.original) for p in pairs} == set(split.heldout)
    assert len({p.original.id for p in pairs}) == questions


def test_the_faithfulness_suite_evaluates_only_the_held_out_documents(trained, squad_file):
    _asks_the_held_out_documents_only(trained[1].out, squad_file, 3)


def test_an_interrupted_run_resumes_from_its_checkpoint(squad_file, base, tmp_path, monkeypatch):
    def config(out, **kwargs):
        return _config(squad_file, base, out, max_steps=6, save_steps=3, eval_limit=2, **kwargs)

    check_resume(train_qa, recipe, config, tmp_path, monkeypatch, changed={"strategy": "ot"})


def test_cli_trains_and_reports(squad_file, base, tmp_path):
    runner = CliRunner()
    args = ["train", "qa", "--train", str(squad_file), "--base", str(base), "--max-steps", "2",
            "--batch-size", "4", "--max-length", "64", "--splitter", "pysbd"]  # fmt: skip
    res = runner.invoke(app, [*args, "--strategy", "ot", "--out", str(tmp_path / "ot")])
    assert res.exit_code == 0, res.output
    assert "OT:" in res.output and "span   OS    f1" in res.output
    res = runner.invoke(app, [*args, "--strategy", "both", "--out", str(tmp_path / "x")])
    assert (
        res.exit_code == 2
        and "'--strategy'" in res.output
        and "'both' is not one of 'ot', 'ot-ts', 'ibt', 'ibt-aug', 'ibt-noreinsert'" in res.output
        and len(res.output.strip().splitlines()) == 1
    )
    res = runner.invoke(app, [*args, "--strategy", "ibt", "--augment", "embedded",
                              "--out", str(tmp_path / "y")])  # fmt: skip
    assert res.exit_code == 2 and "augment is for the strategies ibt-aug" in res.output
    res = runner.invoke(app, [*args, "--strategy", "ot", "--predicate-argument", "2",
                              "--out", str(tmp_path / "z")])  # fmt: skip
    assert res.exit_code == 2 and "answer-kind head" in res.output
    res = runner.invoke(app, [*args, "--strategy", "ot", "--limit", "3", "--full",
                              "--out", str(tmp_path / "w")])  # fmt: skip
    assert res.exit_code == 2 and "give --limit or --full, not both" in res.output


def test_ibt_aug_writes_its_sentences_through_the_answer_cache(
    squad_file, base, tmp_path, tiny_chat_llama_dir, monkeypatch
):
    """A random tiny LM writes the sentences: none holds its answer, so every TS-R+Aug row
    is skipped and counted; a second run finds the sentences in the cache."""
    model_dir = tiny_chat_llama_dir
    monkeypatch.setenv("FAITHPROBE_CACHE_DIR", str(tmp_path / "cache"))
    args = ["train", "qa", "--train", str(squad_file), "--base", str(base), "--max-steps", "1",
            "--batch-size", "4", "--max-length", "64", "--splitter", "pysbd", "--strategy",
            "ibt-aug", "--augment", str(model_dir), "--eval-limit", "2"]  # fmt: skip
    for run, computed in (("first", 2), ("again", 0)):
        res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / run)])
        assert res.exit_code == 0, res.output
        summary = json.loads((tmp_path / run / "training.json").read_text())
        (writer,) = summary["augment"]["subjects"]
        # 2 distinct requests: the documents ask the same two questions (same answers)
        assert writer["computed_requests"] == computed
    assert (tmp_path / "cache" / "answers.sqlite").is_file()
    assert summary["strategy_variants"] == ["OS", "TS", "TS-R+Aug", "OS-R+Aug"]
    assert summary["train"]["rows_by_variant"] == {"OS": 9, "TS": 6}
    skipped = {(r["variant"], r["reason"]): r["count"] for r in summary["train"]["skipped"]}
    assert skipped[("TS-R+Aug", AUGMENT_FAILED)] == 6


def test_mix_files_are_parsed_with_an_optional_count():
    assert parse_mix("a/quoref.json:600") == (Path("a/quoref.json"), 600)
    assert parse_mix("a/b.json") == (Path("a/b.json"), None)
    assert parse_mix("c:/data/x.json") == (Path("c:/data/x.json"), None)


@pytest.fixture(scope="module")
def mixed(squad_file, base, tmp_path_factory):
    """A model trained on the SQuAD file plus 6 questions of generated comparison items."""
    from faithprobe.datasets.squad import write_squad
    from faithprobe.generators.comparisons import ComparisonConfig, generate

    folder = tmp_path_factory.mktemp("mix")
    items = generate(ComparisonConfig(pairs_per_domain=2, domains=("films",),
                                      conditions=("supporting",), part="train"), 0)  # fmt: skip
    write_squad(items, folder / "cmp.json")
    cfg = _config(squad_file, base, folder / "model", strategy="ot", max_steps=2, eval_limit=4,
                  mix=((folder / "cmp.json", 3),))  # fmt: skip
    return train_qa(cfg, progress=False, log=lambda _: None), cfg, folder / "cmp.json"


def test_a_mixed_file_is_split_trained_on_and_scored(mixed, squad_file, examples):
    summary, cfg, cmp_file = mixed
    (mix,) = summary["mix"]
    assert mix["questions_available"] == 8 and mix["questions_used"] == 3  # 1 of 2 pairs held out
    assert mix["rows_by_variant"] == {"OS": 3}  # a supporting item's TS is the whole story
    assert summary["train"]["rows_with_mix"] == summary["train"]["rows"] + 3
    assert mix["split"]["heldout_documents"] == 1 and mix["evaluation"]["questions"] == 4
    # heldout_of finds the split of whichever file it is given, and refuses others
    cmp_split = heldout_split_of(cfg.out, cmp_file)
    assert cmp_split.data_sha256_16 == mix["split"]["data_sha256_16"]
    assert heldout_split_of(cfg.out, squad_file) == heldout_split_of(cfg.out)
    other = cmp_file.with_name("other.json")
    other.write_text(squad_file.read_text() + " ")
    with pytest.raises(UsageError, match="none of the files"):
        heldout_split_of(cfg.out, other)
    from faithprobe.suite_protocol import get_suite

    pairs = get_suite("right-reasons", {"heldout_of": str(cfg.out)}).pairs(cmp_file, seed=0)
    kept = {document_key(p.original) for p in pairs}
    assert kept == set(cmp_split.heldout) and len({p.original.id for p in pairs}) == 8


def _coqa_yes_no(path: Path, n: int) -> Path:
    """``n`` one-question CoQA stories, yes and no in turn; the rationale is the second
    sentence (so TS-R exists)."""
    stories = []
    for i in range(n):
        answer = "yes" if i % 2 == 0 else "no"
        fact = "The bees made honey." if answer == "yes" else "The bees made no honey."
        story = f"Ada{i} keeps bees. {fact} The river is near."
        start = story.index(fact)
        stories.append({
            "source": "test", "id": f"s{i}", "story": story,
            "questions": [{"turn_id": 1, "input_text": "Did the bees make honey?"}],
            "answers": [{"turn_id": 1, "input_text": answer, "span_start": start,
                         "span_end": start + len(fact), "span_text": fact}],
        })  # fmt: skip
    path.write_text(json.dumps({"version": "1.0", "data": stories}))
    return path


@pytest.fixture(scope="module")
def with_head(squad_file, base, tmp_path_factory):
    """An IBT model with the answer-kind head, trained on the SQuAD file, 4 yes/no stories
    (half held out) and one story per schema of the predicate-argument training part."""
    folder = tmp_path_factory.mktemp("head")
    stories = _coqa_yes_no(folder / "yes_no.coqa.json", 4)
    cfg = _config(squad_file, base, folder / "model", answer_kind=True, predicate_argument=1,
                  mix=((stories, None),), mix_heldout=0.5, max_steps=8)  # fmt: skip
    return train_qa(cfg, progress=False, log=lambda _: None), cfg, stories


def test_the_answer_kind_head_is_trained_saved_and_loaded(with_head):
    from transformers import AutoModelForQuestionAnswering

    from faithprobe.generators.predicate_argument import TRAIN_COLOURS
    from faithprobe.requests import AnswerKindRequest
    from faithprobe.subjects.hf.answer_kind_head import CONFIG_FILE, WEIGHTS_FILE

    summary, cfg, _ = with_head
    assert (cfg.out / WEIGHTS_FILE).is_file() and (cfg.out / CONFIG_FILE).is_file()
    assert summary["answer_kind_head"] is True
    assert summary["strategy_variants"] == ["OS", "TS", "TS-R", "OS-R"]
    assert summary["hyperparameters"]["strategy_variants"] == ["OS", "TS", "TS-R", "OS-R"]
    # plain transformers still loads the folder as a QA model
    assert type(AutoModelForQuestionAnswering.from_pretrained(cfg.out)).__name__ == (
        "BertForQuestionAnswering"
    )
    subject = load_subject(str(cfg.out))
    assert AnswerKindRequest.kind in subject.accepts
    (mix,) = summary["mix"]
    assert mix["split"]["heldout_documents"] == 2 and mix["questions_used"] == 2
    # per trained story: OS and TS with its answer, TS-R unknown
    kinds = mix["rows_by_kind"]
    assert kinds.get("yes", 0) + kinds.get("no", 0) == 4 and kinds["unknown"] == 2
    assert {s["questions"] for s in mix["evaluation"]["scores"]} == {"yes/no"}
    assert mix["evaluation"]["questions_by_kind"] == {"yes/no": 2}
    pa = summary["predicate_argument"]
    assert (pa["stories"], pa["questions_used"]) == (5, 40)  # 4 questions x 2 forms
    assert pa["rows_by_kind"] == {"yes": 20, "no": 20} and pa["colours"] == list(TRAIN_COLOURS)
    assert summary["train"]["rows_with_mix"] == summary["train"]["rows"] + 6 + 40


def test_the_head_counts_in_the_fingerprint(with_head, tmp_path):
    import shutil

    from faithprobe.subjects.hf.answer_kind_head import WEIGHTS_FILE, AnswerKindHead

    _, cfg, _ = with_head
    copy = tmp_path / "copy"
    shutil.copytree(cfg.out, copy)
    same = load_subject(str(copy)).fingerprint
    assert same == load_subject(str(cfg.out)).fingerprint
    head = AnswerKindHead.load(copy)
    with torch.no_grad():
        head.classifier.bias += 1.0
    head.save(copy)
    assert load_subject(str(copy)).fingerprint != same
    (copy / WEIGHTS_FILE).unlink()
    without = load_subject(str(copy))
    assert without.fingerprint != same and "answer-kind" not in without.accepts


def test_negation_stories_are_evaluated_on_the_held_out_stories_only(with_head, tmp_path):
    _, cfg, stories = with_head
    _asks_the_held_out_documents_only(cfg.out, stories, 2)
    # an edit file for every story: checked against all, applied to the held-out ones
    edits = tmp_path / "edits.jsonl"
    flip = {
        "yes": ("made honey", "made no honey", "no"),
        "no": ("made no honey", "made honey", "yes"),
    }
    lines = []
    for ex in read_qa(stories):
        original, replacement, answer = flip[ex.answer_type]
        lines.append(json.dumps({"id": ex.id, "original": original, "replacement": replacement,
                                 "answer": answer}))  # fmt: skip
    edits.write_text("\n".join(lines) + "\n")
    options = {"heldout_of": str(cfg.out), "splitter": "pysbd", "edits": str(edits)}
    pairs = get_suite("faithfulness", options).pairs(stories, seed=0)
    negated = {p.original.id for p in pairs if p.id.startswith("NEG:")}
    held = {ex.id for ex in heldout_split_of(cfg.out, stories).part(read_qa(stories), "heldout")}
    assert negated == held and len(held) == 2


def test_an_interrupted_run_with_the_head_resumes(squad_file, base, tmp_path, monkeypatch):
    from safetensors.torch import load_file

    from faithprobe.subjects.hf.answer_kind_head import WEIGHTS_FILE

    def config(out, **kwargs):
        return _config(squad_file, base, out, max_steps=6, save_steps=3, eval_limit=2,
                       answer_kind=True, predicate_argument=1, **kwargs)  # fmt: skip

    check_resume(train_qa, recipe, config, tmp_path, monkeypatch, changed={"strategy": "ot"})
    straight, resumed = (
        load_file(tmp_path / run / WEIGHTS_FILE) for run in ("straight", "resumed")
    )
    for name in straight:
        torch.testing.assert_close(resumed[name], straight[name], atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_the_predicate_argument_rows_are_none_of_the_probes_stories(seed):
    """The stories ``--predicate-argument`` trains on (any training seed) and the ones
    ``-o probe=predicate-argument`` asks about (any run seed) share no text and no colour."""
    from faithprobe.generators.predicate_argument import COLOURS
    from faithprobe.suites.faithfulness.probes import predicate_argument_pairs

    cfg = QATrainConfig(out="x", train="x", strategy="ibt", answer_kind=True,
                        predicate_argument=110, seed=seed)  # fmt: skip
    items, _ = training_items(recipe._predicate_argument(cfg).chosen, "ibt", yes_no=True)
    trained = {item.context.strip() for item in items}
    assert len(trained) == 5 * 110  # every ordered colour pair of the training part
    for run_seed in (0, 1, 7):
        asked = predicate_argument_pairs(run_seed)
        stories = {p.intervened.context.strip() for p in asked}
        assert not trained & stories
        assert not {p.intervened.features["story_id"] for p in asked} & {
            item.id.rsplit("/", 3)[0] for item in items
        }
    words = {w.strip(".").lower() for text in trained for w in text.split()}
    assert not words & set(COLOURS)


def test_the_head_learns_yes_no_beside_the_span_loss(tiny_pair_tokenizer):
    """JointQA trains the answer-kind head: on two yes/no questions (no span target) and a
    span question, a few steps bring the head to the right kinds; a batch of yes/no rows
    alone has a finite loss (no span target to average)."""
    from transformers import BertForQuestionAnswering

    from faithprobe.requests import ANSWER_KINDS
    from faithprobe.subjects.hf.encoder import pad_rows
    from faithprobe.training.joint_qa import JointQA

    yes = QAExample("y", "Tom has a red ball.", "Is the ball red?", ("yes",), "yes",
                    rationale=((0, 19),))  # fmt: skip
    no = QAExample("n", "Tom has a blue ball.", "Is the ball red?", ("no",), "no",
                   rationale=((0, 20),))  # fmt: skip
    span = QAExample("s", "Tom has a blue ball.", "What does Tom have?", ("a blue ball",),
                     answer_starts=(8,))  # fmt: skip
    items, _ = training_items([yes, no, span], "ot", yes_no=True)
    cfg = QATrainConfig(out="x", train="x", strategy="ot", max_length=64, answer_kind=True)
    rows, labels, _, _ = encode_items(tiny_pair_tokenizer, items, cfg, True)
    batch = pad_rows(rows, tiny_pair_tokenizer.pad_token_id)
    batch.update({k: torch.tensor([lab[k] for lab in labels]) for k in labels[0]})
    torch.manual_seed(0)
    config = tiny_bert_config(len(tiny_pair_tokenizer))
    model = JointQA(BertForQuestionAnswering(config), answer_kind=True)
    only_yes_no = {k: v[:2] for k, v in batch.items()}
    assert torch.isfinite(model(**only_yes_no)["loss"])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for _ in range(30):
        optimizer.zero_grad()
        model(**batch)["loss"].backward()
        optimizer.step()
    model.eval()
    kinds = [ANSWER_KINDS[i] for i in model(**batch)["kind_logits"].argmax(-1).tolist()]
    assert kinds == ["yes", "no", "span"]
