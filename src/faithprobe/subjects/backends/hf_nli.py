"""``hf-nli:``: a Hugging Face sequence-pair classifier (class
:class:`~faithprobe.subjects.hf_pair_classifier.HFPairClassifier`, kind ``nli-classifier``).
Its fingerprint mixes in the label grouping read off the loaded model, so it loads at once."""

from faithprobe.subjects.backends._hub import hub_backend

BACKEND = hub_backend(
    "hf-nli",
    "Hugging Face sequence-pair classifier (AutoModelForSequenceClassification) answering "
    "NLI text-pair requests; 3-class models are grouped into entailment vs non-entailment "
    "by their id2label names",
    "faithprobe.subjects.hf_pair_classifier:HFPairClassifier",
    architectures=("ForSequenceClassification",),
    precedence=3,
)
