"""``faithprobe serve`` speaks the OpenAI API as the API states it: completions prompts in
all four forms, ``top_logprobs`` in the completions and chat shapes with the API's limits,
content parts, checked roles, ``stream`` as server-sent events, every error as JSON in the
API's shape (the standard library's own refusals too), and an API key no header could carry
refused at start. The official ``openai`` client calls every field the server documents."""

from __future__ import annotations

import http.client
import json
import socket

import openai
import pytest
import torch

from cli_corpus import refused
from faithprobe.errors import UsageError
from faithprobe.serving import OpenAIServer
from faithprobe.serving import openai_server as server_module
from test_serve_limits import KEY, Response, address, chat, completion, get, post

PROMPT = "Alice lives in"


def top_k(subject, ids: list[int], k: int) -> list[list[tuple[str, float]]]:
    """The local model's ``k`` most likely tokens (text, log-probability) after each prefix
    ``ids[:j]``, j = 1 .. len(ids)."""
    with torch.no_grad():
        logits = subject.model(torch.tensor([ids])).logits[0].float()
    best = torch.log_softmax(logits, -1).topk(k)
    return [
        [(subject.decode([i]), v) for i, v in zip(row_ids, row, strict=True)]
        for row_ids, row in zip(best.indices.tolist(), best.values.tolist(), strict=True)
    ]


def text_of(r: Response) -> list[str]:
    return [c["text"] for c in r.body["choices"]]


# -- completions prompts: a string, strings, token ids, lists of token ids ----------------


def test_prompts_of_token_ids_are_answered_as_the_text_they_spell(
    tiny_chat_llama, tiny_chat_server
):
    ids = tiny_chat_llama.prompt_ids(PROMPT)
    other = tiny_chat_llama.prompt_ids("Bob said")
    fields = {"max_tokens": 4, "logprobs": 2}
    as_text = post(tiny_chat_server, "completions", completion([PROMPT, "Bob said"], **fields))
    as_ids = post(tiny_chat_server, "completions", completion([ids, other], **fields))
    one = post(tiny_chat_server, "completions", completion(ids, **fields))
    assert as_text.status == as_ids.status == one.status == 200
    assert text_of(as_ids) == text_of(as_text) and text_of(one) == text_of(as_text)[:1]
    for a, b in zip(as_text.body["choices"], as_ids.body["choices"], strict=True):
        assert a["logprobs"]["tokens"] == b["logprobs"]["tokens"]
        assert a["logprobs"]["token_logprobs"] == b["logprobs"]["token_logprobs"]
    echoed = post(tiny_chat_server, "completions", completion(ids, max_tokens=0, echo=True))
    assert text_of(echoed) == [tiny_chat_llama.decode(ids)]


@pytest.mark.parametrize(
    "prompt, says",
    [
        ([], "prompt holds no prompts"),
        ([[]], "prompt[0] holds no token ids"),
        ([1, "a"], "prompt must be a string, a list of strings, a list of token ids"),
        ([[1], "a"], "prompt must be a string"),
        ([True, 2], "prompt must be a string"),
        ([-1], "prompt[0] must be a token id from 0 to"),
        ([[3], [1, 10**9]], "prompt[1][1] must be a token id from 0 to"),
        ({"text": "a"}, "prompt must be a string"),
    ],
)
def test_a_prompt_in_no_form_of_the_api_is_400_naming_it(tiny_chat_server, prompt, says):
    r = post(tiny_chat_server, "completions", completion(prompt, max_tokens=1))
    assert r.status == 400 and r.message.startswith(says), r.body


def test_a_token_id_past_the_vocabulary_is_refused(tiny_chat_llama, tiny_chat_server):
    size = len(tiny_chat_llama.tokenizer)
    assert post(tiny_chat_server, "completions", completion([size - 1], max_tokens=1)).status == 200
    r = post(tiny_chat_server, "completions", completion([size], max_tokens=1))
    assert r.status == 400 and f"from 0 to {size - 1}, not {size}" in r.message


# -- top_logprobs ---------------------------------------------------------------------------


def test_completions_top_logprobs_are_dicts_of_the_most_likely_tokens(
    tiny_chat_llama, tiny_chat_server
):
    """As lm-eval's local-completions asks (token ids, echo, logprobs, max_tokens=1): each
    position's most likely tokens as {text: log-probability}, the chosen token among them,
    null at the first echoed token; and lm-eval's reading of it (the continuation's summed
    log-probability, and whether it is greedy) holds for the local model."""
    ids = tiny_chat_llama.prompt_ids("Alice lives in Paris and Bob")
    body = completion([ids], max_tokens=1, echo=True, logprobs=3, temperature=0)
    (choice,) = post(tiny_chat_server, "completions", body).body["choices"]
    lp = choice["logprobs"]
    assert len(lp["tokens"]) == len(lp["top_logprobs"]) == len(ids) + 1
    assert lp["token_logprobs"][0] is None and lp["top_logprobs"][0] is None
    (generated,) = tiny_chat_llama.greedy(ids, 1)[0]
    want = top_k(tiny_chat_llama, [*ids, generated], 3)
    for j in range(1, len(ids) + 1):
        top, expected = lp["top_logprobs"][j], {}
        for text, value in want[j - 1]:  # two tokens of one text: the likelier is listed
            expected.setdefault(text, value)
        assert list(top)[: len(expected)] == list(expected)
        assert list(top.values())[: len(expected)] == pytest.approx(
            list(expected.values()), abs=1e-5
        )
        assert top[lp["tokens"][j]] == lp["token_logprobs"][j]  # the chosen one is listed
        assert len(top) <= 4
    assert lp["token_logprobs"][-1] == max(lp["top_logprobs"][-1].values())  # greedy
    local = tiny_chat_llama.token_logprobs(ids)
    assert lp["token_logprobs"][1:-1] == pytest.approx(local[1:], abs=1e-5)


@pytest.mark.parametrize("echo", [False, True])
def test_a_one_token_scoring_request_answers_as_generation_does(
    tiny_chat_llama, tiny_chat_server, echo
):
    """max_tokens=1 with logprobs is answered in one pass (the pass that scores the prompt
    gives its greedy next token): the same token and numbers as generating, then scoring."""
    for prompt in ("Alice lives in", "Bob said that Alice", "A"):
        plain = post(tiny_chat_server, "completions", completion(prompt, max_tokens=1))
        two = post(
            tiny_chat_server, "completions", completion(prompt, max_tokens=2, logprobs=2, echo=echo)
        )
        one = post(
            tiny_chat_server, "completions", completion(prompt, max_tokens=1, logprobs=2, echo=echo)
        )
        (got,), (longer,) = one.body["choices"], two.body["choices"]
        assert got["text"] == (prompt if echo else "") + plain.body["choices"][0]["text"]
        # a token's text can differ: one ending inside a character shows it unfinished
        # when it ends the reply, and adds nothing when another token follows
        n = len(got["logprobs"]["tokens"])
        mine, theirs = got["logprobs"], {k: v[:n] for k, v in longer["logprobs"].items()}
        assert mine["token_logprobs"] == pytest.approx(theirs["token_logprobs"], abs=1e-5)
        assert mine["text_offset"] == theirs["text_offset"]
        for a, b in zip(mine["top_logprobs"], theirs["top_logprobs"], strict=True):
            assert a is None or list(a.values())[:1] == pytest.approx(
                list(b.values())[:1], abs=1e-5
            )
        assert one.body["usage"] == plain.body["usage"]


def test_a_one_token_reply_that_is_the_end_token_is_empty(tiny_tokenizer):
    from faithprobe.subjects.hf.causal import HFCausal
    from test_generation import Scripted

    tok = tiny_tokenizer
    seq = tok(PROMPT).input_ids  # after the prompt the script says EOS
    subject = HFCausal(Scripted(seq, len(tok), tok.eos_token_id), tok, name="scripted")
    with OpenAIServer(subject) as s:
        for fields in ({}, {"logprobs": 1}, {"logprobs": 1, "echo": True}):
            r = post(s, "completions", {**completion(max_tokens=1), "model": "scripted", **fields})
            (choice,) = r.body["choices"]
            assert choice["text"] == (PROMPT if fields.get("echo") else "")
            assert choice["finish_reason"] == "stop" and r.body["usage"]["completion_tokens"] == 1
            if fields:
                assert len(choice["logprobs"]["tokens"]) == (len(seq) if fields.get("echo") else 0)


@pytest.mark.parametrize("logprobs", [0, 5])
def test_completions_logprobs_runs_from_0_to_5(tiny_chat_server, logprobs):
    """0: the chosen token alone; 5: the five most likely (fewer where some share a text)
    and the chosen one."""
    r = post(tiny_chat_server, "completions", completion(max_tokens=3, logprobs=logprobs))
    lp = r.body["choices"][0]["logprobs"]
    assert r.status == 200 and len(lp["top_logprobs"]) == 3
    for token, value, top in zip(
        lp["tokens"], lp["token_logprobs"], lp["top_logprobs"], strict=True
    ):
        assert top[token] == value and len(top) <= logprobs + 1
        assert logprobs or top == {token: value}


@pytest.mark.parametrize(
    "route, fields, says",
    [
        ("completions", {"logprobs": 6}, "logprobs must be at most 5, not 6"),
        ("completions", {"logprobs": 10**9}, "logprobs must be at most 5"),
        ("completions", {"logprobs": 1e9}, "logprobs must be an integer"),
        ("chat", {"logprobs": True, "top_logprobs": 21}, "top_logprobs must be at most 20"),
        ("chat", {"logprobs": True, "top_logprobs": -1}, "top_logprobs must be an integer"),
    ],
)
def test_log_probability_ranges_past_the_apis_limits_are_refused(
    tiny_chat_server, route, fields, says
):
    body = completion(max_tokens=1) if route == "completions" else chat(max_tokens=1)
    r = post(tiny_chat_server, route, {**body, **fields})
    assert r.status == 400 and r.message.startswith(says), r.body


@pytest.mark.parametrize(
    "route, field, value",
    [
        ("completions", "logit_bias", {"5": 100}),
        ("completions", "presence_penalty", 0.5),
        ("completions", "frequency_penalty", -1),
        ("completions", "best_of", 3),
        ("completions", "suffix", " end"),
        ("chat", "logit_bias", {"5": -100}),
        ("chat", "tools", [{"type": "function", "function": {"name": "f"}}]),
        ("chat", "tool_choice", "required"),
        ("chat", "response_format", {"type": "json_object"}),
        ("chat", "presence_penalty", True),
    ],
)
def test_a_field_that_would_change_the_greedy_reply_is_refused(
    tiny_chat_server, route, field, value
):
    body = completion(max_tokens=1) if route == "completions" else chat(max_tokens=1)
    r = post(tiny_chat_server, route, {**body, field: value})
    assert r.status == 400 and r.message.startswith(f"{field}: this server answers"), r.body
    neutral = {"logit_bias": {}, "presence_penalty": 0.0, "frequency_penalty": 0, "best_of": 1,
               "suffix": "", "tools": [], "tool_choice": "none",
               "response_format": {"type": "text"}}[field]  # fmt: skip
    r = post(tiny_chat_server, route, {**body, field: neutral, "seed": 7, "top_p": 0.5})
    assert r.status == 200, r.body


# -- chat messages: content parts, roles, at least one --------------------------------------


def test_content_parts_are_read_as_their_text_joined_by_new_lines(tiny_chat_server):
    parts = [{"type": "text", "text": "Where does"}, {"type": "text", "text": "Alice live?"}]
    system = {"role": "system", "content": [{"type": "text", "text": "Be brief."}]}
    as_parts = post(tiny_chat_server, "chat",
                    {**chat(max_tokens=5), "messages": [system, {"role": "user", "content": parts}]})  # fmt: skip
    as_text = post(tiny_chat_server, "chat", {**chat(max_tokens=5), "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Where does\nAlice live?"}]})  # fmt: skip
    assert as_parts.status == 200
    assert as_parts.body["choices"] == as_text.body["choices"]
    assert as_parts.body["usage"] == as_text.body["usage"]


@pytest.mark.parametrize(
    "messages, says",
    [
        ([], "messages must hold at least one message"),
        ([{"role": "wizard", "content": "hi"}], 'messages[0].role must be one of system, user'),
        ([{"role": "user", "content": "hi"}, {"role": "tool", "content": "x"}], "messages[1].role"),
        ([{"role": "user", "content": None}], "messages[0].content must be text or a list"),
        ([{"role": "user", "content": []}], "messages[0].content must be text or a list"),
        ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]}],
         'messages[0].content[0] must be a text part'),
        ([{"role": "user", "content": [{"type": "text", "text": 5}]}],
         "messages[0].content[0].text must be text"),
        ([{"role": "user", "content": ["hi"]}], "messages[0].content[0] must be a text part"),
        (["hi"], "messages[0] must be {role, content}"),
    ],
)  # fmt: skip
def test_malformed_messages_are_400_naming_the_field(tiny_chat_server, messages, says):
    r = post(tiny_chat_server, "chat", {**chat(max_tokens=2), "messages": messages})
    assert r.status == 400 and r.message.startswith(says), r.body


def test_chat_replies_are_cut_at_the_stop_strings(tiny_chat_llama, tiny_chat_server):
    whole = post(tiny_chat_server, "chat", chat(max_tokens=12)).body["choices"][0]
    text = whole["message"]["content"]
    stop = text[len(text) // 2 :][:2]
    assert stop.strip(), text
    (cut,) = post(tiny_chat_server, "chat", chat(max_tokens=12, stop=[stop])).body["choices"]
    assert cut["message"]["content"] == text[: text.find(stop)]
    assert cut["finish_reason"] == "stop"


# -- stream ----------------------------------------------------------------------------------


def events(server: OpenAIServer, route: str, body: dict) -> tuple[dict[str, str], list]:
    """The headers and the parsed events of a streamed reply (``[DONE]`` as the string)."""
    path = "/v1/chat/completions" if route == "chat" else "/v1/completions"
    connection = http.client.HTTPConnection(*address(server), timeout=30)
    try:
        connection.request("POST", path, json.dumps({**body, "stream": True}))
        response = connection.getresponse()
        assert response.status == 200
        text = response.read().decode()
        headers = dict(response.getheaders())
    finally:
        connection.close()
    assert text.endswith("\n\n") and all(e.startswith("data: ") for e in text.split("\n\n")[:-1])
    data = [e.removeprefix("data: ") for e in text.split("\n\n")[:-1]]
    return headers, [d if d == "[DONE]" else json.loads(d) for d in data]


@pytest.mark.parametrize("logprobs", [False, True])
def test_a_streamed_chat_reply_is_the_unstreamed_one_in_the_apis_chunks(tiny_chat_server, logprobs):
    fields = {"logprobs": True, "top_logprobs": 2} if logprobs else {}
    whole = post(tiny_chat_server, "chat", chat(max_tokens=6, **fields)).body
    headers, chunks = events(tiny_chat_server, "chat", chat(max_tokens=6, **fields))
    assert headers["Content-Type"].startswith("text/event-stream") and chunks[-1] == "[DONE]"
    chunks = chunks[:-1]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert len({c["id"] for c in chunks}) == 1
    choices = [c["choices"][0] for c in chunks]
    assert choices[0]["delta"] == {"role": "assistant", "content": ""}
    assert [c["finish_reason"] for c in choices] == [None] * (len(choices) - 1) + ["stop" if
        whole["choices"][0]["finish_reason"] == "stop" else "length"]  # fmt: skip
    content = "".join(c["delta"].get("content", "") for c in choices)
    assert content == whole["choices"][0]["message"]["content"]
    if logprobs:
        streamed = [e for c in choices if c["logprobs"] for e in c["logprobs"]["content"]]
        assert streamed == whole["choices"][0]["logprobs"]["content"]
        assert all(len(c["logprobs"]["content"]) == 1 for c in choices[1:-1])  # a token each


def test_a_streamed_completion_carries_each_tokens_log_probabilities_and_the_usage(
    tiny_chat_server,
):
    body = completion(["Alice lives in", "Bob"], max_tokens=3, echo=True, logprobs=1)
    whole = post(tiny_chat_server, "completions", body).body
    _, chunks = events(tiny_chat_server, "completions",
                       {**body, "stream_options": {"include_usage": True}})  # fmt: skip
    assert chunks[-1] == "[DONE]" and chunks[-2]["choices"] == []
    assert chunks[-2]["usage"] == whole["usage"]
    assert all(c["usage"] is None for c in chunks[:-2])
    for want in whole["choices"]:
        mine = [c["choices"][0] for c in chunks[:-2] if c["choices"][0]["index"] == want["index"]]
        assert "".join(c["text"] for c in mine) == want["text"]
        assert mine[-1]["finish_reason"] == want["finish_reason"]
        for key in ("tokens", "token_logprobs", "text_offset", "top_logprobs"):
            got = [v for c in mine if c["logprobs"] for v in c["logprobs"][key]]
            assert got == want["logprobs"][key], key


@pytest.mark.parametrize(
    "route, fields, says",
    [
        ("chat", {"stream": "yes"}, 'stream must be true or false, not "yes"'),
        ("completions", {"stream": 1}, "stream must be true or false, not 1"),
        ("chat", {"stream_options": {"include_usage": True}}, "stream_options needs stream"),
        ("completions", {"stream": True, "stream_options": []}, "stream_options must be an object"),
        ("completions", {"stream": True, "stream_options": {"include_usage": "y"}},
         "include_usage must be true or false"),
    ],
)  # fmt: skip
def test_stream_fields_are_type_checked(tiny_chat_server, route, fields, says):
    body = completion(max_tokens=1) if route == "completions" else chat(max_tokens=1)
    r = post(tiny_chat_server, route, {**body, **fields})
    assert r.status == 400 and r.message.startswith(says), r.body


# -- every error in the API's shape -----------------------------------------------------------


def exchange(server: OpenAIServer, data: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``data`` as it is; the status, headers and body of the answer."""
    with socket.create_connection(address(server), timeout=10) as sock:
        sock.sendall(data)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, dict(response.getheaders()), response.read()


def api_error(body: bytes) -> str:
    """The message of an error in the OpenAI API's shape (it fails on any other shape)."""
    error = json.loads(body)["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert error["type"] in ("invalid_request_error", "server_error")
    return error["message"]


@pytest.mark.parametrize(
    "request_line, status, allow, says",
    [
        ("PUT /v1/completions", 405, "POST", "/v1/completions takes POST requests, not PUT"),
        ("GET /v1/chat/completions", 405, "POST", "takes POST requests, not GET"),
        ("DELETE /v1/models", 405, "GET", "/v1/models takes GET requests, not DELETE"),
        ("POST /v1/models", 405, "GET", "takes GET requests, not POST"),
        ("PATCH /v1/nowhere", 404, None, "no route /v1/nowhere"),
        ("OPTIONS /v1/completions", 405, "POST", "not OPTIONS"),
        ("FOO /v1/models", 501, None, "Unsupported method ('FOO')"),
        ("NOT A REQUEST LINE", 400, None, "Bad request syntax"),
        ("GET /v1/" + "a" * 70_000, 414, None, "Request-URI Too Long"),
    ],
)
def test_every_refusal_is_json_in_the_apis_shape(tiny_chat_server, request_line, status, allow, says):  # fmt: skip
    body = b'{"model": "tiny"}'
    data = f"{request_line} HTTP/1.1\r\nHost: t\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    got, headers, answer = exchange(tiny_chat_server, data + body)
    assert got == status and headers["Content-Type"] == "application/json"
    assert says in api_error(answer) and headers.get("Allow") == allow


@pytest.mark.parametrize(
    "headers, says",
    [
        ({"X-Big": "a" * 70_000}, "Line too long"),
        ({f"X-H{i}": "1" for i in range(120)}, "Too many headers"),
    ],
)
def test_headers_too_large_are_431_in_json(tiny_chat_server, headers, says):
    lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    status, got, answer = exchange(
        tiny_chat_server, f"GET /v1/models HTTP/1.1\r\n{lines}\r\n".encode()
    )
    assert status == 431 and got["Content-Type"] == "application/json"
    assert api_error(answer).startswith(says)


def test_a_refused_method_keeps_the_connection_for_the_next_request(tiny_chat_server):
    connection = http.client.HTTPConnection(*address(tiny_chat_server), timeout=10)
    try:
        connection.request("PUT", "/v1/completions", json.dumps(completion()))
        response = connection.getresponse()
        assert response.status == 405 and api_error(response.read())
        connection.request("HEAD", "/v1/models")
        response = connection.getresponse()
        assert response.status == 200 and response.read() == b""  # headers only
        connection.request("POST", "/v1/completions", json.dumps(completion(max_tokens=1)))
        assert connection.getresponse().status == 200
    finally:
        connection.close()


# -- the API key ---------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["", "   ", " sk-a", "sk-a\n"])
def test_a_key_no_header_could_carry_is_refused(tiny_chat_llama, key):
    with pytest.raises(
        UsageError, match="the API key (is empty|is only white space|has white space around it)"
    ):
        OpenAIServer(tiny_chat_llama, api_key=key)


def test_the_key_is_read_as_http_states_it(tiny_chat_llama):
    with OpenAIServer(tiny_chat_llama, api_key=KEY) as s:
        for header, status in [
            (f"Bearer {KEY}", 200),
            (f"bearer {KEY}", 200),  # the scheme's case does not matter
            (f"Bearer   {KEY}  ", 200),  # nor the spaces around the key
            ("Bearer   ", 401),
            ("Bearer", 401),
            (f"Basic {KEY}", 401),
            (f"Bearer {KEY}x", 401),
            (f"Bearer {KEY[:-1]}", 401),
        ]:
            assert get(s, "/v1/models", Authorization=header).status == status, header


@pytest.mark.parametrize(
    "value, says",
    [
        ("", ["the key in that variable is empty"]),
        ("   ", ["only white space"]),
        (" sk-a ", ["white space around it"]),
    ],
    ids=["set-but-empty", "only-spaces", "spaces-around"],
)
def test_serve_refuses_a_key_variable_no_client_could_send(
    tiny_chat_llama_dir, tmp_path, monkeypatch, value, says
):
    monkeypatch.setenv("FAITHPROBE_SERVE_KEY", value)
    args = ["serve", "--model", str(tiny_chat_llama_dir), "--port", "0"]
    refused([*args, "--api-key-env", "FAITHPROBE_SERVE_KEY"], watch=[tmp_path],
            expect=["--api-key-env 'FAITHPROBE_SERVE_KEY'", *says])  # fmt: skip


# -- the official openai client calls every field the server documents -----------------------

# the request fields each route reads, as the module docstring of openai_server lists them
DOCUMENTED = {
    "completions": ["model", "prompt", "max_tokens", "echo", "logprobs", "stop", "temperature",
                    "n", "stream", "stream_options"],
    "chat": ["model", "messages", "max_tokens", "max_completion_tokens", "logprobs",
             "top_logprobs", "stop", "temperature", "n", "stream", "stream_options",
             "continue_final_message", "add_generation_prompt"],
}  # fmt: skip


def test_the_docstring_lists_the_fields_the_test_calls():
    doc = server_module.__doc__
    for name in {f for fields in DOCUMENTED.values() for f in fields}:
        assert f"``{name}``" in doc, name


def test_the_openai_client_calls_every_documented_field(tiny_chat_llama, tiny_chat_server):
    client = openai.OpenAI(api_key="none", base_url=tiny_chat_server.url, max_retries=0)
    model = tiny_chat_server.model_name
    (listed,) = client.models.list().data
    assert listed.id == model
    ids = tiny_chat_llama.prompt_ids(PROMPT)
    sent: dict[str, set[str]] = {"completions": set(), "chat": set()}

    def complete(**fields):
        sent["completions"] |= set(fields) | {"model"}
        return client.completions.create(model=model, **fields)

    def converse(**fields):
        sent["chat"] |= set(fields) | {"model"}
        return client.chat.completions.create(model=model, **fields)

    plain = complete(prompt=PROMPT, max_tokens=4, temperature=0, n=1, stop=["\n\n"])
    assert [c.text for c in complete(prompt=[ids, ids], max_tokens=4).choices] == [
        plain.choices[0].text
    ] * 2
    scored = complete(prompt=ids, max_tokens=1, echo=True, logprobs=2)
    assert scored.choices[0].logprobs.top_logprobs[0] is None
    assert len(scored.choices[0].logprobs.tokens) == len(ids) + 1
    streamed = complete(
        prompt=PROMPT, max_tokens=4, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(streamed)
    assert "".join(c.choices[0].text for c in chunks if c.choices) == plain.choices[0].text
    assert chunks[-1].usage.completion_tokens == plain.usage.completion_tokens
    with pytest.raises(openai.BadRequestError, match="logprobs must be at most 5"):
        complete(prompt=PROMPT, max_tokens=1, logprobs=6)

    messages = [{"role": "system", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": "Where does Alice live?"}]}]  # fmt: skip
    reply = converse(messages=messages, max_tokens=5, temperature=0, n=1, stop=["\n\n"])
    again = converse(messages=messages, max_completion_tokens=5, logprobs=True, top_logprobs=3)
    assert again.choices[0].message.content == reply.choices[0].message.content
    assert all(len(t.top_logprobs) == 3 for t in again.choices[0].logprobs.content)
    pieces = converse(
        messages=messages, max_tokens=5, stream=True, stream_options={"include_usage": True}
    )
    assert (
        "".join(c.choices[0].delta.content or "" for c in pieces if c.choices)
        == reply.choices[0].message.content
    )
    begun = [*messages, {"role": "assistant", "content": "Alice"}]
    sent["chat"] |= {"continue_final_message", "add_generation_prompt"}
    continued = client.chat.completions.create(
        model=model, messages=begun, max_tokens=3,
        extra_body={"continue_final_message": True, "add_generation_prompt": False},
    )  # fmt: skip
    assert continued.choices[0].message.content is not None
    with pytest.raises(openai.BadRequestError, match="top_logprobs must be at most 20"):
        converse(messages=messages, logprobs=True, top_logprobs=21)
    assert sent == {route: set(fields) for route, fields in DOCUMENTED.items()}
