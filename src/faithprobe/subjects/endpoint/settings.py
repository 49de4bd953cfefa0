"""The settings of the ``openai`` backend: where an OpenAI-compatible endpoint is, what it
serves and how hard to try (everything but the key itself).

Declared as options (:mod:`faithprobe.options`), so they are given like any backend's
settings -- ``--model-option base_url=URL``, or in the model spec,
``openai:MODEL,api=chat`` -- and listed by ``faithprobe list``; ``--base-url``, ``--api``,
``--api-key-env``, ``--concurrency``, ``--timeout`` and ``--max-retries`` are the same
settings under their older names. Imports no HTTP client (nor numpy), so a command that
only checks its arguments reads them for free.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlsplit

from faithprobe.errors import ModelError, UsageError, excerpt
from faithprobe.numbers import DAY, HOUR
from faithprobe.options import check_choice, check_numbers, option
from faithprobe.urls import public_url, redact_url

DEFAULT_BASE_URL = "https://api.openai.com/v1"
BASE_URL_ENV = "OPENAI_BASE_URL"
API_KEY_ENV = "OPENAI_API_KEY"  # the key's variable when no api_key_env is given  # the base URL when no --base-url is given
NO_KEY = "none"  # sent when no key is set: a server without authentication takes any key
# how a reply begun for the model (GenerationRequest.reply_start) is sent
PREFILLS = {
    "continue": "as the final assistant message, which the server continues "
    "(continue_final_message=true, add_generation_prompt=false: vLLM, SGLang, faithprobe serve)",
    "ask": "as an assistant message followed by a user message asking the model to go on from "
    'it and end with "So the answer is (X)." (for an API that cannot continue a reply, '
    "such as OpenAI's; the cot-transparency fallback)",
}
APIS = {
    "completions": "the endpoint serves /v1/completions with echo and logprobs (candidate "
    "scores, plain generation) and /v1/chat/completions",
    "chat": "the endpoint serves /v1/chat/completions only (chat generation requests only)",
}


@dataclass(frozen=True)
class EndpointConfig:
    """How to reach an endpoint and how hard to try (everything but the key itself)."""

    base_url: str | None = option(
        None, "the endpoint's base URL, e.g. http://127.0.0.1:8000/v1 (default: "
        f"${BASE_URL_ENV}, else the OpenAI API)"
    )  # fmt: skip
    api: str = option(
        "completions",
        "what the endpoint serves: 'completions' (/v1/completions with echo and logprobs, "
        "and chat) or 'chat' (chat completions only: candidates asked as lettered options, "
        "read from top_logprobs or the reply)",
    )
    api_key_env: str = option(
        API_KEY_ENV,
        "the environment variable holding the API key (the key is never written anywhere)",
    )
    prefill: str = option(
        "continue",
        "how a reply begun for the model is sent: 'continue' "
        f"({PREFILLS['continue']}) or 'ask' ({PREFILLS['ask']})",
        choices=tuple(PREFILLS),
    )
    letter_probabilities: bool = option(
        True,
        "read the letters' probabilities from the endpoint's top_logprobs (false: letters "
        "parsed from replies alone, for an endpoint whose top_logprobs fail the self-check)",
    )
    concurrency: int = option(4, "requests in flight at once", range=(1, 1024))
    timeout: float = option(
        60.0, "seconds per HTTP request before it is retried", range=(0.001, DAY)
    )
    max_retries: int = option(
        6,
        "retries of a request after 429, 5xx, a timeout or a dropped connection "
        "(exponential backoff with jitter)",
        range=(0, 100),
    )
    backoff: float = option(
        0.5, "seconds before the first retry; doubled each retry", range=(0, HOUR)
    )
    max_backoff: float = option(
        30.0, "the longest wait between two retries, in seconds", range=(0, DAY)
    )

    def __post_init__(self) -> None:
        check_numbers(self)
        if self.api not in APIS:
            raise UsageError(f"unknown --api {excerpt(self.api)}; choose one of {', '.join(APIS)}")
        check_choice("openai", "prefill", self.prefill, tuple(PREFILLS))
        if self.base_url is not None:
            check_base_url(self.base_url)

    @property
    def url(self) -> str:
        """Where requests go: ``base_url``, else ``$OPENAI_BASE_URL`` (checked as
        ``--base-url`` is), else the OpenAI API."""
        if self.base_url is not None:
            return self.base_url
        if given := os.environ.get(BASE_URL_ENV):
            check_base_url(given, f"${BASE_URL_ENV}")
            return given
        return DEFAULT_BASE_URL

    def api_key(self, model: str) -> str:
        """The key in ``api_key_env``; without one, a placeholder for an endpoint of one's
        own (a server without authentication takes any key), and a ModelError naming
        ``model`` for the OpenAI API itself. (Asked before anything is read, it tells a bad
        ``$OPENAI_BASE_URL`` too.)"""
        url = self.url
        key = os.environ.get(self.api_key_env)
        if key:
            return key
        if self.api_key_env != API_KEY_ENV:  # named on purpose: a typo, or not exported
            raise ModelError(
                f"{model}: api_key_env {excerpt(self.api_key_env)} names a variable that is "
                "not set (or empty); set it, or leave api_key_env out for an endpoint "
                "without authentication"
            )
        if public_url(url) == DEFAULT_BASE_URL:
            raise ModelError(
                f"{model}: set the environment variable {self.api_key_env} to your API key "
                f"for {DEFAULT_BASE_URL}"
            )
        return NO_KEY


def check_base_url(url: str, source: str = "--base-url") -> None:
    """Refuse a base URL no request could reach (no http(s) scheme, no host, a bad port,
    white space), before anything is read; ``source`` names where it came from, and the
    URL is shown redacted."""
    shown = f"{source} {excerpt(redact_url(url))}"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError on a port that is no number in range
    except ValueError as err:
        raise UsageError(f"{shown}: not a URL ({err})") from None
    if any(c.isspace() or not c.isprintable() for c in url):
        raise UsageError(f"{shown}: a URL holds no white space or control characters")
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise UsageError(
            f"{shown}: give an http:// or https:// URL with a host, e.g. http://127.0.0.1:8000/v1"
        )
