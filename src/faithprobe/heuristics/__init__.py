"""Heuristic QA baselines: pick a sentence, then extract a phrase from it.

Ray Choudhury, Rogers and Augenstein (*Machine reading, fast and slow: when do models
"understand" language?*) set QA models against shallow heuristics of this two-step kind; a
model that scores no better than a heuristic may be using the heuristic's shortcut. The
``right-reasons`` suite reports these baselines next to the models it probes.

* :mod:`~faithprobe.heuristics.selection`: sentence selectors (token overlap, longest
  common subsequence, first sentence);
* :mod:`~faithprobe.heuristics.encoder`: the sentence-encoder selector (embedded MiniLM);
* :mod:`~faithprobe.heuristics.answer_types`: the expected answer's entity types;
* :mod:`~faithprobe.heuristics.extraction`: phrase extractors (typed entity, noun chunk,
  whole sentence);
* :mod:`~faithprobe.heuristics.runner`: every selector x extractor on QA examples, scored;
* :mod:`~faithprobe.heuristics.cli`: ``faithprobe baseline heuristics``.
"""
