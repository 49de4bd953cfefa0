"""Serving local models over HTTP (an OpenAI-compatible test and demo server)."""

from faithprobe.serving.openai_server import FAULT_KINDS, Faults, Limits, OpenAIServer

__all__ = ["FAULT_KINDS", "Faults", "Limits", "OpenAIServer"]
