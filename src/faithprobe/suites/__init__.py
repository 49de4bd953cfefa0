"""The suites, one package per published method.

Each subpackage is one suite: its ``__init__`` registers it (``SUITE``, a
:class:`faithprobe.suite.SuiteEntry`: name, description, method, options, and where its
suite class and report view are), ``suite.py`` makes the pairs, requests and rows,
``metrics.py`` computes what its report shows and ``report.py`` shows it. The registry
(:data:`faithprobe.suite.SUITES`) finds the subpackages itself; a suite in another
installed package registers through the entry-point group ``faithprobe.suites``.
"""
