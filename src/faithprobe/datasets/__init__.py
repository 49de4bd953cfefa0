"""Dataset loaders: files on disk -> examples. Each names the file, record and field of
any problem it finds."""

from faithprobe.datasets.cloze_jsonl import read_cloze_jsonl, write_cloze_jsonl
from faithprobe.datasets.distractor_tsv import read_released
from faithprobe.datasets.multiple_choice import (
    read_choice_jsonl,
    read_choices,
    read_hellaswag,
    read_socialiqa,
)
from faithprobe.datasets.nli import read_nli
from faithprobe.datasets.nli_xy import read_nli_xy
from faithprobe.datasets.qa_formats import read_coqa, read_hotpotqa, read_qa, read_squad
from faithprobe.registry import Registry

LOADERS: Registry = Registry("dataset loader")
for _name, _target, _text in (
    (
        "cloze-jsonl",
        read_cloze_jsonl,
        "cloze items as JSON lines (id, context, target, candidates, suffix, features)",
    ),
    (
        "distractors-release",
        read_released,
        "the distractors method's released files (Pandia & Ettinger 2021): data/combined_data, "
        "one condition folder or one file; one item per text (distractors suite)",
    ),
    (
        "socialiqa",
        read_socialiqa,
        "Social IQA jsonl + 1-based <split>-labels.lst beside it (3 choices)",
    ),
    ("hellaswag", read_hellaswag, "HellaSwag original jsonl (ctx or ctx_a/ctx_b, endings, label)"),
    (
        "choice-jsonl",
        read_choice_jsonl,
        "multiple choice as JSON lines (prompt, choices, 0-based label, id)",
    ),
    ("nli-xy", read_nli_xy, "NLI-XY folder: contexts.tsv x insertions.tsv (natural-logic suite)"),
    (
        "nli",
        read_nli,
        "two-class NLI: MNLI-style or HELP TSV, or JSON lines (premise, hypothesis, label)",
    ),
    (
        "squad",
        read_squad,
        "SQuAD v1.1/v2.0 JSON (faithfulness, right-reasons; v2.0 unanswerables as unknown)",
    ),
    ("quoref", read_squad, "Quoref JSON, SQuAD-shaped (right-reasons coreference questions)"),
    ("coqa", read_coqa, "CoQA JSON: stories, rationales, conversation history (faithfulness)"),
    (
        "hotpotqa",
        read_hotpotqa,
        "HotpotQA or 2WikiMultiHopQA JSON: paragraphs and supporting facts (faithfulness, "
        "right-reasons comparisons)",
    ),
):
    LOADERS.add(_name, _target, description=_text)

__all__ = [
    "LOADERS",
    "read_choice_jsonl",
    "read_choices",
    "read_cloze_jsonl",
    "read_hellaswag",
    "read_nli",
    "read_nli_xy",
    "read_qa",
    "read_released",
    "read_socialiqa",
    "write_cloze_jsonl",
]
