"""The Hugging Face transformers backends (hf-causal, hf-masked, hf-mc, hf-nli, hf-qa) and
what they share: loading, batching, the key/value caches of causal LMs, the QA windows, and
the saliency methods (:mod:`faithprobe.subjects.hf.attribution`) that need their weights."""
