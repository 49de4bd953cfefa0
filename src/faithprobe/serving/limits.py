"""What one client may take from the server, in tokens, seconds, bytes and connections."""

from __future__ import annotations

import math
from dataclasses import dataclass

from faithprobe.errors import UsageError
from faithprobe.serving.scoring import CHUNK_TOKENS


@dataclass(frozen=True)
class Limits:
    """What one client may take from the server (:mod:`~faithprobe.serving.openai_server`
    says how each limit is enforced): at most ``max_tokens`` new tokens per prompt,
    ``seconds`` from a request's first byte, a body of ``body_bytes``, ``read_seconds`` for
    each wait for bytes from the client and ``request_read_seconds`` for all of a request's
    bytes, ``connections`` open at once, and the logits of ``chunk_tokens`` positions at a
    time."""

    max_tokens: int = 512
    seconds: float = 60.0
    body_bytes: int = 1 << 20
    read_seconds: float = 10.0
    request_read_seconds: float = 30.0
    connections: int = 32
    chunk_tokens: int = CHUNK_TOKENS

    def __post_init__(self) -> None:
        if self.max_tokens < 0 or self.body_bytes < 0:
            raise UsageError("max_tokens and body_bytes must be >= 0")
        times = (self.seconds, self.read_seconds, self.request_read_seconds)
        if not all(0 < t < math.inf for t in times):  # NaN fails both
            raise UsageError(
                "the time budget and the read timeout and deadline must be finite and > 0 s"
            )
        if self.connections < 1 or self.chunk_tokens < 1:
            raise UsageError("connections and chunk_tokens must be >= 1")
