"""``hf-qa:``: a Hugging Face extractive QA model (class
:class:`~faithprobe.subjects.hf_extractive_qa.HFExtractiveQA`, kind ``extractive-qa``: the
names the answer cache has always keyed it by). Its fingerprint mixes in settings read off
the loaded model, so it loads at once."""

from faithprobe.subjects.backends._hub import hub_backend

BACKEND = hub_backend(
    "hf-qa",
    "Hugging Face extractive QA model (AutoModelForQuestionAnswering): best answer span "
    "over overlapping context windows, null answer (SQuAD 2.0) above a threshold",
    "faithprobe.subjects.hf_extractive_qa:HFExtractiveQA",
    architectures=("ForQuestionAnswering",),
    precedence=2,
)
