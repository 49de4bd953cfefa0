"""Dataset loaders: files on disk -> examples. Each names the file, record and field of
any problem it finds."""

from faithprobe.datasets.cloze_jsonl import read_cloze_jsonl, write_cloze_jsonl
from faithprobe.datasets.multiple_choice import (
    read_choice_jsonl,
    read_choices,
    read_hellaswag,
    read_socialiqa,
)
from faithprobe.datasets.nli import read_nli
from faithprobe.datasets.nli_xy import read_nli_xy

LOADERS = {
    "cloze-jsonl": (
        "cloze items as JSON lines (id, context, target, candidates, suffix, features)",
        read_cloze_jsonl,
    ),
    "socialiqa": (
        "Social IQA jsonl + 1-based <split>-labels.lst beside it (3 choices)",
        read_socialiqa,
    ),
    "hellaswag": ("HellaSwag original jsonl (ctx or ctx_a/ctx_b, endings, label)", read_hellaswag),
    "choice-jsonl": (
        "multiple choice as JSON lines (prompt, choices, 0-based label, id)",
        read_choice_jsonl,
    ),
    "nli-xy": (
        "NLI-XY folder: contexts.tsv x insertions.tsv (natural-logic suite)",
        read_nli_xy,
    ),
    "nli": (
        "two-class NLI: MNLI-style or HELP TSV, or JSON lines (premise, hypothesis, label)",
        read_nli,
    ),
}

__all__ = [
    "LOADERS",
    "read_choice_jsonl",
    "read_choices",
    "read_cloze_jsonl",
    "read_hellaswag",
    "read_nli",
    "read_nli_xy",
    "read_socialiqa",
    "write_cloze_jsonl",
]
