"""Known misbehaviours of third-party OpenAI-compatible servers, reproduced on demand by the
test server, so that the client's self-check (:mod:`faithprobe.subjects.endpoint.self_check`)
is tested against each where the real server does not install here.

Each quirk is what a named server does (docs/models.md, "Servers that faithprobe has been
tried against", links each to the server's own code or issue thread):

- ``zero-unlimited``: ``max_tokens`` of 0 or less on completions is read as "until the
  context is full" (llama-cpp-python's ``Llama.create_completion``), so a request asking
  for no new token generates up to the server's cap;
- ``echo-shifted``: the echoed prompt's log-probabilities are shifted by one position:
  each token's value is read from the logits that predict the *next* token, and the token
  generated after an echoed prompt gets no entry (llama-cpp-python with a model that adds
  no start-of-text token: its ``_create_completion`` pairs token *i* with logits row *i*);
- ``top-logprobs-null``: ``top_logprobs`` is null where the API gives a list, on
  completions and on each reply token of chat completions (LiteLLM's proxy,
  BerriAI/litellm#21932);
- ``offset-minus-one``: every ``text_offset`` is -1 (SGLang 0.5.16's completions);
- ``other-tokenizer``: the completions' ``tokens`` and ``text_offset`` are another
  tokenizer's (the text cut into words, each with the white space before it), paired by
  position with the model's own log-probabilities: the tokens still spell the text, but
  where a word is several of the model's tokens the numbers belong to other pieces.

:class:`Quirks` applies them through two hooks of the server: :meth:`Quirks.request`
rewrites a request's body before it is answered, :meth:`Quirks.response` rewrites the
reply before it is sent. None is on by default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from faithprobe.errors import UsageError

QUIRKS = {
    "zero-unlimited": "max_tokens <= 0 on completions generates until the server's cap",
    "echo-shifted": "echoed log-probabilities shifted by one position, the generated token "
    "left out",
    "top-logprobs-null": "top_logprobs null on completions and chat completions",
    "offset-minus-one": "every text_offset -1",
    "other-tokenizer": "echoed tokens and offsets of another tokenizer (words), paired by "
    "position with the model's log-probabilities",
}
_WORDS = re.compile(r"\s*\S+|\s+$")  # a word with the white space before it


@dataclass(frozen=True)
class Quirks:
    """The quirks (names of :data:`QUIRKS`) a test server acts out."""

    names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = sorted(set(self.names) - set(QUIRKS))
        if unknown:
            raise UsageError(f"unknown quirks {unknown}; known: {', '.join(QUIRKS)}")

    def request(self, route: str, body: dict, server) -> dict:
        """``body`` as the quirky server reads it (``server``: the
        :class:`~faithprobe.serving.openai_server.OpenAIServer` answering it)."""
        asked = body.get("max_tokens")
        if (
            "zero-unlimited" in self.names
            and route == "completions"
            and isinstance(asked, int)
            and asked <= 0
        ):
            return {**body, "max_tokens": server.limits.max_tokens}
        return body

    def response(self, route: str, body: dict, reply: dict, server) -> dict:
        """``reply`` (the JSON object about to be sent for ``body``) as the quirky server
        sends it."""
        for index, choice in enumerate(reply.get("choices") or ()):
            logprobs = choice.get("logprobs")
            if not logprobs:
                continue
            if route == "chat":
                if "top-logprobs-null" in self.names:
                    for entry in logprobs.get("content") or ():
                        entry["top_logprobs"] = None
                continue
            if "echo-shifted" in self.names and body.get("echo"):
                _shift_echo(logprobs, _prompt_ids(body, index, server.subject), server.subject)
            if "other-tokenizer" in self.names:
                _retokenized(logprobs, choice.get("text") or "", body.get("echo"), body, index)
            if "offset-minus-one" in self.names:
                logprobs["text_offset"] = [-1] * len(logprobs.get("text_offset") or ())
            if "top-logprobs-null" in self.names:
                logprobs["top_logprobs"] = None
        return reply


def _prompt_ids(body: dict, index: int, subject) -> list[int]:
    """The token ids of prompt ``index`` of a completions ``body`` (a text, a list of
    texts, a list of ids or a list of lists of ids), as the server reads it."""
    prompt = body.get("prompt", "")
    if isinstance(prompt, list) and prompt and isinstance(prompt[0], int):
        return list(prompt)
    one = prompt[index] if isinstance(prompt, list) else prompt
    return list(one) if isinstance(one, list) else subject.prompt_ids(one)


def _shift_echo(logprobs: dict, ids: list[int], subject) -> None:
    """llama-cpp-python's echo: entry *i* (of the prompt's ``ids``) holds log p(token *i* |
    tokens up to and including *i*), the first entry none, and the reply's entries are
    gone. (Read from one forward pass over the prompt, outside the server's model lock:
    the test server's quirks are for tests.)"""
    import torch

    tokens = torch.tensor([ids], dtype=torch.long, device=subject.device)
    with torch.inference_mode():
        rows = torch.log_softmax(subject.model(tokens).logits[0].float(), dim=-1)
        shifted = rows.gather(-1, tokens[0, :, None])[:, 0].tolist()
    n = len(ids)
    for key in ("tokens", "text_offset"):
        logprobs[key] = list(logprobs.get(key) or ())[:n]
    logprobs["token_logprobs"] = [None, *shifted[1:n]][: len(logprobs["tokens"])]
    if isinstance(logprobs.get("top_logprobs"), list):
        logprobs["top_logprobs"] = logprobs["top_logprobs"][:n]


def _retokenized(logprobs: dict, text: str, echo: bool, body: dict, index: int) -> None:
    """Tokens and offsets of another tokenizer (the words of the text the entries cover),
    paired by position with the model's log-probabilities (cut to the shorter list)."""
    start = 0 if echo else _prompt_length(body, index)
    words = [(m.group(), start + m.start()) for m in _WORDS.finditer(text) if m.group()]
    n = min(len(words), len(logprobs.get("token_logprobs") or ()))
    logprobs["tokens"] = [w for w, _ in words[:n]]
    logprobs["text_offset"] = [o for _, o in words[:n]]
    logprobs["token_logprobs"] = list(logprobs["token_logprobs"])[:n]
    if isinstance(logprobs.get("top_logprobs"), list):
        logprobs["top_logprobs"] = logprobs["top_logprobs"][:n]


def _prompt_length(body: dict, index: int) -> int:
    """Where a reply's offsets start without echo: after its prompt's text."""
    prompt = body.get("prompt", "")
    one = prompt[index] if isinstance(prompt, list) and prompt else prompt
    return len(one) if isinstance(one, str) else 0
