"""``hf-nli:``: a Hugging Face sequence-pair classifier (:class:`~faithprobe.subjects.hf.nli.HFNLI`).
Its fingerprint hashes the kind ``nli-classifier``, the name the answer cache has always
keyed it by, and mixes in the label grouping read off the loaded model, so it loads at once."""

from faithprobe.subjects.backends._hub import hub_backend
from faithprobe.subjects.identity import HF_NLI

BACKEND = hub_backend(
    "hf-nli",
    "Hugging Face sequence-pair classifier (AutoModelForSequenceClassification) answering "
    "NLI text-pair requests; 3-class models are grouped into entailment vs non-entailment "
    "by their id2label names",
    "faithprobe.subjects.hf.nli:HFNLI",
    architectures=("ForSequenceClassification",),
    precedence=3,
    identity=HF_NLI,
    deferrable=False,
)
