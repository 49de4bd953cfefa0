"""Dataset loaders: files on disk -> examples. Each names the file, record and field of
any problem it finds."""

from faithprobe.datasets.cloze_jsonl import read_cloze_jsonl, write_cloze_jsonl

LOADERS = {
    "cloze-jsonl": (
        "cloze items as JSON lines (id, context, target, candidates, suffix, features)",
        read_cloze_jsonl,
    ),
}

__all__ = ["LOADERS", "read_cloze_jsonl", "write_cloze_jsonl"]
