"""Serving local models over HTTP (an OpenAI-compatible test and demo server).

The names below are imported when first used, so that ``faithprobe --help`` (which imports
the ``serve`` command from :mod:`faithprobe.serving.cli`) does not import the server, and
torch with it."""

import importlib

_HOME = {
    "FAULT_KINDS": "faithprobe.serving.openai_server",
    "Faults": "faithprobe.serving.openai_server",
    "OpenAIServer": "faithprobe.serving.openai_server",
    "Limits": "faithprobe.serving.limits",
}
__all__ = sorted(_HOME)


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME[name]), name)
