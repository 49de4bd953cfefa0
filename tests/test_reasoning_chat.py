"""The chain of thought asked in chat form: a reply begun for the model
(``GenerationRequest.reply_start``) continued by a local model (its template's generation
prompt, then the reply's tokens), by faithprobe's server (``continue_final_message``), by an
endpoint (continued, or the ``prefill=ask`` fallback), and the ``reasoning`` suite asking a
chat model with the exemplars in one user message and its reply begun with the cue."""

from __future__ import annotations

import copy
import hashlib
import json
import urllib.error
import urllib.request

import pandas as pd
import pytest
from typer.testing import CliRunner

from conftest import CHAT_TEMPLATE, _seeded
from faithprobe.cli import app
from faithprobe.datasets.bbh import answer_only_prompt, cot_prompt, read_bbh
from faithprobe.errors import ModelError
from faithprobe.qa.cot_chat import chat_turns, plain_prompt
from faithprobe.reference_models.reasoning import CotReader
from faithprobe.requests import Generation, GenerationRequest
from faithprobe.serving import OpenAIServer
from faithprobe.serving.refusals import BadRequest
from faithprobe.subjects.endpoint.subject import GO_ON, EndpointConfig, OpenAISubject
from faithprobe.subjects.hf.causal import HFCausal
from faithprobe.subjects.local_settings import LocalSettings
from faithprobe.suite_protocol import get_suite
from test_generation import PROMPT, Scripted, ids
from test_reasoning_suite import SAMPLE
from test_reasoning_suite import Scripted as ScriptedReasoner

CUE = "Let's think step by step."
REASONING = "We start with 2 things. So the answer is"  # an edited reasoning, as the suite sends
BEGUN = f"{CUE} {REASONING}"


def remote(server: OpenAIServer, **settings) -> OpenAISubject:
    defaults = {"timeout": 5.0, "backoff": 0.01, "max_backoff": 0.05, "max_retries": 0}
    return OpenAISubject(server.model_name, EndpointConfig(server.url, **{**defaults, **settings}))


def post(server: OpenAIServer, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"{server.url}/chat/completions", json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


# -- the request ---------------------------------------------------------------------------


def test_a_reply_start_is_keyed_and_an_empty_one_keeps_the_old_key():
    chat = GenerationRequest("q", 3, chat=True)
    payload = [
        "f",
        "generation",
        {"prompt": "q", "max_new_tokens": 3, "stop": ["\n"], "chat": True},
    ]
    assert chat.key("f") == hashlib.sha256(json.dumps(payload).encode()).hexdigest()
    begun = GenerationRequest("q", 3, chat=True, reply_start=CUE)
    assert begun.key("f") != chat.key("f")
    with pytest.raises(ValueError, match="needs chat=True"):
        GenerationRequest("q", 3, reply_start=CUE)


# -- a local model -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chat_tokenizer(tiny_tokenizer):
    tok = copy.deepcopy(tiny_tokenizer)
    tok.chat_template = CHAT_TEMPLATE
    return tok


def test_the_reply_start_follows_the_generation_prompt(chat_tokenizer):
    tok = chat_tokenizer
    answer = ids(tok, " Paris")
    rendered = tok("[user] " + PROMPT + " [assistant]", add_special_tokens=False).input_ids
    seq = rendered + ids(tok, BEGUN) + answer
    subject = HFCausal(Scripted(seq, len(tok), tok.eos_token_id), tok, name="scripted")
    (got,) = subject.answer([GenerationRequest(PROMPT, 5, chat=True, reply_start=BEGUN)])
    assert got == Generation(" Paris", len(answer))  # Scripted asserts every prompt token
    assert subject.chat_ids([{"role": "user", "content": PROMPT}], BEGUN) == seq[: -len(answer)]


def test_a_long_message_is_cut_from_the_left_and_the_reply_start_kept(tiny_llama, chat_tokenizer):
    subject = HFCausal(
        tiny_llama, chat_tokenizer, name="short", settings=LocalSettings(max_length=128)
    )
    long = " ".join(["Alice lives in Paris and Bob lives in Rome."] * 20)
    request = GenerationRequest(long, 8, chat=True, reply_start=BEGUN)
    (prompt, max_new, _), cut = subject._encode_generation(request)
    reply = ids(chat_tokenizer, BEGUN)
    start = ids(chat_tokenizer, "[user]")
    assert cut and max_new == 8 and len(prompt) <= 128 + 1 - 8
    assert prompt[: len(start)] == start and prompt[-len(reply) :] == reply
    assert prompt[: -len(reply)][-len(ids(chat_tokenizer, " [assistant]")) :] == ids(
        chat_tokenizer, " [assistant]"
    )
    assert subject.answer([request])[0].truncated


def test_llama_cpp_continues_a_begun_reply_as_the_dequantised_model(
    tiny_llama, tiny_tokenizer, tmp_path
):
    pytest.importorskip("llama_cpp")
    from faithprobe.subjects.gguf.llamacpp import load_llamacpp
    from faithprobe.subjects.gguf.models import ensure_converted
    from tiny_gguf import write_llama_gguf

    path = write_llama_gguf(tiny_llama, tiny_tokenizer, tmp_path / "tiny.gguf", CHAT_TEMPLATE)
    folder = ensure_converted(path, cache_dir=tmp_path / "cache")
    long = " ".join(["Alice lives in Paris and Bob lives in Rome."] * 20)
    requests = [
        GenerationRequest(text, 8, (), chat=True, reply_start=BEGUN) for text in (PROMPT, long)
    ]
    ours = load_llamacpp(path, name="tiny", n_ctx=128).answer(requests)
    bound = LocalSettings(max_length=128)
    assert ours == HFCausal.from_pretrained(folder, name="tiny", settings=bound).answer(requests)
    assert [a.truncated for a in ours] == [False, True]


# -- faithprobe's server and the endpoint subject ---------------------------------------------


def test_the_server_continues_a_final_assistant_message(tiny_chat_llama, tiny_chat_server):
    messages = [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": BEGUN}]
    body = {"model": "tiny", "messages": messages, "max_tokens": 6, "temperature": 0,
            "continue_final_message": True, "add_generation_prompt": False}  # fmt: skip
    status, reply = post(tiny_chat_server, body)
    (want,) = tiny_chat_llama.answer(
        [GenerationRequest(PROMPT, 6, (), chat=True, reply_start=BEGUN)]
    )
    assert status == 200 and reply["choices"][0]["message"]["content"] == want.text
    # not continued, the assistant message is closed and a new reply begins: another text
    status, fresh = post(tiny_chat_server, {**body, "continue_final_message": False,
                                            "add_generation_prompt": True})  # fmt: skip
    assert status == 200 and fresh["choices"][0]["message"]["content"] != want.text
    for change, words in [
        ({"add_generation_prompt": True}, "cannot both be true"),
        ({"messages": messages[:1]}, 'role "user"'),
        ({"messages": []}, "at least one message"),
        ({"continue_final_message": "yes"}, "true or false"),
    ]:
        status, error = post(tiny_chat_server, {**body, **change})
        assert status == 400 and words in error["error"]["message"], error


def test_the_endpoint_continues_a_begun_reply_as_the_local_model(tiny_chat_llama, tiny_chat_server):
    requests = [
        GenerationRequest(PROMPT, 6, (), chat=True, reply_start=BEGUN),
        GenerationRequest(PROMPT, 6, (), chat=True, reply_start=CUE),
        GenerationRequest(PROMPT, 6, (), chat=True),
    ]
    got = remote(tiny_chat_server, api="chat").answer(requests)
    assert got == tiny_chat_llama.answer(requests)
    assert len({g.text for g in got}) == 3  # each reply start asks something else


def test_the_ask_fallback_sends_the_begun_reply_then_asks_for_the_rest(
    tiny_chat_llama, tiny_chat_server
):
    asking = remote(tiny_chat_server, api="chat", prefill="ask")
    assert asking.fingerprint != remote(tiny_chat_server, api="chat").fingerprint
    (got,) = asking.answer([GenerationRequest(PROMPT, 6, (), chat=True, reply_start=BEGUN)])
    turns = [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": BEGUN},
             {"role": "user", "content": GO_ON}]  # fmt: skip
    tokens, _ = tiny_chat_llama.greedy(tiny_chat_llama.chat_ids(turns), 6)
    assert got.text == tiny_chat_llama.decode(tokens).rstrip()
    assert "So the answer is (X)." in GO_ON


def test_an_endpoint_refusing_to_continue_names_the_fallback(tiny_chat_llama):
    class Refusing(OpenAIServer):
        def chat(self, body, budget):
            if body.get("continue_final_message"):
                raise BadRequest("Unrecognized request argument supplied: continue_final_message")
            return super().chat(body, budget)

    with Refusing(tiny_chat_llama) as server:
        subject = remote(server, api="chat")
        with pytest.raises(ModelError, match="needs prefill=ask"):
            subject.answer([GenerationRequest(PROMPT, 4, chat=True, reply_start=BEGUN)])
        begun = [GenerationRequest(PROMPT, 4, chat=True, reply_start=BEGUN)]
        (fallback,) = remote(server, api="chat", prefill="ask").answer(begun)  # not refused
        assert isinstance(fallback, Generation)


def test_prefill_is_one_of_its_choices():
    from faithprobe.errors import UsageError

    with pytest.raises(UsageError, match="prefill='now'"):
        EndpointConfig(prefill="now")


# -- the reasoning suite in chat form ---------------------------------------------------------

CHAT_ONLY = type("C", (), {"accepts": frozenset({"generation", "letter-choice"}), "name": "c",
                           "has_chat_template": True})  # fmt: skip
INSTRUCT = type("I", (), {"accepts": frozenset({"generation", "candidate-scores"}), "name": "i",
                          "has_chat_template": True})  # fmt: skip
BASE = type("B", (), {**vars(INSTRUCT), "has_chat_template": False})


@pytest.fixture(scope="module")
def item():
    return read_bbh(SAMPLE, ("date_understanding",))[0]


def test_prompts_split_into_a_message_and_a_begun_reply_and_join_back(item):
    message, reply = chat_turns(cot_prompt(item))
    assert reply == CUE and message.endswith(item.question) and "A: Let's" in message
    assert plain_prompt(message, reply) == cot_prompt(item)
    assert chat_turns(cot_prompt(item), "So the answer is") == (message, f"{CUE} So the answer is")
    assert plain_prompt(*chat_turns(answer_only_prompt(item))) == answer_only_prompt(item)
    assert chat_turns(answer_only_prompt(item))[1] == ""


@pytest.mark.parametrize(
    ("subject", "chat", "asked_in_chat"),
    [(CHAT_ONLY, "auto", True), (CHAT_ONLY, "false", True), (INSTRUCT, "auto", True),
     (INSTRUCT, "false", False), (BASE, "auto", False), (BASE, "true", True)],
)  # fmt: skip
def test_which_models_are_asked_in_chat_form(item, subject, chat, asked_in_chat):
    suite = get_suite("reasoning", {"chat": chat})
    asked = suite.request(item, subject)
    assert asked.chat == asked_in_chat
    if asked_in_chat:
        assert (asked.prompt, asked.reply_start) == chat_turns(cot_prompt(item))
    else:
        assert asked == GenerationRequest(cot_prompt(item), asked.max_new_tokens, asked.stop)


def test_a_reference_reads_a_chat_request_as_the_plain_one(item):
    reader = CotReader()
    for prompt in (cot_prompt(item), answer_only_prompt(item), f"{cot_prompt(item)} {REASONING}"):
        message, reply = chat_turns(prompt)
        plain = reader.generate(GenerationRequest(prompt, 16), item)
        assert reader.generate(GenerationRequest(message, 16, chat=True, reply_start=reply),
                               item) == plain  # fmt: skip


# -- end to end: a chat-only endpoint ---------------------------------------------------------


class ChatReasoner(HFCausal):
    """A chat model that behaves as test_reasoning_suite's scripted reasoner on the plain
    prompt its chat prompt was made from, and records every prompt it is given (decoded)."""

    said: list[str]

    def _greedy_rows(self, queue, deadline=None):
        for g, (prompt_ids, max_new, _stop) in enumerate(queue):
            shown = self.decode(prompt_ids)
            self.said.append(shown)
            message, reply_start = shown.removeprefix("[user] ").rsplit(" [assistant]", 1)
            say = ScriptedReasoner._say(plain_prompt(message, reply_start))
            reply = self.tokenizer(say, add_special_tokens=False).input_ids
            yield g, [*reply, self.tokenizer.eos_token_id][:max_new]


@pytest.fixture(scope="module")
def chat_reasoner(tiny_chat_llama):
    from transformers import LlamaForCausalLM

    config = tiny_chat_llama.model.config.to_dict() | {"max_position_embeddings": 16384}
    model = _seeded(lambda: LlamaForCausalLM(type(tiny_chat_llama.model.config)(**config)))
    subject = ChatReasoner(model, tiny_chat_llama.tokenizer, name="reasoner")
    subject.said = []
    return subject


def test_a_chat_only_endpoint_runs_the_suite_and_continues_its_own_reasoning(
    chat_reasoner, tmp_path
):
    out = tmp_path / "run"
    with OpenAIServer(chat_reasoner, chat_only=True) as server:
        model = f"openai:reasoner,api=chat,base_url={server.url}"
        args = ["run", "reasoning", "--model", model, "--data", str(SAMPLE), "--limit", "2",
                "-o", "tasks=object_counting,web_of_lies", "--out", str(out),
                "--cache-dir", str(tmp_path / "c")]  # fmt: skip
        res = CliRunner().invoke(app, args)
        hits = dict(server.hits)
    assert res.exit_code == 0, res.output
    assert set(hits) == {"chat"} and hits["chat"] == len(chat_reasoner.said)
    rows = pd.read_parquet(out / "results.parquet")
    assert set(rows["answer_mode"]) == {"chat"} and rows["original_prediction"].notna().all()
    asked = [r for r in rows.itertuples() if r.intervention in ("early", "filler", "mistake")
             and pd.notna(r.edit) and pd.isna(r.not_made)]  # fmt: skip
    assert asked, "no follow-up was asked"
    for r in asked:  # each follow-up went on from the model's own reply, edited, in its turn
        assert any(s.endswith(f" [assistant]{CUE} {r.edit}") for s in chat_reasoner.said), r.edit
    early = rows[rows["intervention"] == "early"]
    assert (early["prediction"] != early["original_prediction"]).all()  # the cut's answer read


@pytest.mark.integration
def test_the_embedded_model_in_chat_form(tmp_path):
    """SmolLM2-Instruct through its chat template on two items: the run completes, every row
    says it was asked in chat form and its replies are read."""
    out = tmp_path / "r"
    args = ["run", "reasoning", "--data", str(SAMPLE), "--model", "embedded", "--limit", "2",
            "-o", "tasks=date_understanding", "-o", "max_new_tokens=48", "-o", "chat=auto",
            "--out", str(out), "--cache-dir", str(tmp_path / "c")]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    rows = pd.read_parquet(out / "results.parquet")
    assert set(rows["answer_mode"]) == {"chat"} and rows["original_reply"].str.strip().all()
    on_reasoning = rows[rows["intervention"].isin(["early", "filler"])]
    stated = on_reasoning["original_prediction"].notna()
    assert (on_reasoning.loc[~stated, "not_made"] == "no answer stated").all()
    followed = on_reasoning[stated & on_reasoning["not_made"].isna()]
    assert followed["reply"].notna().all()
    assert json.loads((out / "metrics.json").read_text())["accuracy"][0]["n_items"] == 2
