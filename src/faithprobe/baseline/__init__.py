"""``faithprobe baseline``: the shallow QA heuristics (:mod:`faithprobe.heuristics`) run on a
data file and scored like a suite."""
