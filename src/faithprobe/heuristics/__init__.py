"""Heuristic QA baselines: pick a sentence, then extract a phrase from it.

Ray Choudhury, Rogers and Augenstein (*Machine reading, fast and slow: when do models
"understand" language?*) set QA models against shallow heuristics of this two-step kind; a
model that scores no better than a heuristic may be using the heuristic's shortcut. The
``right-reasons`` suite reports these baselines next to the models it probes.

* :mod:`~faithprobe.heuristics.selection`: sentence selectors (token overlap, longest
  common subsequence, first sentence);
* :mod:`~faithprobe.heuristics.encoder`: the sentence-encoder selector (embedded MiniLM);
* :mod:`~faithprobe.heuristics.answer_types`: the expected answer's entity types (the
  wh-word map);
* :mod:`~faithprobe.heuristics.type_classifier`: the trained answer-type classifier
  (``faithprobe train answer-types``) as a predictor of those types;
* :mod:`~faithprobe.heuristics.extraction`: phrase extractors (typed entity, noun chunk,
  whole sentence);
* :mod:`~faithprobe.heuristics.predict`: every selector x extractor on QA examples;
* :mod:`~faithprobe.heuristics.subject` and :mod:`~faithprobe.heuristics.backend`: one
  heuristic as a subject, ``--model heuristic:<selector>+<extractor>``.

The words they compare are :mod:`faithprobe.content_words`' (the degenerate reference models
share them). ``faithprobe baseline heuristics`` scores them like a suite
(:mod:`faithprobe.baseline`).
"""
