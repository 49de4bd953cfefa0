"""The server's API key: which keys it can require, and whether a request carries it.

A request carries the key in ``Authorization: Bearer <key>`` (the scheme's case does not
matter; spaces around the key are not part of it, as HTTP strips them from a header's
value). So a key that is empty, only white space or has white space around it could never
be sent, or would let a header of only spaces in: the server refuses to start with one."""

from __future__ import annotations

import secrets


def key_problem(key: str) -> str | None:
    """Why ``key`` cannot be the server's key (None where it can)."""
    if not key:
        return "is empty"
    if not key.strip():
        return "is only white space"
    if key != key.strip():
        return "has white space around it, which an Authorization header does not carry"
    return None


def authorized(header: str | None, key: str | None) -> bool:
    """Whether the ``Authorization`` header ``header`` carries ``key`` (None: the server
    has no key, and every request is let in)."""
    if key is None:
        return True
    scheme, _, token = (header or "").strip().partition(" ")
    return scheme.lower() == "bearer" and secrets.compare_digest(
        token.strip().encode(), key.encode()
    )
