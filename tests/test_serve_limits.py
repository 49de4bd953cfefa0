"""``faithprobe serve`` stays responsive under abuse: replies capped by the server and the
model's context, a time budget per request, 400 for malformed requests, bodies bounded and
read with a timeout, and the API key checked before the body is read.

Every request goes through a socket with a timeout, so a regression fails instead of
hanging the suite."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest
from typer.testing import CliRunner

from faithprobe.cli import app
from faithprobe.serving import Limits, OpenAIServer
from faithprobe.subjects.hf_causal import HFCausalLM

CONTEXT = 256  # max_position_embeddings of the tiny Llama (tests/conftest.py)
KEY = "sk-faithprobe-limits"
LONG_PROMPT = ("Alice lives in Paris. " * 5000)[:100_000]


def slowed(tiny_chat_llama: HFCausalLM, seconds: float) -> HFCausalLM:
    """The tiny model taking ``seconds`` longer over each forward pass, so that a time
    budget of a second is spent after a few tokens."""
    subject = HFCausalLM(tiny_chat_llama.model, tiny_chat_llama.tokenizer, name="tiny")
    forward = subject._forward

    def slow_forward(*args, **kwargs):
        time.sleep(seconds)
        return forward(*args, **kwargs)

    subject._forward = slow_forward
    return subject


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: dict

    @property
    def message(self) -> str:
        return self.body["error"]["message"]


def address(server: OpenAIServer) -> tuple[str, int]:
    url = urlsplit(server.url)
    return url.hostname, url.port


def read(response: http.client.HTTPResponse) -> Response:
    return Response(response.status, dict(response.getheaders()), json.loads(response.read()))


def post(
    server: OpenAIServer, route: str, body: dict | bytes, timeout: float = 10.0, **headers
) -> Response:
    """POST ``body`` (as JSON unless it is bytes) to the route ``completions`` or ``chat``."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    path = "/v1/chat/completions" if route == "chat" else f"/v1/{route}"
    connection = http.client.HTTPConnection(*address(server), timeout=timeout)
    try:
        connection.request("POST", path, data, headers)
        return read(connection.getresponse())
    finally:
        connection.close()


def raw(server: OpenAIServer, headers: str, body: bytes = b"", timeout: float = 5.0) -> Response:
    """POST to ``/v1/completions`` with the header lines ``headers`` and ``body`` sent as
    they are (a Content-Length that does not match the body included)."""
    head = f"POST /v1/completions HTTP/1.1\r\nHost: test\r\n{headers}\r\n".encode()
    with socket.create_connection(address(server), timeout=timeout) as sock:
        sock.sendall(head + body)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return read(response)


def completion(prompt: str | list[str] = "Alice lives in", **fields) -> dict:
    return {"model": "tiny", "prompt": prompt, **fields}


def chat(content: str = "Where does Alice live?", **fields) -> dict:
    return {"model": "tiny", "messages": [{"role": "user", "content": content}], **fields}


# -- 1. replies and prompts are capped --------------------------------------------------


def test_a_huge_max_tokens_is_capped_by_the_context_and_the_next_request_is_served(
    tiny_chat_server,
):
    for route, body in (("completions", completion()), ("chat", chat())):
        r = post(tiny_chat_server, route, {**body, "max_tokens": 10**9}, timeout=30)
        assert r.status == 200, r.body
        usage = r.body["usage"]
        assert r.body["choices"][0]["finish_reason"] == "length"
        assert usage["completion_tokens"] == CONTEXT - usage["prompt_tokens"]
    r = post(tiny_chat_server, "completions", completion(max_tokens=3), timeout=5)
    assert r.status == 200 and r.body["usage"]["completion_tokens"] == 3


def test_max_tokens_is_capped_by_the_server_setting(tiny_chat_llama):
    with OpenAIServer(tiny_chat_llama, limits=Limits(max_tokens=5)) as s:
        for route, body in (("completions", completion()), ("chat", chat())):
            r = post(s, route, {**body, "max_tokens": 100})
            assert r.status == 200, r.body
            assert r.body["usage"]["completion_tokens"] == 5
            assert r.body["choices"][0]["finish_reason"] == "length"


def test_a_prompt_longer_than_the_context_is_refused_quickly(tiny_chat_server):
    requests = [
        ("completions", completion(LONG_PROMPT), "prompt:"),
        ("completions", completion(["Alice lives in", LONG_PROMPT]), "prompt[1]:"),
        ("chat", chat(LONG_PROMPT), "messages (in the chat template):"),
    ]
    for route, body, named in requests:
        started = time.monotonic()
        r = post(tiny_chat_server, route, body, timeout=30)
        assert r.status == 400, r.body
        assert r.message.startswith(named) and f"context of {CONTEXT} tokens" in r.message
        assert time.monotonic() - started < 10  # generous: tokenising takes well under 1 s


# -- 2. a time budget per request ---------------------------------------------------------


def test_generation_stops_when_the_time_budget_is_spent(tiny_chat_llama):
    with OpenAIServer(slowed(tiny_chat_llama, 0.1), limits=Limits(seconds=1.0)) as s:
        started = time.monotonic()
        r = post(s, "completions", completion(max_tokens=10**9), timeout=30)
        assert r.status == 200, r.body
        assert r.body["choices"][0]["finish_reason"] == "length"
        assert 0 < r.body["usage"]["completion_tokens"] < 100  # the budget cut it, not the context
        assert time.monotonic() - started < 6  # generous: 1 s, a step, the log-prob pass
        r = post(s, "chat", chat(max_tokens=2), timeout=10)
        assert r.status == 200 and r.body["usage"]["completion_tokens"] == 2


def test_a_request_that_cannot_get_the_model_within_its_budget_gets_503(tiny_chat_llama):
    """The first request holds the model for about 1.6 s (1 s of budget, then the decoding
    step under way and the log-prob pass, 0.4 s each); the second waits for it for its own
    second of budget only, then is told to retry."""
    with OpenAIServer(slowed(tiny_chat_llama, 0.4), limits=Limits(seconds=1.0)) as s:
        first: list[Response] = []
        busy = threading.Thread(
            target=lambda: first.append(post(s, "completions", completion(max_tokens=10**9), 30))
        )
        busy.start()
        time.sleep(0.2)
        started = time.monotonic()
        r = post(s, "completions", completion(max_tokens=1), timeout=30)
        assert r.status == 503, r.body
        assert "time budget" in r.message and r.headers["Retry-After"] == "1"
        assert time.monotonic() - started < 6
        busy.join(timeout=30)
        assert first[0].status == 200 and first[0].body["choices"][0]["finish_reason"] == "length"
        assert post(s, "completions", completion(max_tokens=0), timeout=10).status == 200


# -- 3. malformed requests are 400s naming what is wrong ----------------------------------


@pytest.mark.parametrize(
    "body, says",
    [
        (b'{"model": "tiny", "prompt": "caf\xe9"}', "UTF-8"),  # Latin-1, not UTF-8
        (b"[" * 100_000, "nested too deeply"),
        (b'{"model": "tiny",', "not JSON"),
    ],
)
def test_a_body_that_is_not_utf8_json_is_400(tiny_chat_server, body, says):
    r = post(tiny_chat_server, "completions", body)
    assert r.status == 400 and says in r.message


@pytest.mark.parametrize("route", ["completions", "chat"])
@pytest.mark.parametrize("temperature", ["hot", "0", [0], True])
def test_a_temperature_that_is_not_a_number_is_400(tiny_chat_server, route, temperature):
    body = completion() if route == "completions" else chat()
    r = post(tiny_chat_server, route, {**body, "temperature": temperature})
    assert r.status == 400 and r.message.startswith("temperature must be a number")


@pytest.mark.parametrize("stop", [5, [1], ["a", None], {"a": "b"}, True])
def test_a_stop_that_is_not_strings_is_400(tiny_chat_server, stop):
    r = post(tiny_chat_server, "completions", completion(stop=stop))
    assert r.status == 400 and r.message.startswith("stop must be a string or a list of strings")


@pytest.mark.parametrize(
    "route, field, value",
    [
        ("completions", "max_tokens", "16"),
        ("completions", "max_tokens", 1e9),
        ("completions", "max_tokens", True),
        ("completions", "max_tokens", -1),
        ("completions", "n", "1"),
        ("completions", "n", 1.0),
        ("completions", "logprobs", "1"),
        ("completions", "logprobs", True),
        ("completions", "echo", "yes"),
        ("completions", "echo", 1),
        ("completions", "prompt", 5),
        ("completions", "prompt", [1, 2]),
        ("completions", "model", 5),
        ("completions", "model", None),
        ("chat", "messages", "hi"),
        ("chat", "messages", [{"content": "hi"}]),
        ("chat", "messages", [{"role": "user", "content": 5}]),
        ("chat", "logprobs", "yes"),
        ("chat", "max_completion_tokens", "5"),
        ("chat", "max_tokens", 2.5),
        ("chat", "n", [1]),
    ],
)
def test_every_malformed_field_is_a_400_naming_it(tiny_chat_server, route, field, value):
    body = completion() if route == "completions" else chat()
    r = post(tiny_chat_server, route, {**body, field: value})
    assert r.status == 400, r.body
    assert r.message.startswith(field), r.message


# -- 4. the body: its length checked, its bytes awaited for a while only ------------------


@pytest.mark.parametrize(
    "headers, status",
    [
        ("Content-Length: abc\r\n", 400),
        ("Content-Length: -5\r\n", 400),
        ("Content-Length: 1e3\r\n", 400),
        ("Content-Length: 5\r\nContent-Length: 6\r\n", 400),
        (f"Content-Length: {2 << 20}\r\n", 413),
        (f"Content-Length: {'9' * 5000}\r\n", 413),
        ("Transfer-Encoding: chunked\r\n", 411),
        ("", 411),
    ],
)
def test_a_bad_content_length_is_refused_at_once(tiny_chat_server, headers, status):
    body = b"" if "Length" in headers else json.dumps(completion(max_tokens=1)).encode()
    r = raw(tiny_chat_server, headers, body)
    assert r.status == status, r.body
    assert r.headers["Connection"] == "close"  # the rest of the body was not read


def test_a_body_that_stops_arriving_gets_408_and_frees_the_thread(tiny_chat_llama):
    with OpenAIServer(tiny_chat_llama, limits=Limits(read_seconds=0.5)) as s:
        started = time.monotonic()
        r = raw(s, "Content-Length: 1000\r\n", b'{"model": "tiny", ')
        assert r.status == 408 and "stopped arriving" in r.message
        assert time.monotonic() - started < 4
        assert post(s, "completions", completion(max_tokens=1)).status == 200


# -- 5. the API key is checked before the body is read ------------------------------------


def test_the_api_key_is_checked_before_the_body_is_read(tiny_chat_llama):
    with OpenAIServer(tiny_chat_llama, api_key=KEY) as s:
        for key in ("Authorization: Bearer wrong\r\n", ""):
            for length in (1000, 10**6, 10**12):
                r = raw(s, f"{key}Content-Length: {length}\r\n")  # and no body
                assert r.status == 401 and r.message == "invalid API key"
        # a refused body is skipped: the connection carries the next request
        connection = http.client.HTTPConnection(*address(s), timeout=10)
        try:
            for key, status in (("wrong", 401), (KEY, 200)):
                body = json.dumps(completion(max_tokens=1))
                connection.request(
                    "POST", "/v1/completions", body, {"Authorization": f"Bearer {key}"}
                )
                assert read(connection.getresponse()).status == status
        finally:
            connection.close()


# -- the command ----------------------------------------------------------------------------


def test_serve_takes_the_limits(tiny_chat_llama, tmp_path, monkeypatch):
    folder = tmp_path / "model"
    tiny_chat_llama.model.save_pretrained(folder)
    tiny_chat_llama.tokenizer.save_pretrained(folder)
    served = []

    def serve_once(self: OpenAIServer) -> None:
        served.append(self.limits)
        self.start().stop()

    monkeypatch.setattr(OpenAIServer, "serve_forever", serve_once)
    args = ["serve", "--model", str(folder), "--port", "0", "--max-tokens", "7"]
    args += ["--time-budget", "2.5", "--max-body-bytes", "4096", "--read-timeout", "3"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert served == [Limits(max_tokens=7, seconds=2.5, body_bytes=4096, read_seconds=3.0)]
