"""The suites, one package per published method.

Each subpackage is one suite: its ``__init__`` registers it (``SUITE``, a
:class:`faithprobe.suite_protocol.SuiteEntry`: name, description, method, options, and where its
suite class and report view are), ``suite.py`` makes the pairs, requests and rows,
``metrics.py`` computes what its report shows and ``report.py`` shows it. Each is named in
the entry-point group ``faithprobe.suites`` of faithprobe's ``pyproject.toml``, as a suite
in another installed package is in its own, and the registry
(:data:`faithprobe.suite_protocol.SUITES`) reads them from there.
"""
