"""Models behind OpenAI-compatible HTTP endpoints: ``--model openai:MODEL``.

Talks to the endpoint with the official ``openai`` client (sync client, a thread pool of
``concurrency`` workers). What the endpoint serves is said by ``api``:

- ``completions`` (default): the legacy ``/v1/completions`` with ``echo`` and ``logprobs``
  (as vLLM, llama.cpp and faithprobe's own test server serve it) and ``/v1/chat/completions``.
  Answers candidate-score and generation requests.
- ``chat``: ``/v1/chat/completions`` only. Answers chat generation and letter-choice
  requests only; anything else fails before the first HTTP request, naming what is missing.

**Letter choices** (:class:`~faithprobe.requests.LetterChoiceRequest`, both APIs) are a
greedy chat completion with ``logprobs=true, top_logprobs=k``: the reply is cut as a
generation is, and each letter's log-probability is read at the reply's first token that is
not white space or an opening bracket, from that position's ``top_logprobs``: every
alternative whose text, stripped of white space and of ``()[]*.:``, is the letter counts
towards it (" B" and "B" alike, their probabilities added). A letter outside the top k gets
None; an endpoint that returns no alternatives gives ``logprobs=None``.

**Candidate scores.** Each candidate is one completions request on the filled text (the
context, the separating space, the candidate; a causal model cannot see the suffix) with
``echo=True, logprobs=1, max_tokens=1``, as lm-evaluation-harness asks: ``max_tokens=0`` is
refused by vLLM and read as "until the context is full" by llama-cpp-python, so one token
is generated and dropped (its entry, if the endpoint gives one, lies after the prompt). The
candidate's score is the sum of the echoed
token log-probabilities of the tokens that carry its characters: from the token holding the
first character after the context (the separating space) to the end of the prompt, by the
tokens' ``text_offset``. This is the convention of :mod:`faithprobe.subjects.hf.causal`
(the candidate's tokens after the context; ``n_tokens`` is their count) whenever the
endpoint's tokenizer does not merge a token across the context/candidate boundary; if it
does, the merged token is counted with the candidate. Servers that count a special token's
text (``<s>``) in ``text_offset`` are recognised by the echoed tokens spelling the prompt
after a prefix, and the offsets are shifted back.

**The self-check.** Before the first candidate score, and before the first letter read
with probabilities, the endpoint is checked (:mod:`~faithprobe.subjects.endpoint.
self_check`): its echoed log-probabilities must equal those of its own greedy tokens, its
``top_logprobs`` must rank its own greedy reply first. An endpoint that fails is refused in
one line (:class:`~faithprobe.subjects.endpoint.self_check.SelfCheckFailed`), never scored;
one that passes is remembered in the answer cache under the fingerprint
(:meth:`OpenAISubject.use_cache`) and recorded in run.json (:meth:`OpenAISubject.describe`).
``letter_probabilities=false`` asks for no ``top_logprobs`` (letters parsed from replies),
which needs no check.

**Generation** is greedy (``temperature=0``): completions when ``chat`` is off, chat
completions (the prompt as one user message) when it is on. A reply begun for the model
(``reply_start``) is sent as ``prefill`` says: ``continue`` (default) as the final assistant
message with ``continue_final_message=true, add_generation_prompt=false`` in the body (vLLM's
and SGLang's names), so the reply is the model's continuation of it; ``ask``, for an API that
cannot continue a reply (OpenAI's own), as an assistant message followed by a user message
asking the model to go on from where it stops and end with "So the answer is (X)."
(:data:`GO_ON`): the fallback raybears/cot-transparency uses for chat models, whose user
message asks for the answer at once; ours also lets a reply that is only begun (a
chain-of-thought cue) or cut mid-reasoning (a corrupted step) be finished. The new message
is read as the continuation. No ``stop`` is sent: a server
cuts at the first stop string anywhere, which would end a reply that opens with a newline
before it says anything. The full reply (at most ``max_new_tokens``) is cut here by the
rule every backend uses (:func:`faithprobe.requests.stop_index`) and stripped of trailing
white space; ``n_tokens`` counts the reply's tokens (from the returned log-probability
tokens) that start before the cut, or the endpoint's ``completion_tokens`` when it returns
no tokens.

**Failures.** 408, 409, 429, 5xx, timeouts and dropped connections are retried up to
``max_retries`` times after an exponential backoff (``backoff * 2**attempt`` seconds, capped
at ``max_backoff``, times a random factor in [0.5, 1]; at least a 429's ``Retry-After``);
other errors fail at once with the endpoint's message. The client's own retries are off, so
every HTTP request is counted in :meth:`OpenAISubject.usage` (with the prompt and
completion tokens the endpoint reports), which the runner writes to run.json.

**The API key** is read from the environment variable ``api_key_env`` (``OPENAI_API_KEY``)
and handed to the client only: it is not part of the fingerprint, the cache keys, the
subject's description or usage, and it is masked in error messages.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import threading
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from urllib.parse import parse_qsl, unquote_plus, urlsplit, urlunsplit

import numpy as np

from faithprobe.errors import ModelError, UsageError, excerpt
from faithprobe.requests import (
    Answer,
    CandidateScoreRequest,
    CandidateScores,
    Generation,
    GenerationRequest,
    LetterChoice,
    LetterChoiceRequest,
    Request,
    stop_index,
)
from faithprobe.subjects.base import Progress, Subject
from faithprobe.subjects.endpoint import self_check
from faithprobe.subjects.endpoint.self_check import CHAT, COMPLETIONS, SelfCheck
from faithprobe.subjects.endpoint.settings import NO_KEY, EndpointConfig
from faithprobe.urls import public_url, redact_command

# the user message asking for the rest of a begun reply under prefill=ask
GO_ON = (
    "Go on from exactly where your reply stops, without repeating any of it, and end with "
    'the answer in the form "So the answer is (X)."'
)
SECRET_CHARS = 4  # the shortest URL value an error message hides (see url_secrets)
RETRY_STATUS = frozenset({408, 409, 429})  # and every 5xx
USAGE_FIELDS = (
    "requests",  # HTTP requests answered
    "http_requests",  # HTTP requests sent, retries included
    "retries",
    "rate_limited",  # 429 answers
    "server_errors",  # 408, 409 and 5xx answers
    "timeouts",
    "connection_errors",  # dropped or refused connections
    "prompt_tokens",
    "completion_tokens",
)


def split_query(url: str) -> tuple[str, dict[str, str | list[str]]]:
    """(the base URL the client joins paths to, its query's parameters): the client sends
    the parameters with every request, so ``/v1?key=K`` asks ``/v1/completions?key=K``
    (glued into the base, the query would end up in the path)."""
    parts = urlsplit(url)
    params: dict[str, list[str]] = {}
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        params.setdefault(name, []).append(value)
    base = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    return base, {name: v[0] if len(v) == 1 else v for name, v in params.items()}


def url_secrets(url: str) -> tuple[str, ...]:
    """What of ``url`` may be a credential (its user name and password, its query values),
    as written and decoded, longest first; values of fewer than :data:`SECRET_CHARS`
    characters are left (they are no credential, and replacing them everywhere would garble
    a message)."""
    parts = urlsplit(url)
    userinfo = parts.netloc.rpartition("@")[0]
    written = [*userinfo.split(":", 1), *(p.partition("=")[2] for p in parts.query.split("&"))]
    found = {form for v in written for form in (v, unquote_plus(v)) if len(form) >= SECRET_CHARS}
    return tuple(sorted(found, key=len, reverse=True))


class _Aborted(Exception):
    """Another request of the same call failed (or the call was interrupted)."""


class OpenAISubject(Subject):
    # bump when scoring changes what it returns; v2: every answer computed after a passed
    # self-check (answers cached without one are not served)
    scoring_version = "openai-v2"
    request_versions = {"generation": "openai-generation-v1"}

    def __init__(
        self,
        model: str,
        endpoint: EndpointConfig | None = None,
        *,
        name: str | None = None,
    ) -> None:
        import openai

        self.endpoint = endpoint = endpoint or EndpointConfig()
        self.model = model
        self.name = name or f"openai:{model}"
        self.api = endpoint.api
        self.kind = f"openai-{endpoint.api}"
        chat = {GenerationRequest.kind, LetterChoiceRequest.kind}
        self.accepts = frozenset(
            chat if endpoint.api == "chat" else chat | {CandidateScoreRequest.kind}
        )
        # a chat-only endpoint applies the model's template itself; one serving completions
        # too is asked plainly unless -o chat=true says otherwise
        self.has_chat_template = endpoint.api == "chat"
        url = endpoint.url
        self.base_url = public_url(url)
        key = endpoint.api_key(self.name)
        # what an error message must not show: the key and the URL's credentials
        self._secrets = url_secrets(url) + ((key,) if key != NO_KEY else ())
        base, query = split_query(url)
        self._client = openai.OpenAI(
            api_key=key,
            base_url=base,
            default_query=query,
            timeout=endpoint.timeout,
            max_retries=0,  # ours, below: counted, and proven by the tests
        )
        self._openai = openai
        self._usage: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._rng = random.Random()  # backoff jitter only; answers never depend on it
        self._checks: dict[str, SelfCheck] = {}  # the self-checks done or found, by check
        self._check_lock = threading.Lock()
        self._cache = None  # where passed self-checks are kept (use_cache)

    # -- the Subject interface -----------------------------------------------------------

    @property
    def fingerprint(self) -> str:
        parts = ("openai", self.base_url, self.model, self.api, self.scoring_version)
        if self.endpoint.prefill != "continue":  # the default adds nothing: keys stay as they were
            parts += (f"prefill={self.endpoint.prefill}",)
        if not self.endpoint.letter_probabilities:
            parts += ("letter_probabilities=false",)
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:24]

    def describe(self) -> dict[str, object]:
        """The endpoint, and its self-checks: done by this subject (passed or failed), or
        passed in a run before it that kept them in the same cache."""
        checks = {c: r.record() for c in (COMPLETIONS, CHAT) if (r := self._check_found(c))}
        described = {"endpoint": self.base_url, "api": self.api, "model": self.model}
        return {**described, "self_check": checks} if checks else described

    def use_cache(self, cache) -> None:
        """Keep passed self-checks in ``cache`` (the run's answer cache), under this
        subject's fingerprint."""
        self._cache = cache

    def usage(self) -> dict[str, int]:
        with self._lock:
            return {k: self._usage[k] for k in USAGE_FIELDS}

    def check_accepts(self, requests: Sequence[Request]) -> None:
        super().check_accepts(requests)
        if self.api == "chat":
            for r in requests:
                if isinstance(r, GenerationRequest) and not r.chat:
                    raise UsageError(
                        f"model {self.name} ({self.kind}) answers chat generation requests "
                        "only; plain-text continuation needs an endpoint serving "
                        "/v1/completions (--api completions)"
                    )

    def answer(self, requests: Sequence[Request], progress: Progress | None = None) -> list[Answer]:
        """Answer each request, ``concurrency`` at a time; answers come back in request
        order. The first request that fails for good stops the others and is raised."""
        self.check_accepts(requests)
        if not requests:
            return []
        for check in self._checks_needed(requests):
            self._self_check(check)
        abort = threading.Event()
        pool = ThreadPoolExecutor(self.endpoint.concurrency, thread_name_prefix="openai")
        futures = [pool.submit(self._answer_one, r, abort) for r in requests]
        try:
            for future in as_completed(futures):
                future.result()
                if progress:
                    progress(1)
        except BaseException:
            abort.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        return [f.result() for f in futures]

    # -- the self-check ------------------------------------------------------------------

    def _checks_needed(self, requests: Sequence[Request]) -> list[str]:
        """The self-checks ``requests`` need: completions before a candidate score, chat
        before a letter read with probabilities."""
        needed = []
        if any(isinstance(r, CandidateScoreRequest) for r in requests):
            needed.append(COMPLETIONS)
        if self.endpoint.letter_probabilities and any(
            isinstance(r, LetterChoiceRequest) and r.top_logprobs for r in requests
        ):
            needed.append(CHAT)
        return needed

    def _check_found(self, check: str) -> SelfCheck | None:
        """``check`` as this subject did it, or as the cache keeps it."""
        kept = check not in self._checks and self._cache is not None
        if kept and (found := self_check.stored(self._cache, self.fingerprint, check)):
            self._checks[check] = found
        return self._checks.get(check)

    def _self_check(self, check: str) -> None:
        """Do ``check`` unless it was done (or is kept in the cache); a failed one is
        raised, every time it is needed."""
        with self._check_lock:
            result = self._check_found(check)
            if result is None:
                never = threading.Event()  # the check's own requests are not aborted
                result = self_check.run_check(
                    check,
                    self.model,
                    lambda **p: self._call(self._client.completions.create, never, **p),
                    lambda **p: self._call(self._client.chat.completions.create, never, **p),
                )
                self._checks[check] = result
                if result.passed and self._cache is not None:
                    self_check.store(self._cache, self.fingerprint, result)
        if not result.passed:
            raise self_check.refusal(self.name, result)

    # -- requests ------------------------------------------------------------------------

    def _answer_one(self, request: Request, abort: threading.Event) -> Answer:
        if isinstance(request, CandidateScoreRequest):
            return self._score(request, abort)
        if isinstance(request, GenerationRequest):
            return self._generate(request, abort)
        if isinstance(request, LetterChoiceRequest):
            return self._letters(request, abort)
        raise TypeError(f"{self.name}: cannot answer {type(request).__name__}")

    def _score(self, request: CandidateScoreRequest, abort: threading.Event) -> CandidateScores:
        """Each candidate's echoed log-probability (its first token's alone under the
        first-token rule); a start token is refused: the endpoint tokenizes the prompt
        itself, so no token can be put before it."""
        if request.start:
            raise UsageError(
                f"{self.name}: an endpoint tokenizes the prompt itself, so no start-of-text "
                f"token can be put before the context (start={excerpt(request.start)})"
            )
        logprobs, counts = [], []
        for candidate in request.candidates:
            text, start = request.filled(candidate)
            prompt = text[: start + len(candidate)]
            response = self._call(
                self._client.completions.create,
                abort,
                model=self.model,
                prompt=prompt,
                echo=True,
                logprobs=1,
                max_tokens=1,  # the token generated is dropped (module docstring)
                temperature=0,
            )
            lp, n = self._span_logprob(
                response.choices[0].logprobs,
                len(request.context),
                prompt,
                candidate,
                request.first_token,
            )
            logprobs.append(lp)
            counts.append(n)
        return CandidateScores(tuple(logprobs), tuple(counts))

    def _span_logprob(
        self, logprobs, start: int, prompt: str, candidate: str, first_only: bool = False
    ):
        """Summed log-probability and count of the echoed tokens carrying prompt[start:]
        (the first of them alone with ``first_only``)."""
        if logprobs is None or not logprobs.text_offset or not logprobs.token_logprobs:
            raise ModelError(
                f"{self.name}: the endpoint returned no echoed token log-probabilities "
                "(does it serve echo=True with logprobs on /v1/completions? if it serves "
                "chat completions only, use --api chat)"
            )
        offsets = list(logprobs.text_offset)
        if offsets[0] < 0 or any(b < a for a, b in itertools.pairwise(offsets)):
            raise ModelError(
                f"{self.name}: the endpoint's echoed tokens carry no usable text_offset "
                f"({excerpt(str(offsets[:4]))}; SGLang gives -1), so the candidate's tokens "
                "cannot be found among them; ask it by letter instead (api=chat)"
            )
        shift = _offset_shift(list(logprobs.tokens or []), prompt)
        first = max(bisect_right(offsets, start + shift) - 1, 0)
        picked = list(logprobs.token_logprobs)[first : bisect_left(offsets, len(prompt) + shift)]
        if not picked or any(v is None for v in picked):
            raise ModelError(
                f"{self.name}: no log-probability for the tokens of candidate {candidate!r} "
                "(an endpoint scores no token at the very start of a text: give the "
                "candidates a context)"
            )
        if first_only:
            picked = picked[:1]
        return float(sum(picked)), len(picked)

    def _generate(self, request: GenerationRequest, abort: threading.Event) -> Generation:
        if request.max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be >= 0, got {request.max_new_tokens}")
        if request.max_new_tokens == 0:
            return Generation("", 0)
        if request.chat:
            response, tokens = self._chat(
                request.prompt, request.max_new_tokens, abort, reply_start=request.reply_start
            )
            text = response.choices[0].message.content or ""
            offsets = _cumulative([t.token for t in tokens]) if tokens else None
        else:
            response = self._call(
                self._client.completions.create,
                abort,
                model=self.model,
                prompt=request.prompt,
                max_tokens=request.max_new_tokens,
                temperature=0,
                logprobs=1,
            )
            choice = response.choices[0]
            text = choice.text or ""
            found = choice.logprobs.text_offset if choice.logprobs else None
            offsets = [o - found[0] for o in found] if found else None
        fallback = response.usage.completion_tokens if response.usage else 0
        return _cut(text, request.stop, offsets, fallback)

    def _chat(
        self,
        prompt: str,
        max_tokens: int,
        abort: threading.Event,
        top: int = 0,
        reply_start: str = "",
    ):
        """A greedy chat completion of ``prompt`` as one user message (and ``reply_start``,
        a reply begun for the model, as ``prefill`` says: module docstring), and its reply's
        token log-probabilities (with ``top`` alternatives each), None if it gave none."""
        extra: dict = {"top_logprobs": top} if top else {}
        messages = [{"role": "user", "content": prompt}]
        refused = ""
        if reply_start:
            messages.append({"role": "assistant", "content": reply_start})
            if self.endpoint.prefill == "continue":
                extra["extra_body"] = {
                    "continue_final_message": True,
                    "add_generation_prompt": False,
                }
                refused = "; an endpoint that cannot continue a begun reply needs prefill=ask"
            else:
                messages.append({"role": "user", "content": GO_ON})
        response = self._call(
            self._client.chat.completions.create,
            abort,
            refused=refused,
            model=self.model,
            messages=messages,
            max_tokens=max_tokens,
            temperature=0,
            logprobs=True,
            **extra,
        )
        logprobs = response.choices[0].logprobs
        return response, (logprobs.content if logprobs else None)

    def _letters(self, request: LetterChoiceRequest, abort: threading.Event) -> LetterChoice:
        top = request.top_logprobs if self.endpoint.letter_probabilities else 0
        response, tokens = self._chat(request.prompt, request.max_new_tokens, abort, top)
        offsets = _cumulative([t.token for t in tokens]) if tokens else None
        fallback = response.usage.completion_tokens if response.usage else 0
        reply = _cut(response.choices[0].message.content or "", request.stop, offsets, fallback)
        return LetterChoice(reply.text, reply.n_tokens, letter_logprobs(tokens, request.letters))

    # -- HTTP, retries, usage ------------------------------------------------------------

    def _call(self, create, abort: threading.Event, refused: str = "", **params):
        """``create(**params)``, retried on transient failures; counts every attempt.
        ``refused``: a hint added to the error when the endpoint refuses the request (400,
        422)."""
        openai = self._openai
        attempt = 0
        while True:
            if abort.is_set():
                raise _Aborted
            self._count(http_requests=1)
            retry_after = None
            try:
                response = create(**params)
            except openai.APIStatusError as err:
                status = err.status_code
                if status not in RETRY_STATUS and status < 500:
                    raise self._failure(err, hint=refused if status in (400, 422) else "") from None
                self._count(**{"rate_limited" if status == 429 else "server_errors": 1})
                retry_after = _retry_after(err.response.headers)
                last = err
            except openai.APIConnectionError as err:  # timeouts are connection errors too
                timeout = isinstance(err, openai.APITimeoutError)
                self._count(**{"timeouts" if timeout else "connection_errors": 1})
                last = err
            else:
                usage = response.usage
                self._count(
                    requests=1,
                    prompt_tokens=(usage.prompt_tokens or 0) if usage else 0,
                    completion_tokens=(usage.completion_tokens or 0) if usage else 0,
                )
                return response
            if attempt >= self.endpoint.max_retries:
                raise self._failure(last, attempts=attempt + 1) from None
            self._count(retries=1)
            if abort.wait(self.delay(attempt, retry_after)):
                raise _Aborted
            attempt += 1

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry ``attempt + 1``: exponential, capped, jittered
        (factor 0.5 to 1), and no less than the server's ``Retry-After`` (also capped)."""
        cap = self.endpoint.max_backoff
        wait = min(cap, self.endpoint.backoff * 2**attempt) * (0.5 + 0.5 * self._rng.random())
        return max(wait, min(cap, retry_after)) if retry_after is not None else wait

    def _count(self, **amounts: int) -> None:
        with self._lock:
            self._usage.update(amounts)

    def _failure(self, err: Exception, attempts: int = 1, hint: str = "") -> ModelError:
        status = getattr(err, "status_code", None)
        what = f"HTTP {status}" if status else type(err).__name__
        hint = {
            401: f"; is ${self.endpoint.api_key_env} the right key for this endpoint?",
            403: f"; is ${self.endpoint.api_key_env} the right key for this endpoint?",
            404: "; check the model name and --base-url (an endpoint without /v1/completions "
            "needs --api chat)",
        }.get(status, hint)
        tried = f" after {attempts} attempts" if attempts > 1 else ""
        return ModelError(
            f"{self.name}: the endpoint {self.base_url} failed{tried}: {what}: "
            f"{self._redact(str(err))}{hint}"
        )

    def _redact(self, text: str) -> str:
        """``text`` with every URL in it redacted as run.json redacts one, and the key and
        the base URL's credentials wherever they appear (an error body may quote a path)."""
        text = redact_command([text])
        for secret in self._secrets:
            text = text.replace(secret, "<redacted>")
        return text


_LETTER_WRAP = "()[]*.:"  # what may stand around a letter in one token


def letter_logprobs(tokens, letters: str) -> tuple[float | None, ...] | None:
    """Each letter's log-probability at the first reply token that is not white space or
    an opening bracket, summed over the alternatives (``top_logprobs``) that spell it; None
    for a letter not among them; None for all when there are no alternatives there."""
    first = next((t for t in tokens or () if t.token.strip().lstrip("([*")), None)
    if first is None or not first.top_logprobs:
        return None
    found: dict[str, float] = {}
    for alternative in first.top_logprobs:
        letter = alternative.token.strip().strip(_LETTER_WRAP)
        if len(letter) == 1 and letter in letters:
            before = found.get(letter)
            lp = alternative.logprob
            found[letter] = lp if before is None else float(np.logaddexp(before, lp))
    return tuple(found.get(letter) for letter in letters)


def _cumulative(pieces: list[str]) -> list[int]:
    """Character offsets of consecutive text pieces."""
    offsets, at = [], 0
    for piece in pieces:
        offsets.append(at)
        at += len(piece)
    return offsets


def _offset_shift(tokens: list[str], prompt: str) -> int:
    """How far the echoed offsets are ahead of the prompt's: the length of the text before
    the prompt when the echoed tokens spell a prefix (a special token such as ``<s>``) and
    then the prompt; else 0."""
    at = "".join(tokens).find(prompt) if prompt else -1
    return max(at, 0)


def _cut(text: str, stop: tuple[str, ...], offsets: list[int] | None, fallback: int) -> Generation:
    """A reply cut by the stop rule of every backend and stripped of trailing white space;
    ``n_tokens`` counts the tokens that start before the cut."""
    cut = stop_index(text, stop)
    kept = text if cut is None else text[:cut]
    answer = kept.rstrip()
    if not answer:
        return Generation(answer, 0)
    n = fallback if offsets is None else sum(1 for o in offsets if o < len(kept))
    return Generation(answer, n)


def _retry_after(headers) -> float | None:
    try:
        value = float(headers.get("retry-after", ""))
    except (TypeError, ValueError):
        return None
    return value if value >= 0 else None
