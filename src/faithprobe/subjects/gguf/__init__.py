"""GGUF models: local ``.gguf`` files (``gguf:``) and the ones shipped in PyPI packages
(``embedded``), converted once to a transformers folder and answered by
:class:`~faithprobe.subjects.hf.causal.HFCausal`."""
