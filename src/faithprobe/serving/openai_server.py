"""A small OpenAI-compatible HTTP server in front of a local causal LM, for tests and demos.

It serves any :class:`~faithprobe.subjects.hf_causal.HFCausalLM` (a tiny random model in the
tests, the embedded SmolLM2 with ``faithprobe serve``) through the part of the API the
``openai:`` backend uses:

- ``POST /v1/completions``: ``prompt`` (a string or a list of strings), ``max_tokens``
  (0 allowed), ``echo``, ``logprobs`` (the chosen tokens' ``tokens``, ``token_logprobs``
  and ``text_offset``; ``top_logprobs`` is not served), ``stop`` (cut at the first
  occurrence, as the OpenAI API does), ``usage``;
- ``POST /v1/chat/completions``: ``messages`` in the tokenizer's chat template,
  ``max_tokens`` or ``max_completion_tokens``, ``logprobs`` (per-token ``content``) with
  ``top_logprobs`` (0 to 20: the most likely tokens at each reply position, with their
  log-probabilities, as the OpenAI API gives them; the alternatives' text is each token
  decoded alone), ``usage``;
- ``GET /v1/models``.

Decoding is always greedy, exactly as the model answers generation requests locally (a
``temperature`` other than 0 is refused). Token log-probabilities come from one forward pass
over prompt and reply. A token's text is what it adds to the decoded text (a token holding
part of a character adds nothing; the one completing it adds the character), and its
``text_offset`` is where that text starts in the prompt (echoed tokens) or after it (reply
tokens), assuming the tokenizer decodes a prompt back to itself.

Requests run one at a time on the model; the HTTP server is threaded, so slow or faulty
requests do not block the others. :class:`Limits` keeps any one request from holding the
server up (defaults in brackets):

- a POST needs a ``Content-Length`` (411 without one, 400 if it is not a number of bytes);
  bodies above ``body_bytes`` (1 MiB) get 413, without being read; each wait for a client's
  bytes ends after ``read_seconds`` (10 s): a body that stops arriving gets 408;
- the API key is checked before the body is read;
- a body that is not UTF-8 JSON, or a field of the wrong type or value, gets 400 naming it;
- a prompt (in the chat template, for chat) longer than the model's context
  (``max_position_embeddings``, else the tokenizer's ``model_max_length``) gets 400 naming
  the limit; prompts are tokenised whole first (1 MiB of text: 1-2 s for SmolLM2's);
- a prompt gets at most ``max_tokens`` (512) new tokens, and never more than the context
  leaves after it (``finish_reason`` "length" when the cap cuts it);
- a request has ``seconds`` (60 s) from when its body has been read: generation stops when
  they are spent (checked between decoding steps; ``finish_reason`` "length"), and a prompt
  that cannot get the model before then gets 503 with ``Retry-After``. The model is held
  only while a prompt is run, never while a request waits for anything else.

:class:`Faults` makes it misbehave on purpose: answer 429 or 500, drop the connection
without a response, or respond only after a delay, for the first requests and/or a seeded
fraction of them.
"""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from jinja2 import TemplateError

from faithprobe.errors import UsageError

FAULT_KINDS = ("429", "500", "drop", "slow")
ROUTES = {"/v1/completions": "completions", "/v1/chat/completions": "chat"}
NO_LIMIT = 10**9  # tokenizers without a length limit report a huge placeholder (1e30)
MAX_TOP_LOGPROBS = 20  # the OpenAI API's bound


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
            raise UsageError(f"unknown faults {sorted(unknown)}; known: {', '.join(FAULT_KINDS)}")
        if not 0 <= self.rate <= 1 or (self.rate and not self.kinds):
            raise UsageError("the fault rate must be in [0, 1], with at least one fault kind")


@dataclass(frozen=True)
class Limits:
    """What one request may take from the server (the module docstring says how each
    limit is enforced): at most ``max_tokens`` new tokens per prompt, ``seconds`` from
    when its body has been read, a body of ``body_bytes``, and ``read_seconds`` for each
    wait for bytes from the client."""

    max_tokens: int = 512
    seconds: float = 60.0
    body_bytes: int = 1 << 20
    read_seconds: float = 10.0

    def __post_init__(self) -> None:
        if self.max_tokens < 0 or self.body_bytes < 0:
            raise UsageError("max_tokens and body_bytes must be >= 0")
        if not (self.seconds > 0 and self.read_seconds > 0):
            raise UsageError("the time budget and the read timeout must be > 0 seconds")


class Refused(Exception):
    """A request the server answers with the error ``status`` (its message is the error's)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class BadRequest(Refused):
    """A request the server refuses with 400."""

    def __init__(self, message: str) -> None:
        super().__init__(400, message)


class OpenAIServer:
    """``OpenAIServer(subject).start()`` serves ``subject`` on ``url`` in a background
    thread (``port=0``: a free port); ``stop()`` or a ``with`` block ends it.

    ``hits`` counts the requests each route received, faulty ones included. With
    ``api_key`` set, requests without ``Authorization: Bearer <api_key>`` get 401.
    ``chat_only`` answers 404 on ``/v1/completions``, as a chat-only endpoint does.
    ``limits`` bound what one request may take; ``context_tokens`` is the model's context
    (None: unknown, and only ``limits.max_tokens`` caps a reply)."""

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
        limits: Limits | None = None,
    ) -> None:
        self.subject = subject
        self.model_name = model_name or subject.name
        self.chat_only = chat_only
        self.limits = limits or Limits()
        self.context_tokens = context_length(subject)
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

    def completions(self, body: dict, deadline: float) -> dict:
        """The reply to a completions request whose time budget ends at ``deadline`` (a
        ``time.monotonic()`` value)."""
        prompts = _prompts(body)
        echo, logprobs, stop = _flag(body, "echo"), _integer(body, "logprobs", None), _stop(body)
        requested = _max_tokens(body, "max_tokens")
        named = len(prompts) > 1
        encoded = [
            self._fitting(self.subject.prompt_ids(p), f"prompt[{i}]" if named else "prompt")
            for i, p in enumerate(prompts)
        ]
        choices, usage = [], Counter()
        for index, (prompt, ids) in enumerate(zip(prompts, encoded, strict=True)):
            reply = self._continue(ids, requested, usage, deadline)
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

    def chat(self, body: dict, deadline: float) -> dict:
        """The reply to a chat request whose time budget ends at ``deadline``."""
        messages = _messages(body)
        key = "max_completion_tokens" if "max_completion_tokens" in body else "max_tokens"
        requested, logprobs = _max_tokens(body, key), _flag(body, "logprobs")
        top = _top_logprobs(body, logprobs)
        try:
            ids = self.subject.chat_ids(messages)
        except (UsageError, TemplateError) as err:  # no template, or one refusing the roles
            raise BadRequest(str(err)) from None
        ids = self._fitting(ids, "messages (in the chat template)")
        usage: Counter[str] = Counter()
        reply = self._continue(ids, requested, usage, deadline, top)
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": reply.text},
            "finish_reason": reply.finish_reason,
            "logprobs": None,
        }
        if logprobs:
            content = [
                {"token": t, "logprob": v, "bytes": list(t.encode()),
                 "top_logprobs": [{"token": a, "logprob": w, "bytes": list(a.encode())}
                                  for a, w in alternatives]}
                for (t, v, _), alternatives in zip(reply.pieces(0), reply.top, strict=True)
            ]  # fmt: skip
            choice["logprobs"] = {"content": content}
        return self._response("chat.completion", [choice], usage)

    # -- helpers -------------------------------------------------------------------------

    def _fitting(self, ids: list[int], what: str) -> list[int]:
        """``ids``, refused if they do not fit in the model's context."""
        if self.context_tokens is not None and len(ids) > self.context_tokens:
            raise BadRequest(
                f"{what}: {len(ids)} tokens, more than this model's context of "
                f"{self.context_tokens} tokens"
            )
        return ids

    def _token_cap(self, n_prompt: int, requested: int) -> int:
        """How many new tokens a prompt of ``n_prompt`` tokens gets when ``requested`` are
        asked for: no more than the server's cap, nor than the context leaves."""
        cap = min(requested, self.limits.max_tokens)
        return cap if self.context_tokens is None else min(cap, self.context_tokens - n_prompt)

    @contextmanager
    def _model_until(self, deadline: float) -> Iterator[None]:
        """Hold the model, waiting for it until ``deadline`` at most (then 503)."""
        left = deadline - time.monotonic()
        if left <= 0 or not self._model_lock.acquire(timeout=left):
            raise Refused(
                503,
                f"this request's time budget ({self.limits.seconds:g} s) ran out before the "
                "model was free for it; retry later, or send fewer prompts at a time",
            )
        try:
            yield
        finally:
            self._model_lock.release()

    def _continue(
        self, ids: list[int], requested: int, usage: Counter, deadline: float, top: int = 0
    ) -> _Reply:
        """The greedy reply to ``ids``, with the ``top`` most likely tokens at each of its
        positions (none for ``top=0``)."""
        max_tokens = self._token_cap(len(ids), requested)
        with self._model_until(deadline):
            tokens, ended = (
                self.subject.greedy(ids, max_tokens, deadline) if max_tokens else ([], False)
            )
            logprobs = self.subject.token_logprobs(ids + tokens)
            alternatives = top_tokens(self.subject, ids + tokens, len(ids), top)
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
            top=alternatives,
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


def context_length(subject) -> int | None:
    """How many tokens ``subject``'s model can attend to: its config's
    ``max_position_embeddings``, else its tokenizer's ``model_max_length`` if that is a real
    limit; None if neither says."""
    for value in (
        getattr(subject.model.config, "max_position_embeddings", None),
        getattr(subject.tokenizer, "model_max_length", None),
    ):
        if isinstance(value, int) and 0 < value < NO_LIMIT:
            return value
    return None


def top_tokens(subject, ids: list[int], start: int, k: int) -> list[list[tuple[str, float]]]:
    """For each position from ``start`` on, the ``k`` most likely tokens given the tokens
    before it (text, natural-log probability), most likely first, from one forward pass;
    empty lists for ``k=0``."""
    if not k:
        return [[] for _ in ids[start:]]
    import torch

    tokens = torch.tensor([ids], dtype=torch.long, device=subject.device)
    with torch.inference_mode():
        logits = subject.model(input_ids=tokens).logits[0, start - 1 : len(ids) - 1].float()
        values, indices = torch.log_softmax(logits, dim=-1).topk(k, dim=-1)
    return [
        [(subject.decode([i]), v) for i, v in zip(row_ids, row_values, strict=True)]
        for row_ids, row_values in zip(indices.tolist(), values.tolist(), strict=True)
    ]


# -- reading a request's fields: a malformed one is a 400 naming it ----------------------


def _payload(body: bytes) -> dict:
    """The JSON object a request body holds."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadRequest(f"the body is not UTF-8 (byte {err.start}: {err.reason})") from None
    try:
        payload = json.loads(text or "{}")
    except json.JSONDecodeError as err:
        raise BadRequest(f"the body is not JSON: {err}") from None
    except RecursionError:
        raise BadRequest("the body is JSON nested too deeply") from None
    if not isinstance(payload, dict):
        raise BadRequest("the body must be a JSON object")
    return payload


def _shown(value) -> str:
    """``value`` as JSON, cut short (a message names a wrong value without repeating a
    huge one)."""
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _integer(body: dict, key: str, default: int | None) -> int | None:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadRequest(f"{key} must be an integer >= 0, not {_shown(value)}")
    return value


def _number(body: dict, key: str, default: float) -> float:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadRequest(f"{key} must be a number, not {_shown(value)}")
    return value


def _flag(body: dict, key: str) -> bool:
    value = body.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise BadRequest(f"{key} must be true or false, not {_shown(value)}")
    return value


def _max_tokens(body: dict, key: str) -> int:
    """The new tokens ``body`` asks for under ``key`` (16 if unset), once it is clear that
    it asks for what this server makes: one greedy choice per prompt."""
    if _number(body, "temperature", 0) != 0:
        raise BadRequest("this server decodes greedily only: temperature must be 0")
    if _integer(body, "n", 1) != 1:
        raise BadRequest("this server makes one choice per prompt: n must be 1")
    return _integer(body, key, 16)


def _top_logprobs(body: dict, logprobs: bool) -> int:
    """How many alternatives per reply token ``body`` asks for (``top_logprobs``, which the
    OpenAI API allows only with ``logprobs``)."""
    top = _integer(body, "top_logprobs", 0)
    if top > MAX_TOP_LOGPROBS:
        raise BadRequest(f"top_logprobs must be at most {MAX_TOP_LOGPROBS}, not {top}")
    if top and not logprobs:
        raise BadRequest("top_logprobs needs logprobs: true")
    return top


def _stop(body: dict) -> list[str]:
    stop = body.get("stop")
    stops = [stop] if isinstance(stop, str) else stop
    if stops is None:
        return []
    if not isinstance(stops, list) or not all(isinstance(s, str) for s in stops):
        raise BadRequest(f"stop must be a string or a list of strings, not {_shown(stop)}")
    return stops


def _prompts(body: dict) -> list[str]:
    prompt = body.get("prompt", "")
    prompts = [prompt] if isinstance(prompt, str) else prompt
    if not isinstance(prompts, list) or not all(isinstance(p, str) for p in prompts):
        raise BadRequest(f"prompt must be a string or a list of strings, not {_shown(prompt)}")
    return prompts


def _messages(body: dict) -> list[dict[str, str]]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise BadRequest(f"messages must be a list of {{role, content}}, not {_shown(messages)}")
    for i, m in enumerate(messages):
        if not (
            isinstance(m, dict)
            and isinstance(m.get("role"), str)
            and isinstance(m.get("content"), str)
        ):
            raise BadRequest(
                f"messages[{i}] must be {{role, content}} with text in both, not {_shown(m)}"
            )
    return [{"role": m["role"], "content": m["content"]} for m in messages]


@dataclass
class _Reply:
    text: str
    texts: list[str]  # what each reply token adds to the text
    offsets: list[int]  # where each reply token's text starts in the reply
    logprobs: list[float]
    prompt_logprobs: list[float | None]
    finish_reason: str
    top: list[list[tuple[str, float]]]  # each reply token's most likely alternatives

    def cut_at_stop(self, stop: list[str]) -> None:
        """Cut at the first occurrence of a stop string (OpenAI semantics)."""
        found = [i for i in (self.text.find(s) for s in stop if s) if i >= 0]
        if not found:
            return
        cut = min(found)
        keep = sum(1 for o in self.offsets if o < cut)
        self.text = self.text[:cut]
        self.texts, self.offsets = self.texts[:keep], self.offsets[:keep]
        self.logprobs, self.top = self.logprobs[:keep], self.top[:keep]
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
    limits = server.limits

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the client's connection pool expects
        timeout = limits.read_seconds  # the socket's: no wait for a client's bytes is longer

        def log_message(self, format, *args) -> None:  # noqa: A002 - quiet
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, server.models())
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self) -> None:
            route = ROUTES.get(self.path.rstrip("/"))
            if route is None or (route == "completions" and server.chat_only):
                self._refuse_unread(404, f"no route {self.path}")
                return
            fault = server._arrived(route)
            if not server._authorized(self.headers.get("Authorization")):
                self._refuse_unread(401, "invalid API key", "invalid_api_key")
                return
            try:
                body = self._body()
            except Refused as err:
                self.close_connection = True  # what is left of the body is not read
                self._error(err.status, str(err))
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
            deadline = time.monotonic() + limits.seconds
            try:
                payload = _payload(body)
                model = payload.get("model")
                if not isinstance(model, str):
                    raise BadRequest(f"model must be a string, not {_shown(model)}")
                if model != server.model_name:
                    self._error(404, f"model {model!r} is not served here", "model_not_found")
                    return
                self._send(200, getattr(server, route)(payload, deadline))
            except Refused as err:
                self._error(err.status, str(err))
            except Exception as err:  # the server stays up; the client sees a 500
                self._error(500, f"{type(err).__name__}: {err}")

        # -- the body --------------------------------------------------------------------

        def _declared_length(self) -> int:
            """The body's length as Content-Length declares it, if the server takes it."""
            if self.headers.get("Transfer-Encoding"):
                raise Refused(411, "send the body with a Content-Length, not Transfer-Encoding")
            values = self.headers.get_all("Content-Length") or []
            if not values:
                raise Refused(411, "a POST needs a Content-Length header")
            value = values[0].strip()
            if len(set(values)) > 1 or not (value.isascii() and value.isdigit()):
                raise Refused(
                    400, f"Content-Length must be one number of bytes, not {_shown(values)}"
                )
            cap = limits.body_bytes
            if len(value) > len(str(cap)) or int(value) > cap:  # int() of 5000 digits fails
                raise Refused(413, f"the body is larger than this server's limit of {cap} bytes")
            return int(value)

        def _body(self) -> bytes:
            length = self._declared_length()
            try:
                body = self.rfile.read(length)
            except TimeoutError:
                raise Refused(
                    408, f"the body stopped arriving (nothing for {limits.read_seconds:g} s)"
                ) from None
            except OSError as err:
                raise Refused(400, f"the body could not be read: {err}") from None
            if len(body) < length:
                raise Refused(400, f"the body ended after {len(body)} of {length} bytes")
            return body

        def _refuse_unread(self, status: int, message: str, code: str | None = None) -> None:
            """Answer ``status`` before reading the body, then skip the body so that the
            connection can carry the next request (or close it when the body's length is
            unknown or too large to skip)."""
            try:
                length = self._declared_length()
            except Refused:
                length = 0
                self.close_connection = True
            self._error(status, message, code)
            try:
                skipped = len(self.rfile.read(length)) if length else 0
            except OSError:
                skipped = -1
            if skipped != length:
                self.close_connection = True

        # -- the response ----------------------------------------------------------------

        def _error(self, status: int, message: str, code: str | None = None) -> None:
            kind = "invalid_request_error" if status < 500 else "server_error"
            error = {"message": message, "type": kind, "param": None, "code": code}
            retry = {"Retry-After": "1"} if status == 503 else {}
            self._send(status, {"error": error}, retry)

        def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                if self.close_connection:
                    self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client gave up (a slow fault outlived its timeout)
                self.close_connection = True

    return Handler
