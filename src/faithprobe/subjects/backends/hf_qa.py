"""``hf-qa:``: a Hugging Face extractive QA model (:class:`~faithprobe.subjects.hf.extractive_qa.HFQA`).
Its fingerprint hashes the kind ``extractive-qa``, the name the answer cache has always keyed
it by, and mixes in settings read off the loaded model, so it loads at once."""

from faithprobe.requests import AnswerKindRequest
from faithprobe.subjects.backends._hub import hub_backend
from faithprobe.subjects.identity import HF_QA

BACKEND = hub_backend(
    "hf-qa",
    "Hugging Face extractive QA model (AutoModelForQuestionAnswering): best answer span "
    "over overlapping context windows, null answer (SQuAD 2.0) above a threshold",
    "faithprobe.subjects.hf.extractive_qa:HFQA",
    architectures=("ForQuestionAnswering",),
    precedence=2,
    identity=HF_QA,
    deferrable=False,
    answers={
        **dict.fromkeys(sorted(HF_QA.accepts), ""),
        AnswerKindRequest.kind: "with an answer-kind (yes/no/unknown) head, as "
        "faithprobe train qa --answer-kind makes",
    },
)
