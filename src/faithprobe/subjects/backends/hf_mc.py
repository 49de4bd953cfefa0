"""``hf-mc:``: a Hugging Face multiple-choice classifier (class
:class:`~faithprobe.subjects.hf_multiple_choice.HFMultipleChoice`, kind
``multiple-choice``). Its fingerprint mixes in settings read off the loaded model, so it
loads at once."""

from faithprobe.subjects.backends._hub import hub_backend

BACKEND = hub_backend(
    "hf-mc",
    "Hugging Face multiple-choice classifier (AutoModelForMultipleChoice): softmax over one "
    "score per (prompt, choice) pair",
    "faithprobe.subjects.hf_multiple_choice:HFMultipleChoice",
    architectures=("ForMultipleChoice",),
    precedence=4,
)
