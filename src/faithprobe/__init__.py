"""faithprobe: does a language model use the information it should?

The data flow, one package per stage::

    datasets / generators -> examples -> interventions -> pairs -> requests
    -> subjects (batched, cached) -> results table -> metrics -> report

``suites`` wire the stages together for one published method each.
"""

__version__ = "0.1.0"
