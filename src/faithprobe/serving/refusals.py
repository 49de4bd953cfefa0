"""Requests the server refuses: each is answered with an HTTP error status and a message
saying what was wrong."""

from __future__ import annotations

import json


class Refused(Exception):
    """A request the server answers with the error ``status`` (its message is the error's)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class BadRequest(Refused):
    """A request the server refuses with 400."""

    def __init__(self, message: str) -> None:
        super().__init__(400, message)


def shown(value) -> str:
    """``value`` as JSON, cut short (a message names a wrong value without repeating a
    huge one)."""
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."
