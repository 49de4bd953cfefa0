"""The endpoint self-check: before the first number faithprobe reads from an endpoint, a few
requests whose replies must agree with each other.

A server can serve every field of the OpenAI API and still return numbers that are not its
model's: llama-cpp-python echoes each prompt token's log-probability from the logits that
predict the *next* token, SGLang gives every ``text_offset`` as -1, a proxy returns
``top_logprobs`` null. faithprobe reads candidate scores from echoed log-probabilities and
letter probabilities from ``top_logprobs``, so it checks, once per endpoint and model,
that the endpoint's numbers are consistent with its own greedy choices:

**completions** (before the first candidate score). For each of :data:`PROBES`:

1. one token generated greedily after the probe (``max_tokens=1, temperature=0,
   logprobs=1``): exactly one token must come back, with its log-probability *g*;
2. the probe and that token echoed as a candidate is scored (``echo=True, logprobs=1,
   max_tokens=1``): the echoed tokens must spell the text, their ``text_offset`` must be
   where each token's text starts (a special token's text before the prompt is allowed,
   as scoring allows it), at most one generated token may follow the text, and the echoed
   log-probability of the generated token must equal *g* within :data:`TOLERANCE`.

Step 2 can compare only where the endpoint reads the token back as one token of its own
(not merged with the probe's last characters, not split): a probe where it does not is
*not compared*, and at least one must be.

**chat** (before the first letter read with probabilities). For each probe as a user
message, a greedy one-token reply with ``logprobs=true, top_logprobs=5``: the reply's token
must be the most likely entry of its own ``top_logprobs`` (a tie within the tolerance
counts), with that entry's log-probability.

**The tolerance**, :data:`TOLERANCE` nats, covers the two ways an honest server's two
numbers differ: the generated token's value comes from a forward pass over the probe, the
echoed one from a pass over the probe and the token, and the two passes differ in length
(and, on a GPU server, in the batch they share), which changes the rounding of the same
arithmetic. Measured on the embedded SmolLM2 (``benchmarks/self_check_tolerance.py``, 60
SQuAD passage openings): at most 2.4e-6 nats apart in float32 and 0.037 in bfloat16, five
times below the tolerance. An echo shifted by one instead compares log p(t | text) with
log p(t | text, t): at least 0.90 nats apart on the same 60 texts, 9.3 at the median
(llama-cpp-python on SmolLM2: -8.686 against -0.264 for " Paris"), so none falls within
the tolerance, and a server must pass every probe that can be compared.

A check that fails is raised as one line naming the check, what it saw and what to do
instead (:class:`SelfCheckFailed`); the subject records a check that passed in the answer
cache under its fingerprint, so a re-run does not ask again, and in run.json.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from faithprobe.errors import ModelError, excerpt

VERSION = 1  # bump when the check asks or accepts something else: cached passes are redone
TOLERANCE = 0.2  # nats: module docstring
COMPLETIONS, CHAT = "completions", "chat"
PROBES = (
    "The capital of France is",
    "One, two, three, four,",
    "Monday, Tuesday, Wednesday,",
)
CHAT_TOP = 5  # top_logprobs asked by the chat check
# what a failed check tells the user to do instead
FALLBACKS = {
    COMPLETIONS: "ask it by letter instead (api=chat, which has a self-check of its own), "
    "or run the model in process",
    CHAT: "read the letters from the replies alone (letter_probabilities=false)",
}
# what each check vouches for: the answer mode the card shows it beside
VOUCHES_FOR = {COMPLETIONS: "candidate scores", CHAT: "letters with probabilities"}


class SelfCheckFailed(ModelError):
    """An endpoint whose numbers failed the self-check."""


class _Saw(Exception):
    """What a check saw that fails it (in words)."""


@dataclass(frozen=True)
class SelfCheck:
    """A check's outcome: ``compared`` probes compared, the ``largest_difference`` (nats)
    between the two numbers that must agree, the HTTP ``requests`` and ``seconds`` it
    took, what it ``saw`` when it failed, and the ``tolerance`` it was held to."""

    check: str
    passed: bool
    compared: int
    largest_difference: float | None
    requests: int
    seconds: float
    tolerance: float = TOLERANCE
    saw: str = ""
    version: int = VERSION

    def record(self) -> dict:
        return asdict(self)

    @classmethod
    def from_record(cls, record: dict) -> SelfCheck:
        return cls(**record)


def storage_key(fingerprint: str, check: str) -> str:
    """Where a passed check is kept in the answer cache: the subject's fingerprint, the
    check and :data:`VERSION`."""
    text = "\x1f".join((fingerprint, "endpoint-self-check", check, str(VERSION)))
    return hashlib.sha256(text.encode()).hexdigest()


def stored(cache, fingerprint: str, check: str) -> SelfCheck | None:
    """The passed check ``cache`` holds for ``fingerprint``, if any."""
    found = cache.get_many([storage_key(fingerprint, check)])
    return SelfCheck.from_record(json.loads(next(iter(found.values())))) if found else None


def store(cache, fingerprint: str, result: SelfCheck) -> None:
    cache.put_many({storage_key(fingerprint, result.check): json.dumps(result.record())})


def run_check(check: str, model: str, complete: Callable, chat: Callable) -> SelfCheck:
    """Run ``check`` against the endpoint serving ``model``; ``complete`` and ``chat`` send
    a completions or chat completions request (keyword arguments as the ``openai`` client
    takes them) and return its response. Failing is a result, not an exception."""
    started, asked = time.perf_counter(), 0
    differences: list[float] = []

    def ask(create, **params):
        nonlocal asked
        asked += 1
        return create(model=model, temperature=0, **params)

    try:
        for probe in PROBES:
            found = (
                _completions_probe(probe, lambda **p: ask(complete, **p))
                if check == COMPLETIONS
                else _chat_probe(probe, lambda **p: ask(chat, **p))
            )
            if found is not None:
                differences.append(found)
        if not differences:
            raise _Saw(
                "no probe's generated token came back as one token of its own when echoed, "
                "so no log-probability could be compared"
            )
    except (_Saw, ModelError) as saw:  # ModelError: the endpoint refused a check's request
        return SelfCheck(check, False, len(differences), max(differences, default=None),
                         asked, time.perf_counter() - started, saw=str(saw))  # fmt: skip
    return SelfCheck(check, True, len(differences), max(differences), asked,
                     time.perf_counter() - started)  # fmt: skip


def refusal(name: str, result: SelfCheck) -> SelfCheckFailed:
    """The one line a failed check ends the run with."""
    return SelfCheckFailed(
        f"{name}: the endpoint failed faithprobe's {result.check} self-check, so its numbers "
        f"are not read: {result.saw}; {FALLBACKS[result.check]}"
    )


# -- completions -------------------------------------------------------------------------


def _completions_probe(probe: str, ask: Callable) -> float | None:
    """|echoed - generated| log-probability of the greedy token after ``probe`` (None where
    the echo cannot be compared); :class:`_Saw` on a reply that fails the check."""
    reply = ask(prompt=probe, max_tokens=1, logprobs=1)
    token, generated = greedy_token(reply.choices[0])
    if not token:
        return None
    text = probe + token
    echoed = ask(prompt=text, max_tokens=1, logprobs=1, echo=True).choices[0].logprobs
    value = echoed_value(echoed, text, len(probe), token)
    if value is None:
        return None
    if abs(value - generated) > TOLERANCE:
        raise _Saw(
            f"echoing {text!r} gave {token!r} the log-probability {value:.3f}, generating it "
            f"after {probe!r} gave {generated:.3f} (more than {TOLERANCE} apart): its echoed "
            "log-probabilities are not those of its own model"
        )
    return abs(value - generated)


def greedy_token(choice) -> tuple[str, float]:
    """The one token a ``max_tokens=1`` completion generated and its log-probability (an
    empty text where it ended at once or gave part of a character)."""
    logprobs = choice.logprobs
    tokens = list(getattr(logprobs, "tokens", None) or [])
    values = list(getattr(logprobs, "token_logprobs", None) or [])
    if not tokens and choice.finish_reason == "stop":
        return "", 0.0  # the model ended its reply at once: nothing to compare
    if len(tokens) != 1 or len(values) != 1:
        raise _Saw(
            f"asked for one token with its log-probability (max_tokens=1, logprobs=1), it "
            f"returned {len(tokens)} tokens and {len(values)} log-probabilities"
        )
    if values[0] is None:
        raise _Saw(f"the generated token {tokens[0]!r} came with no log-probability")
    return tokens[0], float(values[0])


def echoed_value(logprobs, text: str, start: int, token: str) -> float | None:
    """The echoed log-probability of ``token``, which ``text`` holds from ``start`` on, in
    an ``echo=True`` reply's ``logprobs`` (None where the endpoint does not read it back
    as one token of its own); :class:`_Saw` where the echo fails the check."""
    tokens = list(getattr(logprobs, "tokens", None) or [])
    values = list(getattr(logprobs, "token_logprobs", None) or [])
    offsets = list(getattr(logprobs, "text_offset", None) or [])
    if not tokens or not values:
        raise _Saw(
            "asked to echo the prompt with logprobs=1, it returned no log-probabilities of "
            "the echoed prompt"
        )
    if not len(tokens) == len(values) == len(offsets):
        raise _Saw(
            f"its echo gave {len(tokens)} tokens, {len(values)} log-probabilities and "
            f"{len(offsets)} offsets"
        )
    spelt = "".join(tokens)
    at = spelt.find(text)
    if at < 0:
        raise _Saw(f"its echoed tokens spell {excerpt(spelt)}, not the prompt {text!r}")
    where = [len("".join(tokens[:i])) for i in range(len(tokens))]
    if offsets != where:
        raise _Saw(
            f"its echoed text_offset {excerpt(offsets[:6])} are not where its tokens start "
            f"({excerpt(where[:6])}), so no candidate's tokens can be found by them"
        )
    after = sum(1 for o in offsets if o >= at + len(text))
    if after > 1:
        raise _Saw(f"asked for max_tokens=1, it returned {after} tokens after the prompt")
    if at + start not in offsets:
        return None  # the token's first characters merged with the probe's last ones
    i = offsets.index(at + start)
    carrying = [j for j in range(i, len(tokens)) if offsets[j] < at + len(text)]
    if carrying != [i] or tokens[i] != token:
        return None  # read back as several tokens
    if values[i] is None:
        raise _Saw(f"its echo gave the token {token!r} no log-probability")
    return float(values[i])


# -- chat --------------------------------------------------------------------------------


def _chat_probe(probe: str, ask: Callable) -> float:
    """|reply token - its top entry| log-probability of a one-token chat reply to
    ``probe``; :class:`_Saw` where they do not agree."""
    reply = ask(messages=[{"role": "user", "content": probe}], max_tokens=1, logprobs=True,
                top_logprobs=CHAT_TOP)  # fmt: skip
    logprobs = reply.choices[0].logprobs
    content = list(getattr(logprobs, "content", None) or [])
    if not content:
        raise _Saw(
            f"asked for logprobs=true with top_logprobs={CHAT_TOP}, it returned no "
            "log-probabilities of the reply's tokens"
        )
    return top_difference(content[0])


def top_difference(first) -> float:
    """|log-probability of the reply's first token ``first`` - its own top entry's|, where
    that token is its top entry (or ties with it); :class:`_Saw` otherwise."""
    top = list(first.top_logprobs or [])
    if not top:
        raise _Saw(
            f"the reply's first token {first.token!r} came with no top_logprobs "
            f"({'null' if first.top_logprobs is None else 'an empty list'})"
        )
    best = max(top, key=lambda t: t.logprob)
    same = [t for t in top if t.token == first.token]
    if not same or best.logprob - first.logprob > TOLERANCE:
        raise _Saw(
            f"the reply's first token {first.token!r} (log p {first.logprob:.3f}) is not "
            f"the most likely entry of its own top_logprobs ({best.token!r}, "
            f"{best.logprob:.3f}) at temperature 0"
        )
    difference = abs(same[0].logprob - first.logprob)
    if difference > TOLERANCE:
        raise _Saw(
            f"the reply's first token {first.token!r} has the log-probability "
            f"{first.logprob:.3f}, its own top_logprobs entry {same[0].logprob:.3f}"
        )
    return difference
