"""Every suite's declared ``--data`` formats (:mod:`faithprobe.datasets.schema`): its docs
page holds what the renderer writes, ``faithprobe data schema SUITE`` prints them, and
``faithprobe list`` points to them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_corpus import refused, runner
from faithprobe.cli import app
from faithprobe.datasets.schema import declared, schemas_for, suite_markdown, suite_text
from faithprobe.suite_protocol import SUITES

DOCS = Path(__file__).resolve().parents[1] / "docs" / "suites"
BLOCK = re.compile(r"<!-- schema:begin[^\n]*-->\n(.*?)<!-- schema:end -->", re.S)


def test_every_suite_declares_the_formats_it_reads():
    assert set(declared()) == set(SUITES.names())


@pytest.mark.parametrize("suite", declared())
def test_docs_page_holds_what_the_renderer_writes(suite: str):
    page = DOCS / f"{suite}.md"
    found = BLOCK.search(page.read_text(encoding="utf-8"))
    assert found is not None, f"{page} lost its schema block"
    assert found.group(1) == suite_markdown(suite), (
        f"the schema tables are stale: paste `faithprobe data schema {suite} --markdown` "
        f"between the schema markers of {page}"
    )


@pytest.mark.parametrize("suite", declared())
def test_data_schema_prints_every_format(suite: str):
    res = runner.invoke(app, ["data", "schema", suite])
    assert res.exit_code == 0, res.stderr
    assert res.stdout == suite_text(suite)
    for schema in schemas_for(suite):
        assert schema.name in res.stdout
    md = runner.invoke(app, ["data", "schema", suite, "--markdown"])
    assert md.stdout == suite_markdown(suite)


def test_an_unknown_suite_is_one_line():
    line = refused(["data", "schema", "no-such-suite"], expect=["no-such-suite", "no --data"])
    assert "declared: " in line


def test_list_names_the_schema_command():
    res = runner.invoke(app, ["list"])
    assert res.exit_code == 0, res.stderr
    assert "faithprobe data schema SUITE" in res.stdout
