"""URLs without the credentials they may carry (``https://user:token@host/v1?key=...``).

A base URL given on the command line ends up in ``run.json``'s ``command``, in the report
and in fingerprints; none of them may hold a password or token.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "REDACTED"
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s]+")


def public_url(url: str) -> str:
    """``url`` without user info, query or fragment (where credentials could hide), and
    without a trailing slash: what identifies an endpoint."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def redact_url(url: str) -> str:
    """``url`` with its user info and every query value replaced by ``REDACTED`` (the names
    stay, so a reader sees that something was given)."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not parseable as a URL: hide all of it but the scheme
        return url.partition("://")[0] + "://" + REDACTED
    user, at, host = parts.netloc.rpartition("@")
    netloc = f"{REDACTED}@{host}" if at else host
    query = parts.query
    if query:
        query = urlencode([(k, REDACTED) for k, _ in parse_qsl(query, keep_blank_values=True)])
        query = query or REDACTED
    fragment = REDACTED if parts.fragment else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def redact_command(args: Sequence[str]) -> str:
    """A command line, as one string, with every URL in it redacted (``--base-url URL`` and
    ``--base-url=URL`` alike)."""
    return " ".join(_URL.sub(lambda m: redact_url(m.group(0)), a) for a in args)
