"""``hf-masked:``: a Hugging Face masked LM (:class:`~faithprobe.subjects.hf.masked.HFMasked`),
recognised by a ``*ForMaskedLM`` architecture or, when none is named, an encoder's
``model_type``."""

from faithprobe.subjects.backends._hub import hub_backend
from faithprobe.subjects.identity import HF_MASKED

BACKEND = hub_backend(
    "hf-masked",
    "Hugging Face masked LM (AutoModelForMaskedLM): candidate scoring at the mask, "
    "multi-token candidates by left-to-right unmasking",
    "faithprobe.subjects.hf.masked:HFMasked",
    identity=HF_MASKED,
    architectures=("ForMaskedLM",),
    precedence=1,
    model_types=(
        "bert",
        "roberta",
        "distilbert",
        "albert",
        "electra",
        "deberta",
        "deberta-v2",
        "xlm-roberta",
        "camembert",
        "mpnet",
        "modernbert",
    ),  # fmt: skip
)
