"""The two modules a plug-in suite imports kept their old paths after the renames of issue 44
(``faithprobe.suite`` is :mod:`faithprobe.suite_protocol`, ``faithprobe.examples`` is
:mod:`faithprobe.records`): a plug-in written before still finds the same objects."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize(
    ("old", "new", "names"),
    [
        ("faithprobe.suite", "faithprobe.suite_protocol", ("Suite", "SuiteEntry", "AuditStep")),
        ("faithprobe.examples", "faithprobe.records", ("ClozeExample", "Outcome", "QAExample")),
    ],
)
def test_an_old_import_path_gives_the_same_objects(old, new, names):
    before, after = importlib.import_module(old), importlib.import_module(new)
    for name in names:
        assert getattr(before, name) is getattr(after, name)
    with pytest.raises(AttributeError):
        before.no_such_name  # noqa: B018
