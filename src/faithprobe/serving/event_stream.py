"""A reply as the OpenAI API streams it (``stream: true``): server-sent events, each a chunk.

The server computes a streamed reply exactly as an unstreamed one and then sends it as a
stream, so the two carry the same text and numbers; the first event leaves once the reply
is complete. The chunks are the API's:

- completions: ``object`` "text_completion", each chunk a ``choices`` entry with ``index``,
  a piece of ``text``, its ``logprobs`` (one token's, in the lists of the unstreamed reply)
  and ``finish_reason`` null, the last one per choice with no text and its
  ``finish_reason``;
- chat: ``object`` "chat.completion.chunk", a first ``delta`` holding the role, then the
  content's pieces (with ``logprobs.content`` of one token each), then an empty ``delta``
  with the ``finish_reason``.

A choice whose log-probabilities were asked for is sent a token per chunk (where the tokens
spell its text); one without them, in one piece. With ``include_usage`` every chunk has
``usage`` null and a last chunk with no choices holds it. The stream ends with
``data: [DONE]``.
"""

from __future__ import annotations

import json

DONE = b"data: [DONE]\n\n"


def events(response: dict, include_usage: bool) -> bytes:
    """``response`` (an unstreamed completions or chat reply) as the event stream of the
    same reply."""
    chat = response["object"] == "chat.completion"
    head = {
        "id": response["id"],
        "object": "chat.completion.chunk" if chat else "text_completion",
        "created": response["created"],
        "model": response["model"],
    }
    pieces = [
        piece
        for choice in response["choices"]
        for piece in (_chat_pieces(choice) if chat else _completion_pieces(choice))
    ]
    chunks = [{**head, "choices": [piece]} for piece in pieces]
    if include_usage:
        chunks = [{**chunk, "usage": None} for chunk in chunks]
        chunks.append({**head, "choices": [], "usage": response["usage"]})
    return b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks) + DONE


def _completion_pieces(choice: dict) -> list[dict]:
    logprobs = choice["logprobs"]
    tokens = logprobs["tokens"] if logprobs else []
    if logprobs and "".join(tokens) == choice["text"]:
        pieces = [
            (text, {key: [values[j]] for key, values in logprobs.items()})
            for j, text in enumerate(tokens)
        ]
    else:
        pieces = [(choice["text"], logprobs)] if choice["text"] or logprobs else []
    index = choice["index"]
    return [
        {"index": index, "text": text, "logprobs": one, "finish_reason": None}
        for text, one in pieces
    ] + [{"index": index, "text": "", "logprobs": None, "finish_reason": choice["finish_reason"]}]


def _chat_pieces(choice: dict) -> list[dict]:
    content = choice["message"]["content"]
    entries = choice["logprobs"]["content"] if choice["logprobs"] else []
    if entries and "".join(e["token"] for e in entries) == content:
        pieces = [({"content": e["token"]}, {"content": [e]}) for e in entries]
    else:
        pieces = [({"content": content}, choice["logprobs"])] if content else []
    index = choice["index"]
    role = {"index": index, "delta": {"role": "assistant", "content": ""}, "logprobs": None}
    return [
        {**role, "finish_reason": None},
        *({"index": index, "delta": delta, "logprobs": one, "finish_reason": None}
          for delta, one in pieces),
        {"index": index, "delta": {}, "logprobs": None, "finish_reason": choice["finish_reason"]},
    ]  # fmt: skip
