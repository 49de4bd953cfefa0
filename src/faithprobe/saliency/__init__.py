"""Saliency answers read as words: which words a careful reader needs (the partitions of
the right-reasons suite) and how word spans map onto the tokens a saliency answer scores.
No model and no torch: the saliency itself is computed by the backends
(:mod:`faithprobe.subjects.hf.attribution`)."""
