"""The QA library the suites, training, analyses and baselines share, beside the
interventions (it builds on them and on the data layer, and knows no subject, runner,
metric or suite):

* :mod:`~faithprobe.qa.questions` -- what is asked about a question: the passage it is
  about, the question with its conversation history, its kind (yes/no, HotpotQA);
* :mod:`~faithprobe.qa.prompt` -- the prompt a language model answers a question from;
* :mod:`~faithprobe.qa.deletions` -- the deletion variants of a question (OS, TS, TS-R,
  OS-R) and the pairs that make them;
* :mod:`~faithprobe.qa.answers` -- reading a model's text answer (normalisation, *unknown*,
  the answer in a generated reply, its yes/no label).

Scoring answers against gold answers is metrics (:mod:`faithprobe.metrics.qa`).
"""
