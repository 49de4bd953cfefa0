"""The faithfulness suite against a chat-only endpoint (``openai:… --api chat``): every probe
(deletion, negation edits, the predicate–argument probe) asked by generate-then-parse
through faithprobe's own OpenAI-compatible server, with replies of every kind (yes, no,
abstentions, hedges, refusals), counted and scored as faithprobe.qa.replies says."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from conftest import _seeded
from faithprobe.cli import app
from faithprobe.errors import UsageError
from faithprobe.report import run_to_folder
from faithprobe.requests import CandidateScoreRequest, GenerationRequest
from faithprobe.runner import RunConfig
from faithprobe.serving import OpenAIServer
from faithprobe.subjects.endpoint.subject import EndpointConfig, OpenAISubject
from faithprobe.subjects.hf.causal import HFCausal
from faithprobe.suite_protocol import get_suite

ROOT = Path(__file__).resolve().parents[1]
STORIES = ROOT / "examples" / "negation" / "stories.coqa.json"
EDITS = ROOT / "examples" / "negation" / "edits.jsonl"

# reply -> its kind on a yes/no question, on another question (hand-read)
REPLIES = {
    "Yes.": ("yes", "answer"),
    "Yes, it says so in the story.": ("yes", "answer"),
    "No.": ("no", "answer"),
    "No, the story says otherwise.": ("no", "answer"),
    "Not necessarily.": ("hedge", "hedge"),
    "No, not necessarily.": ("hedge", "hedge"),
    "It depends on the weather.": ("hedge", "hedge"),
    "I'm sorry, but I can't help with that.": ("refusal", "refusal"),
    "The story does not say.": ("abstention", "abstention"),
    "unknown": ("abstention", "abstention"),
    "a red ball": ("other", "answer"),
    "": ("empty", "empty"),
}


def reply_for(prompt: str) -> str:
    """One of ``REPLIES``, chosen by a hash of the prompt (the same prompt, the same reply)."""
    replies = list(REPLIES)
    return replies[int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % len(replies)]


class Replier(HFCausal):
    """A chat model that replies to a prompt with :func:`reply_for` of the decoded prompt
    (then EOS), whoever asks: the server's greedy decoding and local generation alike. Its
    token log-probabilities are the tiny Llama's."""

    def _greedy_rows(self, queue, deadline=None):
        for g, (ids, max_new, _stop) in enumerate(queue):
            reply = self.tokenizer(reply_for(self.decode(ids)), add_special_tokens=False)
            yield g, [*reply.input_ids, self.tokenizer.eos_token_id][:max_new]


@pytest.fixture(scope="module")
def replier(tiny_chat_llama):
    """The tiny chat Llama with room for the negation stories (1,024 positions)."""
    from transformers import LlamaForCausalLM

    config = tiny_chat_llama.model.config.to_dict() | {"max_position_embeddings": 1024}
    model = _seeded(lambda: LlamaForCausalLM(type(tiny_chat_llama.model.config)(**config)))
    return Replier(model, tiny_chat_llama.tokenizer, name="replier")


@pytest.fixture(scope="module")
def chat_server(replier):
    with OpenAIServer(replier, chat_only=True) as server:
        yield server


def chat_subject(server) -> OpenAISubject:
    endpoint = EndpointConfig(server.url, api="chat", timeout=5.0, backoff=0.01, max_backoff=0.05)
    return OpenAISubject(server.model_name, endpoint)


def run(tmp_path: Path, name: str, subject, data=None, limit=None, **options) -> Path:
    config = RunConfig(suite="faithfulness", data=data, limit=limit, out=tmp_path / name,
                       cache_dir=tmp_path / f"cache-{name}",
                       options={k: str(v) for k, v in options.items()})  # fmt: skip
    return run_to_folder(config, subjects=[subject])


def answered(out: Path) -> pd.DataFrame:
    res = pd.read_parquet(out / "results.parquet")
    return res[res["dropped_reason"].isna()]


def check_reply_kinds(rows: pd.DataFrame) -> None:
    """Every row was generated in chat form and read as its reply's hand-read kind."""
    assert set(rows["answer_mode"]) == {"chat"}
    want = [REPLIES[g][0 if yn else 1] for g, yn in zip(rows["generation"], rows["yes_no"],
                                                        strict=True)]  # fmt: skip
    assert rows["reply_kind"].tolist() == want
    assert (rows["predicted_unknown"] == (rows["reply_kind"] == "abstention")).all()
    committed = rows["reply_kind"].isin(["yes", "no"])
    assert (rows.loc[committed, "prediction"] == rows.loc[committed, "reply_kind"]).all()


def test_requests_for_a_model_that_can_only_generate():
    suite = get_suite("faithfulness")
    ex = get_suite("faithfulness").read(STORIES)[0]
    chat_only = type("S", (), {"accepts": frozenset({"generation", "letter-choice"}), "name": "c"})
    scoring = type("S", (), {"accepts": frozenset({"generation", "candidate-scores"}), "name": "s",
                             "has_chat_template": False})  # fmt: skip
    asked = suite.request(ex, chat_only)
    assert isinstance(asked, GenerationRequest) and asked.chat  # a chat endpoint: chat form
    assert asked.prompt == suite.asker.prompt.render(ex) and asked.stop == ("\n",)
    assert isinstance(suite.request(ex, scoring), CandidateScoreRequest)  # scored where it can
    generated = get_suite("faithfulness", {"yes_no": "generate"}).request(ex, scoring)
    assert isinstance(generated, GenerationRequest) and not generated.chat
    chat = get_suite("faithfulness", {"yes_no": "generate", "chat": "true"}).request(ex, scoring)
    assert chat == asked
    # chat=auto (the default): in chat form exactly when the model has a chat template
    instruct = type("S", (), {**vars(scoring), "has_chat_template": True})
    auto = get_suite("faithfulness", {"yes_no": "generate"})
    assert auto.request(ex, instruct) == asked and not auto.request(ex, scoring).chat
    plain = get_suite("faithfulness", {"yes_no": "generate", "chat": "false"})
    assert not plain.request(ex, instruct).chat
    assert plain.request(ex, chat_only).chat  # a chat endpoint has no other form
    with pytest.raises(UsageError, match="chat='maybe': choose from 'auto', 'true', 'false'"):
        get_suite("faithfulness", {"chat": "maybe"})


def test_negation_through_a_chat_endpoint(chat_server, replier, tmp_path):
    """The negation stories with their edits (Table 10) through ``--api chat``: every reply
    read by its kind, Org/Mod/Comb-Acc counting abstentions, hedges and refusals as wrong,
    the kinds counted per variant; the same rows as the local model asked in chat form."""
    out = run(tmp_path, "chat", chat_subject(chat_server), STORIES, edits=EDITS)
    rows = answered(out)
    check_reply_kinds(rows)
    assert set(rows["variant"]) == {"OS", "TS", "TS-R", "NEG"}
    kinds = set(rows["reply_kind"])
    assert {"yes", "no", "abstention", "hedge", "refusal"} <= kinds  # the replies vary
    metrics = json.loads((out / "metrics.json").read_text())
    # Table 10 by hand: right = the reply committed to the gold answer
    right = rows["reply_kind"] == rows["answers"].map(lambda a: a[0])
    org = right[rows["variant"] == "OS"].set_axis(rows.loc[rows["variant"] == "OS", "original_id"])
    mod = right[rows["variant"] == "NEG"].set_axis(
        rows.loc[rows["variant"] == "NEG", "original_id"]
    )
    neg = {r["metric"]: r for r in metrics["negation"] if r["negation"] == "all"}
    assert neg["org_acc"]["n"] == len(mod) == 36
    assert neg["org_acc"]["value"] == pytest.approx(org[mod.index].mean())
    assert neg["mod_acc"]["value"] == pytest.approx(mod.mean())
    assert neg["comb_acc"]["value"] == pytest.approx((org[mod.index] & mod).mean())
    said_no = rows.loc[rows["variant"] == "NEG", "reply_kind"] == "no"
    assert neg["mod_no"]["value"] == pytest.approx(said_no.mean())
    # the kinds per variant, with counts and intervals, sum to the rows
    counted = pd.DataFrame(metrics["reply_kinds"])
    assert set(counted["answer_mode"]) == {"chat"}
    for (variant, kind), group in counted.groupby(["variant", "kind"]):
        (row,) = group.to_dict("records")
        of_variant = rows[rows["variant"] == variant]
        assert row["count"] == (of_variant["reply_kind"] == kind).sum()
        assert row["n"] == len(of_variant)
        assert row["value"] == pytest.approx(row["count"] / row["n"])
        assert row["ci_low"] <= row["value"] <= row["ci_high"]
    assert set(counted["kind"]) == {"yes", "no", "abstention", "hedge", "refusal", "other", "empty"}
    table = (out / "tables" / "reply_kinds.md").read_text()
    for word in ("asked by", "chat", "abstention", "hedge", "refusal", "NEG"):
        assert word in table
    assert '<section id="replies">' in (out / "report.html").read_text()
    # the local model asked the same way gives the same rows
    local = answered(run(tmp_path, "local", replier, STORIES, edits=EDITS, yes_no="generate",
                         chat="true"))  # fmt: skip
    columns = ["pair_id", "generation", "prediction", "reply_kind", "correct", "em", "f1"]
    pd.testing.assert_frame_equal(
        rows[columns].reset_index(drop=True), local[columns].reset_index(drop=True)
    )
    # asked by log-likelihood, the same model cannot abstain on the yes/no questions
    scored = answered(run(tmp_path, "scored", replier, STORIES, edits=EDITS))
    assert set(scored["answer_mode"]) == {"log-likelihood"}
    assert set(scored["reply_kind"]) <= {"yes", "no"}


SQUAD = {
    "version": "1.1",
    "data": [{"title": "T", "paragraphs": [
        {"context": "Alice lives in Paris. She works at a bakery. Bob lives in Rome.",
         "qas": [{"id": "q1", "question": "Where does Alice live?",
                  "answers": [{"text": "Paris", "answer_start": 15}]},
                 {"id": "q2", "question": "Where does Alice work?",
                  "answers": [{"text": "a bakery", "answer_start": 35}]}]},
        {"context": "The river is long. It flows north. Boats sail on it every day.",
         "qas": [{"id": "q3", "question": "Which way does the river flow?",
                  "answers": [{"text": "north", "answer_start": 28}]},
                 {"id": "q4", "question": "When do boats sail on it?",
                  "answers": [{"text": "every day", "answer_start": 52}]}]},
    ]}],
}  # fmt: skip


def test_deletion_through_a_chat_endpoint(chat_server, tmp_path):
    """SQuAD deletion (OS, TS, TS-R) through ``--api chat``: span replies read by kind, unk%
    the share of abstentions."""
    data = tmp_path / "squad.json"
    data.write_text(json.dumps(SQUAD))
    out = run(tmp_path, "squad", chat_subject(chat_server), data)
    rows = answered(out)
    check_reply_kinds(rows)
    assert not rows["yes_no"].any() and len(rows) == 11  # q1's TS-R is dropped
    metrics = json.loads((out / "metrics.json").read_text())
    for r in (r for r in metrics["scores"] if r["metric"] == "unk"):
        of = rows[rows["variant"] == r["variant"]]
        assert r["value"] == pytest.approx((of["reply_kind"] == "abstention").mean())
    kinds = {r["kind"] for r in metrics["reply_kinds"]}
    assert kinds == {"answer", "abstention", "hedge", "refusal", "empty"}


def test_predicate_argument_probe_through_the_cli(chat_server, tmp_path):
    """``faithprobe run faithfulness --model openai:… --api chat -o probe=predicate-argument``
    runs, and the kinds are counted per story variant and question form."""
    out = tmp_path / "pa"
    args = ["run", "faithfulness", "--model", f"openai:{chat_server.model_name}",
            "--base-url", chat_server.url, "--api", "chat", "-o", "probe=predicate-argument",
            "--limit", "4", "--out", str(out), "--cache-dir", str(tmp_path / "c")]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    rows = answered(out)
    check_reply_kinds(rows)
    assert rows["original_id"].nunique() == 4 and rows["yes_no"].all()
    metrics = json.loads((out / "metrics.json").read_text())
    counted = pd.DataFrame(metrics["reply_kinds"])
    assert {"variant", "form", "answer_mode", "kind", "count"} <= set(counted.columns)
    per = counted.groupby(["variant", "form"])["count"].sum()
    assert per.to_dict() == rows.groupby(["variant", "form"]).size().to_dict()
    acc = {(r["variant"], r["form"], r["metric"]): r for r in metrics["predicate_argument"]}
    of = rows[(rows["variant"] == "original") & (rows["form"] == "original")]
    share_no = acc[("original", "original", "share_no")]["value"]
    assert share_no == pytest.approx((of["reply_kind"] == "no").mean())
    accuracy = acc[("original", "original", "accuracy")]["value"]
    assert accuracy == pytest.approx((of["reply_kind"] == of["answers"].map(lambda a: a[0])).mean())
