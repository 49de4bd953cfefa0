"""Synthetic datasets the project authors itself."""

from faithprobe.generators.distractors import DistractorConfig, generate

GENERATORS = {
    "distractors": (
        "cloze items with B-type, T-type and unrelated attractors (Pandia & Ettinger 2021)",
        generate,
    ),
}

__all__ = ["GENERATORS", "DistractorConfig", "generate"]
