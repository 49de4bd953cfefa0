"""The QA library the suites, training, analyses and baselines share, at the data layer:

* :mod:`~faithprobe.qa.answers` -- reading a model's text answer (normalisation, *unknown*,
  the answer in a generated reply, its yes/no label).

Scoring answers against gold answers is metrics (:mod:`faithprobe.metrics.qa`).
"""
