"""The QA library the suites, training, analyses and baselines share, in the data layer
(it knows no intervention, request, subject, runner, metric or suite):

* :mod:`~faithprobe.qa.questions` -- what is asked about a question: the passage it is
  about, the question with its conversation history, its kind (yes/no, HotpotQA);
* :mod:`~faithprobe.qa.prompt` -- the prompt a language model answers a question from;
* :mod:`~faithprobe.qa.answers` -- reading a model's text answer (normalisation, *unknown*,
  the answer in a generated reply, its yes/no label, whether it occurs in a text).

The deletion variants of a question (OS, TS, TS-R, OS-R) are interventions
(:mod:`faithprobe.interventions.deletion_variants`); asking a question as requests is
:mod:`faithprobe.asking`.

Scoring answers against gold answers is metrics (:mod:`faithprobe.metrics.qa_scores`).
"""
