"""Kept so that plug-ins written against the old import path still work: this module is
:mod:`faithprobe.records` (renamed in 0.x so that the name says what it holds)."""

import importlib

_MODULE = importlib.import_module("faithprobe.records")


def __getattr__(name: str):
    return getattr(_MODULE, name)
