"""``hf-mc:``: a Hugging Face multiple-choice classifier (:class:`~faithprobe.subjects.hf.mc.HFMC`).
Its fingerprint hashes the kind ``multiple-choice``, the name the answer cache has always
keyed it by, and mixes in settings read off the loaded model, so it loads at once."""

from faithprobe.subjects.backends._hub import hub_backend
from faithprobe.subjects.identity import HF_MC

BACKEND = hub_backend(
    "hf-mc",
    "Hugging Face multiple-choice classifier (AutoModelForMultipleChoice): softmax over one "
    "score per (prompt, choice) pair",
    "faithprobe.subjects.hf.mc:HFMC",
    architectures=("ForMultipleChoice",),
    precedence=4,
    identity=HF_MC,
    deferrable=False,
)
