"""Reading a request's fields as the OpenAI API states them: a malformed one is a 400 naming it.

Each reader takes the request's JSON object and returns the field's value in the form the
server computes with, or raises :class:`~faithprobe.serving.refusals.BadRequest` saying which
field is wrong and what it holds. What the server does with the values is
:mod:`~faithprobe.serving.openai_server`'s.
"""

from __future__ import annotations

import json

from faithprobe.serving.refusals import BadRequest, shown

MAX_LOGPROBS = 5  # completions: the OpenAI API's bound on `logprobs`
MAX_TOP_LOGPROBS = 20  # chat: the OpenAI API's bound on `top_logprobs`
ROLES = ("system", "user", "assistant")  # the roles a chat template is written for


def json_object(body: bytes) -> dict:
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


def integer(body: dict, key: str, default: int | None, most: int | None = None) -> int | None:
    """``body[key]``, an integer from 0 to ``most`` (no bound: None); ``default`` if unset."""
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadRequest(f"{key} must be an integer >= 0, not {shown(value)}")
    if most is not None and value > most:
        raise BadRequest(f"{key} must be at most {most}, not {value}")
    return value


def number(body: dict, key: str, default: float) -> float:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadRequest(f"{key} must be a number, not {shown(value)}")
    return value


def flag(body: dict, key: str, default: bool = False) -> bool:
    value = body.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise BadRequest(f"{key} must be true or false, not {shown(value)}")
    return value


# fields that would change the reply from the model's greedy one, each with the value that
# does not (as do null and leaving it out): a request setting one otherwise is refused,
# never answered as if it had not
UNSERVED = {
    "logit_bias": {},
    "presence_penalty": 0,
    "frequency_penalty": 0,
    "best_of": 1,
    "suffix": "",
    "tools": [],
    "functions": [],
    "tool_choice": "none",
    "function_call": "none",
    "response_format": {"type": "text"},
}


def unserved(body: dict) -> None:
    """Refuse a request that sets a field of :data:`UNSERVED` to a value that would change
    the reply."""
    for key, neutral in UNSERVED.items():
        value = body.get(key)
        if value is not None and (isinstance(value, bool) or value != neutral):
            raise BadRequest(
                f"{key}: this server answers with the model's greedy reply only, so it does "
                f"not take {key} {shown(value)}"
            )


def max_tokens(body: dict, key: str) -> int:
    """The new tokens ``body`` asks for under ``key`` (16 if unset), once it is clear that
    it asks for what this server makes: one greedy choice per prompt."""
    if number(body, "temperature", 0) != 0:
        raise BadRequest("this server decodes greedily only: temperature must be 0")
    if integer(body, "n", 1) != 1:
        raise BadRequest("this server makes one choice per prompt: n must be 1")
    return integer(body, key, 16)


def chat_top_logprobs(body: dict, logprobs: bool) -> int:
    """How many alternatives per reply token a chat request asks for (``top_logprobs``,
    which the OpenAI API allows only with ``logprobs``)."""
    top = integer(body, "top_logprobs", 0, MAX_TOP_LOGPROBS)
    if top and not logprobs:
        raise BadRequest("top_logprobs needs logprobs: true")
    return top


def stop(body: dict) -> list[str]:
    value = body.get("stop")
    stops = [value] if isinstance(value, str) else value
    if stops is None:
        return []
    if not isinstance(stops, list) or not all(isinstance(s, str) for s in stops):
        raise BadRequest(f"stop must be a string or a list of strings, not {shown(value)}")
    return stops


def stream(body: dict) -> tuple[bool, bool]:
    """Whether to stream the reply as server-sent events, and whether the stream ends with
    a chunk of usage (``stream_options: {"include_usage": true}``, allowed only with
    ``stream``)."""
    streamed = flag(body, "stream")
    options = body.get("stream_options")
    if options is None:
        return streamed, False
    if not streamed:
        raise BadRequest("stream_options needs stream: true")
    if not isinstance(options, dict):
        raise BadRequest(f"stream_options must be an object, not {shown(options)}")
    return True, flag(options, "include_usage")


def _token_ids(value: list, what: str, vocabulary: int) -> list[int]:
    """A prompt given as token ids, each checked against the model's ``vocabulary``."""
    if not value:
        raise BadRequest(f"{what} holds no token ids")
    for j, token in enumerate(value):
        if isinstance(token, bool) or not isinstance(token, int) or not 0 <= token < vocabulary:
            raise BadRequest(
                f"{what}[{j}] must be a token id from 0 to {vocabulary - 1}, not {shown(token)}"
            )
    return value


def prompts(body: dict, vocabulary: int) -> list[str | list[int]]:
    """The prompts of a completions request, each a string or a list of token ids: the
    ``prompt`` is a string, a list of strings, a list of token ids or a list of lists of
    token ids (one prompt each), as the OpenAI API states it."""
    value = body.get("prompt", "")
    if isinstance(value, str):
        return [value]
    wrong = (
        "prompt must be a string, a list of strings, a list of token ids or a list of "
        f"lists of token ids, not {shown(value)}"
    )
    if not isinstance(value, list):
        raise BadRequest(wrong)
    if not value:
        raise BadRequest("prompt holds no prompts")
    if all(isinstance(p, int) and not isinstance(p, bool) for p in value):
        return [_token_ids(value, "prompt", vocabulary)]
    if all(isinstance(p, str) for p in value):
        return value
    if all(isinstance(p, list) for p in value):
        return [_token_ids(p, f"prompt[{i}]", vocabulary) for i, p in enumerate(value)]
    raise BadRequest(wrong)


def _content(value, what: str) -> str:
    """A message's text: a string, or content parts of type ``text``, joined by new lines
    (as vLLM joins them)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not value:
        raise BadRequest(
            f"{what} must be text or a list of text parts "
            f'[{{"type": "text", "text": ...}}], not {shown(value)}'
        )
    texts = []
    for j, part in enumerate(value):
        if not isinstance(part, dict) or part.get("type") != "text":
            kind = part.get("type") if isinstance(part, dict) else None
            refused = f"a part of type {shown(kind)}" if isinstance(kind, str) else shown(part)
            raise BadRequest(
                f'{what}[{j}] must be a text part {{"type": "text", "text": ...}} (this '
                f"server reads text only), not {refused}"
            )
        if not isinstance(part.get("text"), str):
            raise BadRequest(f"{what}[{j}].text must be text, not {shown(part.get('text'))}")
        texts.append(part["text"])
    return "\n".join(texts)


def messages(body: dict) -> list[dict[str, str]]:
    """The ``messages`` of a chat request as {role, content} with text content: at least
    one, each of a role the chat template is written for."""
    value = body.get("messages")
    if not isinstance(value, list):
        raise BadRequest(f"messages must be a list of {{role, content}}, not {shown(value)}")
    if not value:
        raise BadRequest("messages must hold at least one message")
    read = []
    for i, m in enumerate(value):
        if not isinstance(m, dict):
            raise BadRequest(f"messages[{i}] must be {{role, content}}, not {shown(m)}")
        if m.get("role") not in ROLES:
            raise BadRequest(
                f"messages[{i}].role must be one of {', '.join(ROLES)} (this server has no "
                f"tools), not {shown(m.get('role'))}"
            )
        read.append(
            {"role": m["role"], "content": _content(m.get("content"), f"messages[{i}].content")}
        )
    return read
