"""``hf-causal:``: a Hugging Face causal LM (:class:`~faithprobe.subjects.hf.causal.HFCausal`),
also what a folder or Hugging Face id nothing else recognises is read as."""

from faithprobe.subjects.backends._hub import hub_backend
from faithprobe.subjects.identity import HF_CAUSAL

BACKEND = hub_backend(
    "hf-causal",
    "Hugging Face causal LM (AutoModelForCausalLM): candidate log-likelihoods, context "
    "computed once per item",
    "faithprobe.subjects.hf.causal:HFCausal",
    identity=HF_CAUSAL,
    architectures=("ForCausalLM", "LMHeadModel"),
)
