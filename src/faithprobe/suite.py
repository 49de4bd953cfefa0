"""Kept so that plug-ins written against the old import path still work: this module is
:mod:`faithprobe.suite_protocol` (renamed in 0.x so that the name says what it holds)."""

import importlib

_MODULE = importlib.import_module("faithprobe.suite_protocol")


def __getattr__(name: str):
    return getattr(_MODULE, name)
