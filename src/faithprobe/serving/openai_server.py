"""A small OpenAI-compatible HTTP server in front of a local causal LM, for tests and demos.

It serves any :class:`~faithprobe.subjects.hf.causal.HFCausal` (a tiny random model in the
tests, the embedded SmolLM2 with ``faithprobe serve``) through the OpenAI API as the API
states it, the part that scores and generates text (every request names its ``model``;
``temperature`` 0 and ``n`` 1 only, below; a field that would change the greedy reply,
``logit_bias``, a penalty, ``best_of``, ``suffix``, tools or a ``response_format``, is
refused unless it is set to what changes nothing; other fields, ``seed`` or ``top_p``
say, do not change a greedy reply and are ignored):

- ``POST /v1/completions``: ``prompt`` (a string, a list of strings, a list of token ids or
  a list of lists of token ids, each id one of the model's; a list is one choice per
  prompt), ``max_tokens`` (0 allowed), ``echo``, ``logprobs`` (0 to 5, the API's limit:
  the chosen tokens' ``tokens``, ``token_logprobs`` and ``text_offset``, and at each
  position ``top_logprobs``, a dict of the ``logprobs`` most likely tokens' texts and
  log-probabilities with the chosen token added where it is not among them, null at the
  first echoed token), ``stop`` (cut at the first occurrence, as the OpenAI API does),
  ``usage``;
- ``POST /v1/chat/completions``: ``messages`` (at least one; roles system, user and
  assistant; content a text or a list of text parts ``{"type": "text", "text": ...}``,
  joined by new lines as vLLM joins them) in the tokenizer's chat template,
  ``continue_final_message`` and ``add_generation_prompt`` as vLLM takes them (the first
  continues a final assistant message: the template of the messages before it with its
  generation prompt, then the message's tokens, as the model answers a request with a
  ``reply_start``; both true is refused; the second false alone leaves the generation
  prompt out), ``max_tokens`` or ``max_completion_tokens``, ``logprobs`` (per-token
  ``content``) with ``top_logprobs`` (0 to 20, the API's limit: the most likely tokens at
  each reply position, with their log-probabilities, as the OpenAI API gives them; the
  alternatives' text is each token decoded alone), ``stop``, ``usage``;
- both take ``stream`` (true: the reply as server-sent events in the API's chunks,
  :mod:`~faithprobe.serving.event_stream`) and ``stream_options`` (``include_usage``);
- ``GET /v1/models``.

Any other method on these routes gets 405 (with ``Allow``), any other path 404, and every
error, the standard library's own ones included (431, 414, 501, a request line it cannot
parse), is JSON in the API's shape (:mod:`~faithprobe.serving.json_http`).

Decoding is always greedy, exactly as the model answers generation requests locally (a
``temperature`` other than 0 is refused). Token log-probabilities, when they are asked
for, come from forward passes over prompt and reply in chunks of ``Limits.chunk_tokens``
positions through the key/value cache (:mod:`~faithprobe.serving.scoring`). A scoring
request as lm-evaluation-harness sends it (``max_tokens`` 1 with ``logprobs``, the reply
token dropped) takes one pass: the pass that scores the prompt gives its greedy next token
too (half the work of generating, then scoring). A token's text
is what it adds to the decoded text (a token holding part of a character adds nothing; the
one completing it adds the character), and its ``text_offset`` is where that text starts in
the prompt (echoed tokens) or after it (reply tokens), assuming the tokenizer decodes a
prompt back to itself.

Requests run one at a time on the model; the HTTP server is threaded, so slow or faulty
requests do not block the others. :class:`Limits` keeps any one client from holding the
server up (defaults in brackets):

- at most ``connections`` (32) connections are served at once, a thread each, a connection
  taking its slot with its first authorized request; one more gets 503 and is closed. Until
  then a connection waits apart (at most four per slot, at least 64; a new one closes the
  one waiting longest), so idle or trickling clients without the key cannot hold the slots
  (:mod:`~faithprobe.serving.connections`);
- each wait for a client's bytes ends after ``read_seconds`` (10 s), so an idle connection
  is closed after that long; a request's line, headers and body must all arrive within
  ``request_read_seconds`` (30 s) of its first byte, so a client sending a byte now and then
  is cut off too (408 once the body has begun; the connection is closed);
- a POST needs a ``Content-Length`` (411 without one, 400 if it is not a number of bytes);
  bodies above ``body_bytes`` (1 MiB) get 413, without being read;
- the API key is checked on every route (``GET /v1/models`` too), before a body is read;
- a body that is not UTF-8 JSON, or a field of the wrong type or value, gets 400 naming it;
- a prompt (in the chat template, for chat) longer than the model's context
  (``max_position_embeddings``, else the tokenizer's ``model_max_length``) gets 400 naming
  the limit; prompts are tokenised whole first (1 MiB of text: 1-2 s for SmolLM2's);
- a prompt gets at most ``max_tokens`` (512) new tokens, and never more than the context
  leaves after it (``finish_reason`` "length" when the cap cuts it);
- a request has ``seconds`` (60 s) from its first byte (:class:`~faithprobe.serving.budget.
  Budget`) for everything: reading its body, waiting for the model, generating, scoring.
  Generation stops when the budget is spent (checked between decoding steps;
  ``finish_reason`` "length"), or halfway through what is left of it when the reply's
  log-probabilities are asked for, leaving the rest to the pass that scores them. A forward
  pass over many positions (a prompt read or scored) is stopped inside once the budget is
  spent (:mod:`~faithprobe.serving.forward_guard`) and the request gets 503 with
  ``Retry-After``, as does one that cannot get the model in time. The model is held only
  while a prompt is run, never while a request waits for anything else;
- what a request holds in memory is bounded by its tokens: its key/value cache (the
  model's context at most) and the logits of ``chunk_tokens`` (256) positions at a time.

:class:`Faults` makes it misbehave on purpose: answer 429 or 500, drop the connection
without a response, respond only after a delay, or (chat completions) reply with a refusal
(``refusal``: "Sorry, I can't help with that.") or with a reply that names no option
(``no-letter``) instead of the model's, for the first requests and/or a seeded fraction of
them. A scripted reply comes with log-probabilities as a real one does (each of its tokens
certain, its only alternative itself); a completions request that draws one is answered
normally. :class:`~faithprobe.serving.quirks.Quirks` makes it act out what third-party
servers are known to get wrong (``quirks``: max_tokens=0 read as unlimited, echoed
log-probabilities shifted by one, and others), through one hook on each request's body and
one on its reply.
"""

from __future__ import annotations

import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from urllib.parse import urlsplit

from jinja2 import TemplateError

from faithprobe.errors import UsageError
from faithprobe.serving import request_fields as fields
from faithprobe.serving.api_key import authorized, key_problem
from faithprobe.serving.budget import Budget
from faithprobe.serving.connections import CappedHTTPServer
from faithprobe.serving.event_stream import events
from faithprobe.serving.forward_guard import Overdue, interrupted_after
from faithprobe.serving.json_http import JSONRequestHandler
from faithprobe.serving.limits import Limits
from faithprobe.serving.quirks import Quirks
from faithprobe.serving.refusals import BadRequest, Refused, shown
from faithprobe.serving.scoring import Alternatives, Following, scored_tokens

# a chat reply given instead of the model's, per fault kind
SCRIPTED_REPLIES = {
    "refusal": "Sorry, I can't help with that.",
    "no-letter": "It depends on what the story means.",
}
TRANSPORT_FAULTS = ("429", "500", "drop", "slow")  # drawn by default
FAULT_KINDS = (*TRANSPORT_FAULTS, *SCRIPTED_REPLIES)
ROUTES = {"/v1/completions": "completions", "/v1/chat/completions": "chat"}
MODELS = "/v1/models"
NO_LIMIT = 10**9  # tokenizers without a length limit report a huge placeholder (1e30)
SHORTER = "send a shorter prompt, or give the server a longer --time-budget"


@dataclass(frozen=True)
class Faults:
    """Which requests to the two completion routes misbehave, and how.

    The first ``len(first)`` requests get the faults in ``first``, in order; after them
    each request gets a fault with probability ``rate``, drawn from ``kinds`` (by default
    the transport faults, not the scripted replies) by a generator seeded with ``seed``.
    ``slow`` waits ``slow_seconds`` before answering normally."""

    first: tuple[str, ...] = ()
    rate: float = 0.0
    kinds: tuple[str, ...] = TRANSPORT_FAULTS
    slow_seconds: float = 5.0
    seed: int = 0

    def __post_init__(self) -> None:
        unknown = (set(self.first) | set(self.kinds)) - set(FAULT_KINDS)
        if unknown:
            raise UsageError(f"unknown faults {sorted(unknown)}; known: {', '.join(FAULT_KINDS)}")
        if not 0 <= self.rate <= 1 or (self.rate and not self.kinds):
            raise UsageError("the fault rate must be in [0, 1], with at least one fault kind")


class OpenAIServer:
    """``OpenAIServer(subject).start()`` serves ``subject`` on ``url`` in a background
    thread (``port=0``: a free port); ``stop()`` or a ``with`` block ends it.

    ``hits`` counts the requests each route received, faulty ones included. With
    ``api_key`` set, requests without ``Authorization: Bearer <api_key>`` get 401 on every
    route (and are not counted); a key that no header could carry (empty, white space) is
    refused (:mod:`~faithprobe.serving.api_key`).
    ``chat_only`` answers 404 on ``/v1/completions``, as a chat-only endpoint does.
    ``limits`` bound what one client may take; ``context_tokens`` is the model's context
    (None: unknown, and only ``limits.max_tokens`` caps a reply). ``quirks``: the known
    misbehaviours of other servers it acts out (none by default)."""

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
        quirks: Quirks | None = None,
    ) -> None:
        if api_key is not None and (problem := key_problem(api_key)):
            raise UsageError(f"the API key {problem}")
        self.subject = subject
        self.model_name = model_name or subject.name
        self.chat_only = chat_only
        self.limits = limits or Limits()
        self.context_tokens = context_length(subject)
        self.quirks = quirks or Quirks()
        self.vocabulary = vocabulary_size(subject)
        self.hits: Counter[str] = Counter()
        self._api_key = api_key
        self._model_lock = threading.Lock()
        self._count_lock = threading.Lock()
        self.inject(faults or Faults())
        handler = partial(_OpenAIHandler, api=self)
        self._httpd = CappedHTTPServer((host, port), handler, self.limits.connections)
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
        return authorized(header, self._api_key)

    # -- the routes ----------------------------------------------------------------------

    def models(self) -> dict:
        entry = {"id": self.model_name, "object": "model", "created": 0, "owned_by": "faithprobe"}
        return {"object": "list", "data": [entry]}

    def completions(self, body: dict, budget: Budget) -> dict:
        """The reply to a completions request within its time ``budget``."""
        prompts = fields.prompts(body, self.vocabulary)
        echo, stops = fields.flag(body, "echo"), fields.stop(body)
        logprobs = fields.integer(body, "logprobs", None, fields.MAX_LOGPROBS)
        requested = fields.max_tokens(body, "max_tokens")
        names = [f"prompt[{i}]" if len(prompts) > 1 else "prompt" for i in range(len(prompts))]
        encoded = [
            self._fitting(p if isinstance(p, list) else self.subject.prompt_ids(p), what)
            for p, what in zip(prompts, names, strict=True)
        ]
        choices, usage = [], Counter()
        for index, (prompt, ids, what) in enumerate(zip(prompts, encoded, names, strict=True)):
            text = prompt if isinstance(prompt, str) else self.subject.decode(ids)
            scored = logprobs is not None
            # spelt out before the model is taken: quadratic in the prompt's length
            spelt = (
                _token_texts(self.subject.decode, ids, budget, what) if echo and scored else None
            )
            reply = self._continue(
                ids, requested, usage, budget, what, scored, echo=echo, top=logprobs or 0
            )
            reply.cut_at_stop(stops)
            choice = {
                "index": index,
                "text": (text if echo else "") + reply.text,
                "finish_reason": reply.finish_reason,
                "logprobs": None,
            }
            if scored:
                pieces = reply.echo(*spelt, text) if spelt else reply.pieces(len(text))
                tops = (reply.prompt_top if spelt else []) + reply.top
                tokens, values, offsets = zip(*pieces, strict=True) if pieces else ((), (), ())
                choice["logprobs"] = {
                    "tokens": list(tokens),
                    "token_logprobs": list(values),
                    "text_offset": list(offsets),
                    "top_logprobs": [
                        _most_likely(alternatives, token, value)
                        for alternatives, (token, value, _) in zip(tops, pieces, strict=True)
                    ],
                }
            choices.append(choice)
        return self._response("text_completion", choices, usage)

    def chat(self, body: dict, budget: Budget) -> dict:
        """The reply to a chat request within its time ``budget``."""
        requested, logprobs, top = _chat_fields(body)
        what = "messages (in the chat template)"
        ids = self._fitting(self._chat_ids(body), what)
        usage: Counter[str] = Counter()
        reply = self._continue(ids, requested, usage, budget, what, logprobs, top=top)
        reply.cut_at_stop(fields.stop(body))
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

    def scripted_chat(self, body: dict, reply: str) -> dict:
        """A chat request answered with ``reply`` instead of the model's (a fault): its
        fields are checked as :meth:`chat` checks them, and its log-probabilities, if asked
        for, make each of the reply's tokens certain, its only alternative itself."""
        _, logprobs, top = _chat_fields(body)
        fields.stop(body)
        prompt = self._fitting(self._chat_ids(body), "messages")
        ids = self.subject.tokenizer.encode(reply, add_special_tokens=False)
        texts, _ = _token_texts(self.subject.decode, ids)
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": "".join(texts)},
            "finish_reason": "stop",
            "logprobs": None,
        }
        if logprobs:
            certain = [{"token": t, "logprob": 0.0, "bytes": list(t.encode())} for t in texts]
            choice["logprobs"] = {
                "content": [{**c, "top_logprobs": [dict(c)] if top else []} for c in certain]
            }
        usage = Counter(prompt_tokens=len(prompt), completion_tokens=len(ids))
        return self._response("chat.completion", [choice], usage)

    def _chat_ids(self, body: dict) -> list[int]:
        """The token ids of a chat request's ``messages`` in the chat template, a final
        assistant message continued if ``continue_final_message`` says so (module
        docstring)."""
        messages = fields.messages(body)
        generation_prompt = fields.flag(body, "add_generation_prompt", default=True)
        reply_start = ""
        if fields.flag(body, "continue_final_message"):
            if generation_prompt:
                raise BadRequest(
                    "continue_final_message and add_generation_prompt cannot both be true "
                    "(send add_generation_prompt=false)"
                )
            last = messages[-1]["role"]  # there is one (request_fields.messages)
            if last != "assistant":
                raise BadRequest(
                    "continue_final_message continues a final assistant message, not one of "
                    f"role {shown(last)}"
                )
            generation_prompt, reply_start = True, messages.pop()["content"]
        try:
            return self.subject.chat_ids(messages, reply_start, generation_prompt)
        except (UsageError, TemplateError) as err:  # no template, or one refusing the roles
            raise BadRequest(str(err)) from None

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
    def _model_within(self, budget: Budget) -> Iterator[None]:
        """Hold the model, waiting for it while ``budget`` lasts at most (then 503)."""
        left = budget.left()
        if left <= 0 or not self._model_lock.acquire(timeout=left):
            raise budget.spent(
                "before the model was free for it", "retry later, or send fewer prompts at a time"
            )
        try:
            yield
        finally:
            self._model_lock.release()

    def _continue(
        self,
        ids: list[int],
        requested: int,
        usage: Counter,
        budget: Budget,
        what: str,
        scored: bool,
        *,
        echo: bool = False,
        top: int = 0,
    ) -> _Reply:
        """The greedy reply to ``ids`` (the prompt ``what``) within ``budget``; if
        ``scored``, with the log-probabilities of its tokens (and of the prompt's, for
        ``echo``) and the ``top`` most likely tokens at each of its positions."""
        max_tokens = self._token_cap(len(ids), requested)
        first = 1 if echo else len(ids)  # the first position whose log-probability is asked
        values: list[float] = []
        alternatives: list[Alternatives] = []
        with self._model_within(budget):
            if scored and max_tokens == 1:  # a scoring request (lm-eval's): one pass
                values, alternatives, after = self._scored(ids, first, top, budget, what, True)
                ended = after.token in self.subject._eos_ids  # greedy's rule: EOS ends the reply
                tokens = [] if ended else [after.token]
                if not ended:
                    values.append(after.logprob)
                    alternatives.append(after.alternatives)
            else:
                # generating leaves half of what is left to the scoring pass, if there is one
                stop_at = budget.halfway() if scored and max_tokens else budget.deadline
                try:
                    with interrupted_after(self.subject.model, stop_at):
                        tokens, ended = (
                            self.subject.greedy(ids, max_tokens, stop_at)
                            if max_tokens
                            else ([], False)
                        )
                except Overdue:
                    raise budget.spent(
                        f"before {what} ({len(ids)} tokens) was read", SHORTER
                    ) from None
                if scored and first < len(ids) + len(tokens):
                    values, alternatives, _ = self._scored(ids + tokens, first, top, budget, what)
        usage["prompt_tokens"] += len(ids)
        usage["completion_tokens"] += len(tokens) + ended
        texts, offsets = _token_texts(self.subject.decode, tokens)
        n_prompt = len(values) - len(tokens)  # prompt positions scored (echo only)
        echoed = echo and scored
        return _Reply(
            text="".join(texts),
            texts=texts,
            offsets=offsets,
            logprobs=values[n_prompt:] if scored else [None] * len(tokens),
            prompt_logprobs=[None, *values[:n_prompt]] if echoed else [],
            finish_reason="stop" if ended else "length",
            top=alternatives[n_prompt:] if scored else [[] for _ in tokens],
            prompt_top=[None, *alternatives[:n_prompt]] if echoed else [],
        )

    def _scored(
        self, ids: list[int], first: int, top: int, budget: Budget, what: str, following=False
    ) -> tuple[list[float], list[Alternatives], Following | None]:
        """:func:`~faithprobe.serving.scoring.scored_tokens` of ``ids`` within ``budget``
        (the prompt ``what``; 503 once it is spent)."""
        try:
            with interrupted_after(self.subject.model, budget.deadline):
                return scored_tokens(
                    self.subject, ids, first, top, self.limits.chunk_tokens, following=following
                )
        except Overdue:
            raise budget.spent(f"while {what} ({len(ids)} tokens) was scored", SHORTER) from None

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


def _chat_fields(body: dict) -> tuple[int, bool, int]:
    """A chat request's new tokens (``max_completion_tokens``, else ``max_tokens``), whether
    it asks for log-probabilities, and how many alternatives per token."""
    key = "max_completion_tokens" if "max_completion_tokens" in body else "max_tokens"
    requested, logprobs = fields.max_tokens(body, key), fields.flag(body, "logprobs")
    return requested, logprobs, fields.chat_top_logprobs(body, logprobs)


def _most_likely(
    alternatives: list[tuple[str, float]] | None, token: str, logprob: float | None
) -> dict[str, float] | None:
    """A completions ``top_logprobs`` entry: the most likely tokens at a position (text:
    log-probability, most likely first; where two decode to the same text, the likelier),
    and the chosen ``token`` too where it is not among them, as the OpenAI API gives it
    (so up to ``logprobs`` + 1 entries); None at the first echoed token, which nothing
    predicts."""
    if alternatives is None:
        return None
    entry: dict[str, float] = {}
    for text, value in alternatives:
        entry.setdefault(text, value)
    entry.setdefault(token, logprob)
    return entry


def vocabulary_size(subject) -> int:
    """How many token ids a prompt given as ids may use: those of ``subject``'s tokenizer,
    and no more than its model has embeddings for."""
    size = len(subject.tokenizer)
    embeddings = getattr(subject.model, "get_input_embeddings", None)
    return min(size, embeddings().num_embeddings) if embeddings else size


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


@dataclass
class _Reply:
    text: str
    texts: list[str]  # what each reply token adds to the text
    offsets: list[int]  # where each reply token's text starts in the reply
    logprobs: list[float]
    prompt_logprobs: list[float | None]
    finish_reason: str
    top: list[list[tuple[str, float]]]  # each reply token's most likely alternatives
    prompt_top: list[list[tuple[str, float]] | None]  # each echoed token's (None: the first)

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

    def echo(
        self, texts: list[str], offsets: list[int], prompt: str
    ) -> list[tuple[str, float | None, int]]:
        """The prompt's tokens (``texts`` at ``offsets``: :func:`_token_texts`), then the
        reply's."""
        echoed = list(zip(texts, self.prompt_logprobs, offsets, strict=True))
        return echoed + self.pieces(len(prompt))


def _token_texts(
    decode, ids: list[int], budget: Budget | None = None, what: str = ""
) -> tuple[list[str], list[int]]:
    """What each token adds to the decoded text, and where that starts. Decoding each
    prefix keeps characters split over several tokens whole (a token ending inside a
    character adds nothing; the one completing it adds the character). That is quadratic
    in the tokens (8,000 of SmolLM2's: about 9 s), so with a ``budget`` it is checked
    after each token (the prompt ``what`` is spelt out)."""
    texts, offsets, before = [], [], ""
    for k in range(1, len(ids) + 1):
        if budget is not None:
            budget.check(f"while {what}'s {len(ids)} tokens were spelt out", SHORTER)
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


class _OpenAIHandler(JSONRequestHandler):
    """Serves ``api``'s routes on one connection: routes a request to its endpoint (once its
    key is checked and the connection admitted), acts out the fault it draws, and answers
    it with the endpoint's reply."""

    def __init__(self, request, client_address, httpd, *, api: OpenAIServer) -> None:
        self.api = api
        super().__init__(request, client_address, httpd, limits=api.limits)

    # -- routing -------------------------------------------------------------------------

    def do_GET(self) -> None:
        if not self._let_in():
            return
        if self._path() == MODELS:
            self._send(200, self.api.models())
        else:
            self._not_served()

    def do_POST(self) -> None:
        budget = self._budget()
        if not self._let_in():
            return
        route = ROUTES.get(self._path())
        if not self._serves(route):
            self._not_served()
            return
        fault = self.api._arrived(route)
        try:
            body = self._body()
        except Refused as err:
            self.close_connection = True  # what is left of the body is not read
            self._error(err.status, str(err))
            return
        if not self._misbehaved(fault):
            self._answer(route, body, fault, budget)

    def _other_method(self) -> None:
        """A method no route takes: 405 on a route, 404 elsewhere (its body skipped)."""
        if self._let_in():
            self._not_served()

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _other_method
    do_HEAD = do_GET  # its headers only (JSONRequestHandler sends no body to HEAD)

    def _let_in(self) -> bool:
        """Whether the request carries the key and its connection holds a slot; where not,
        it has been refused, its body unread."""
        if not self.api._authorized(self.headers.get("Authorization")):
            self._refuse_unread(401, "invalid API key", "invalid_api_key")
            return False
        return self._admitted()

    def _serves(self, route: str | None) -> bool:
        """Whether ``route`` (a value of :data:`ROUTES`, None for no route) is served here."""
        return route is not None and not (route == "completions" and self.api.chat_only)

    def _not_served(self) -> None:
        """Refuse a request no route answers, its body unread: 405 (with ``Allow``) where
        the path is a route that takes another method, else 404."""
        path = self._path()
        allowed = "GET" if path == MODELS else "POST" if self._serves(ROUTES.get(path)) else None
        if allowed is None:
            self._refuse_unread(404, f"no route {self.path}")
        else:
            message = f"{path} takes {allowed} requests, not {self.command}"
            self._refuse_unread(405, message, headers={"Allow": allowed})

    def _admitted(self) -> bool:
        """Whether this connection holds one of the server's slots, taken at its first
        authorized request; where none is free the request gets 503 and the connection is
        closed."""
        if self.server.admit(self.connection):
            return True
        self.close_connection = True
        self._error(
            503,
            f"this server is serving its limit of {self.limits.connections} connections; "
            "retry later",
        )
        return False

    def _path(self) -> str:
        """The request's path without its query (a client may put its key there)."""
        return urlsplit(self.path).path.rstrip("/")

    # -- answering -----------------------------------------------------------------------

    def _misbehaved(self, fault: str | None) -> bool:
        """Act out a transport ``fault``: True where that has dealt with the request (the
        connection dropped, or an injected error sent); a slow fault waits, then lets the
        request be answered."""
        if fault == "drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return True
        if fault in ("429", "500"):
            self._error(int(fault), f"injected fault {fault}")
            return True
        if fault == "slow":
            time.sleep(self.api.faults.slow_seconds)
        return False

    def _answer(self, route: str, body: bytes, fault: str | None, budget: Budget) -> None:
        """Answer a request to ``route`` with its endpoint's reply within ``budget`` (or the
        scripted chat reply its ``fault`` names); a request the endpoint refuses gets the
        refusal's status, one that fails 500, and the server stays up."""
        try:
            payload = fields.json_object(body)
            model = payload.get("model")
            if not isinstance(model, str):
                raise BadRequest(f"model must be a string, not {shown(model)}")
            if model != self.api.model_name:
                self._error(404, f"model {model!r} is not served here", "model_not_found")
                return
            fields.unserved(payload)
            streamed, usage_chunk = fields.stream(payload)
            if fault in SCRIPTED_REPLIES and route == "chat":
                response = self.api.scripted_chat(payload, SCRIPTED_REPLIES[fault])
            else:
                payload = self.api.quirks.request(route, payload, self.api)
                reply = getattr(self.api, route)(payload, budget)
                response = self.api.quirks.response(route, payload, reply, self.api)
            if streamed:
                self._send_events(200, events(response, usage_chunk))
            else:
                self._send(200, response)
        except Refused as err:
            self._error(err.status, str(err))
        except Exception as err:  # the server stays up; the client sees a 500
            self._error(500, f"{type(err).__name__}: {err}")
