"""A small OpenAI-compatible HTTP server in front of a local causal LM, for tests and demos.

It serves any :class:`~faithprobe.subjects.hf_causal.HFCausalLM` (a tiny random model in the
tests, the embedded SmolLM2 with ``faithprobe serve``) through the part of the API the
``openai:`` backend uses:

- ``POST /v1/completions``: ``prompt`` (a string or a list of strings), ``max_tokens``
  (0 allowed), ``echo``, ``logprobs`` (the chosen tokens' ``tokens``, ``token_logprobs``
  and ``text_offset``; ``top_logprobs`` is not served), ``stop`` (cut at the first
  occurrence, as the OpenAI API does), ``usage``;
- ``POST /v1/chat/completions``: ``messages`` in the tokenizer's chat template,
  ``max_tokens`` or ``max_completion_tokens``, ``logprobs`` (per-token ``content``), ``usage``;
- ``GET /v1/models``.

Decoding is always greedy, exactly as the model answers generation requests locally (a
``temperature`` above 0 is refused). Token log-probabilities come from one forward pass over
prompt and reply. A token's text is what it adds to the decoded text (a token holding part
of a character adds nothing; the one completing it adds the character), and its
``text_offset`` is where that text starts in the prompt (echoed tokens) or after it (reply
tokens), assuming the tokenizer decodes a prompt back to itself.

Requests run one at a time on the model; the HTTP server is threaded, so slow or faulty
requests do not block the others. :class:`Faults` makes it misbehave on purpose: answer
429 or 500, drop the connection without a response, or respond only after a delay, for
the first requests and/or a seeded fraction of them.
"""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAULT_KINDS = ("429", "500", "drop", "slow")
ROUTES = {"/v1/completions": "completions", "/v1/chat/completions": "chat"}


@dataclass(frozen=True)
class Faults:
    """Which requests to the two completion routes misbehave, and how.

    The first ``len(first)`` requests get the faults in ``first``, in order; after them
    each request gets a fault with probability ``rate``, drawn from ``kinds`` by a generator
    seeded with ``seed``. ``slow`` waits ``slow_seconds`` before answering normally."""

    first: tuple[str, ...] = ()
    rate: float = 0.0
    kinds: tuple[str, ...] = FAULT_KINDS
    slow_seconds: float = 5.0
    seed: int = 0

    def __post_init__(self) -> None:
        unknown = (set(self.first) | set(self.kinds)) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown faults {sorted(unknown)}; known: {', '.join(FAULT_KINDS)}")
        if not 0 <= self.rate <= 1 or (self.rate and not self.kinds):
            raise ValueError("the fault rate must be in [0, 1], with at least one fault kind")


class BadRequest(ValueError):
    """A request the server refuses with 400 (its message is the error's)."""


class OpenAIServer:
    """``OpenAIServer(subject).start()`` serves ``subject`` on ``url`` in a background
    thread (``port=0``: a free port); ``stop()`` or a ``with`` block ends it.

    ``hits`` counts the requests each route received, faulty ones included. With
    ``api_key`` set, requests without ``Authorization: Bearer <api_key>`` get 401.
    ``chat_only`` answers 404 on ``/v1/completions``, as a chat-only endpoint does."""

    def __init__(
        self,
        subject,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        model_name: str | None = None,
        faults: Faults | None = None,
        api_key: str | None = None,
        chat_only: bool = False,
    ) -> None:
        self.subject = subject
        self.model_name = model_name or subject.name
        self.chat_only = chat_only
        self.hits: Counter[str] = Counter()
        self._api_key = api_key
        self._model_lock = threading.Lock()
        self._count_lock = threading.Lock()
        self.inject(faults or Faults())
        self._httpd = ThreadingHTTPServer((host, port), _handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> OpenAIServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- bookkeeping ---------------------------------------------------------------------

    def inject(self, faults: Faults) -> None:
        """Misbehave from now on as ``faults`` says (its ``first`` faults start again)."""
        with self._count_lock:
            self.faults = faults
            self._served = 0
            self._rng = random.Random(faults.seed)

    def _arrived(self, route: str) -> str | None:
        """Count a request to ``route``; the fault it gets, if any."""
        with self._count_lock:
            self.hits[route] += 1
            n = self._served
            self._served += 1
            if n < len(self.faults.first):
                return self.faults.first[n]
            if self.faults.rate and self._rng.random() < self.faults.rate:
                return self._rng.choice(self.faults.kinds)
            return None

    def _authorized(self, header: str | None) -> bool:
        return self._api_key is None or header == f"Bearer {self._api_key}"

    # -- the routes ----------------------------------------------------------------------

    def models(self) -> dict:
        entry = {"id": self.model_name, "object": "model", "created": 0, "owned_by": "faithprobe"}
        return {"object": "list", "data": [entry]}

    def completions(self, body: dict) -> dict:
        prompts = body.get("prompt", "")
        prompts = [prompts] if isinstance(prompts, str) else prompts
        if not isinstance(prompts, list) or not all(isinstance(p, str) for p in prompts):
            raise BadRequest("prompt must be a string or a list of strings")
        echo, logprobs = bool(body.get("echo")), body.get("logprobs")
        if logprobs is not None and (not isinstance(logprobs, int) or logprobs < 0):
            raise BadRequest("logprobs must be an integer >= 0")
        stop = body.get("stop") or []
        stop = [stop] if isinstance(stop, str) else list(stop)
        choices, usage = [], Counter()
        for index, prompt in enumerate(prompts):
            ids = self.subject.prompt_ids(prompt)
            reply = self._continue(ids, self._max_tokens(body, "max_tokens"), usage)
            reply.cut_at_stop(stop)
            choice = {
                "index": index,
                "text": (prompt if echo else "") + reply.text,
                "finish_reason": reply.finish_reason,
                "logprobs": None,
            }
            if logprobs is not None:
                pieces = (
                    reply.echo(self.subject, ids, prompt) if echo else reply.pieces(len(prompt))
                )
                tokens, values, offsets = zip(*pieces, strict=True) if pieces else ((), (), ())
                choice["logprobs"] = {
                    "tokens": list(tokens),
                    "token_logprobs": list(values),
                    "text_offset": list(offsets),
                    "top_logprobs": None,
                }
            choices.append(choice)
        return self._response("text_completion", choices, usage)

    def chat(self, body: dict) -> dict:
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(
            isinstance(m, dict) and isinstance(m.get("content"), str) for m in messages
        ):
            raise BadRequest("messages must be a list of {role, content} with text content")
        try:
            ids = self.subject.chat_ids(
                [{"role": m["role"], "content": m["content"]} for m in messages]
            )
        except (ValueError, KeyError) as err:
            raise BadRequest(str(err)) from None
        usage: Counter[str] = Counter()
        key = "max_completion_tokens" if "max_completion_tokens" in body else "max_tokens"
        reply = self._continue(ids, self._max_tokens(body, key), usage)
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": reply.text},
            "finish_reason": reply.finish_reason,
            "logprobs": None,
        }
        if body.get("logprobs"):
            content = [
                {"token": t, "logprob": v, "bytes": list(t.encode()), "top_logprobs": []}
                for t, v, _ in reply.pieces(0)
            ]
            choice["logprobs"] = {"content": content}
        return self._response("chat.completion", [choice], usage)

    # -- helpers -------------------------------------------------------------------------

    @staticmethod
    def _max_tokens(body: dict, key: str) -> int:
        value = body.get(key)
        value = 16 if value is None else value
        if not isinstance(value, int) or value < 0:
            raise BadRequest(f"{key} must be an integer >= 0")
        if (body.get("temperature") or 0) > 0:
            raise BadRequest("this server decodes greedily only: temperature must be 0")
        if (body.get("n") or 1) != 1:
            raise BadRequest("this server makes one choice per prompt: n must be 1")
        return value

    def _continue(self, ids: list[int], max_tokens: int, usage: Counter) -> _Reply:
        with self._model_lock:
            tokens, ended = self.subject.greedy(ids, max_tokens) if max_tokens else ([], False)
            logprobs = self.subject.token_logprobs(ids + tokens)
        usage["prompt_tokens"] += len(ids)
        usage["completion_tokens"] += len(tokens) + ended
        texts, offsets = _token_texts(self.subject.decode, tokens)
        return _Reply(
            text="".join(texts),
            texts=texts,
            offsets=offsets,
            logprobs=logprobs[len(ids) :],
            prompt_logprobs=logprobs[: len(ids)],
            finish_reason="stop" if ended else "length",
        )

    def _response(self, obj: str, choices: list[dict], usage: Counter) -> dict:
        prompt, completion = usage["prompt_tokens"], usage["completion_tokens"]
        return {
            "id": f"{obj}-{time.monotonic_ns()}",
            "object": obj,
            "created": int(time.time()),
            "model": self.model_name,
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }


@dataclass
class _Reply:
    text: str
    texts: list[str]  # what each reply token adds to the text
    offsets: list[int]  # where each reply token's text starts in the reply
    logprobs: list[float]
    prompt_logprobs: list[float | None]
    finish_reason: str

    def cut_at_stop(self, stop: list[str]) -> None:
        """Cut at the first occurrence of a stop string (OpenAI semantics)."""
        found = [i for i in (self.text.find(s) for s in stop if s) if i >= 0]
        if not found:
            return
        cut = min(found)
        keep = sum(1 for o in self.offsets if o < cut)
        self.text = self.text[:cut]
        self.texts, self.offsets = self.texts[:keep], self.offsets[:keep]
        self.logprobs = self.logprobs[:keep]
        self.finish_reason = "stop"

    def pieces(self, start: int) -> list[tuple[str, float | None, int]]:
        """(text, log-probability, offset) of each reply token, offsets counted from
        ``start``."""
        return [
            (t, v, start + o)
            for t, v, o in zip(self.texts, self.logprobs, self.offsets, strict=True)
        ]

    def echo(self, subject, ids: list[int], prompt: str) -> list[tuple[str, float | None, int]]:
        """The prompt's tokens, then the reply's."""
        texts, offsets = _token_texts(subject.decode, ids)
        echoed = list(zip(texts, self.prompt_logprobs, offsets, strict=True))
        return echoed + self.pieces(len(prompt))


def _token_texts(decode, ids: list[int]) -> tuple[list[str], list[int]]:
    """What each token adds to the decoded text, and where that starts. Decoding each
    prefix keeps characters split over several tokens whole (a token ending inside a
    character adds nothing; the one completing it adds the character)."""
    texts, offsets, before = [], [], ""
    for k in range(1, len(ids) + 1):
        now = decode(ids[:k])
        if k < len(ids):
            now = now.rstrip("\ufffd")  # an unfinished character, shown once it is complete
        common = len(before) if now.startswith(before) else _common_prefix(before, now)
        offsets.append(common)
        texts.append(now[common:])
        before = now
    return texts, offsets


def _common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _handler(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the client's connection pool expects

        def log_message(self, format, *args) -> None:  # noqa: A002 - quiet
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, server.models())
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            path = self.path.rstrip("/")
            route = ROUTES.get(path)
            if route is None or (route == "completions" and server.chat_only):
                self._error(404, f"no route {self.path}")
                return
            fault = server._arrived(route)
            if not server._authorized(self.headers.get("Authorization")):
                self._error(401, "invalid API key", "invalid_api_key")
                return
            if fault == "drop":
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if fault in ("429", "500"):
                self._error(int(fault), f"injected fault {fault}")
                return
            if fault == "slow":
                time.sleep(server.faults.slow_seconds)
            try:
                payload = json.loads(body or b"{}")
                if not isinstance(payload, dict):
                    raise BadRequest("the body must be a JSON object")
                model = payload.get("model")
                if model != server.model_name:
                    self._error(404, f"model {model!r} is not served here", "model_not_found")
                    return
                self._send(200, getattr(server, route)(payload))
            except (BadRequest, json.JSONDecodeError) as err:
                self._error(400, str(err))
            except Exception as err:  # the server stays up; the client sees a 500
                self._error(500, f"{type(err).__name__}: {err}")

        def _error(self, status: int, message: str, code: str | None = None) -> None:
            kind = "invalid_request_error" if status < 500 else "server_error"
            error = {"message": message, "type": kind, "param": None, "code": code}
            self._send(status, {"error": error})

        def _send(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client gave up (a slow fault outlived its timeout)
                self.close_connection = True

    return Handler
