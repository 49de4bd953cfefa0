"""How a multiple-choice instance is put to a model, shared by every backend, the training
recipe and the benchmarks so that all of them see the same text.

An instance's ``features["frame"]`` says how its community scores it (see
:mod:`faithprobe.datasets.multiple_choice`), and :data:`FRAMES` gives the template of each:

* ``question`` follows the lm-evaluation-harness convention for Social IQA: the context is
  ``"Q: <prompt>\\nA:"`` and each choice is scored as ``" " + choice`` after it;
* ``continuation`` (HellaSwag and other sentence-completion sets) is the prompt alone, each
  choice scored as ``" " + choice`` right after it, as lm-eval scores HellaSwag.

A probe that removes the question empties ``<prompt>``; the frame stays, as the [CLS]/[SEP]
frame stays for an encoder.
"""

from __future__ import annotations

from dataclasses import dataclass

from faithprobe.errors import UsageError

DEFAULT_TEMPLATE = "Q: {prompt}\nA:"
QUESTION, CONTINUATION = "question", "continuation"  # an instance's features["frame"]
FRAMES = {QUESTION: DEFAULT_TEMPLATE, CONTINUATION: "{prompt}"}


def command_line_template(text: str) -> str:
    """A template as typed on the command line: a literal backslash-n is a newline (shells
    pass ``-o template='Q: {prompt}\\nA:'`` with the two characters)."""
    return text.replace("\\n", "\n")


@dataclass(frozen=True)
class ChoicePrompt:
    template: str = DEFAULT_TEMPLATE

    def __post_init__(self) -> None:
        if "{prompt}" not in self.template:
            raise UsageError(f"prompt template {self.template!r} has no {{prompt}} slot")

    def render(self, prompt: str) -> str:
        return self.template.replace("{prompt}", prompt)


LETTER_TEMPLATE = (
    "Question: {prompt}\n{choices}\nAnswer with the letter of the correct choice ({letters}) only."
)
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class LetterPrompt:
    """Multiple choice for a model that can only write (a chat-only endpoint): the choices
    are listed as ``A. …``, ``B. …`` and the model is asked for a letter
    (:data:`LETTER_TEMPLATE`); :meth:`parse` reads the letter back, or None when the reply
    names none -- an abstention, which the confidence-shift method counts."""

    template: str = LETTER_TEMPLATE

    def render(self, prompt: str, choices: tuple[str, ...]) -> str:
        if not 1 <= len(choices) <= len(LETTERS):
            raise UsageError(f"{len(choices)} choices: between 1 and {len(LETTERS)} supported")
        letters = LETTERS[: len(choices)]
        listed = "\n".join(f"{letter}. {c}" for letter, c in zip(letters, choices, strict=True))
        named = ", ".join(letters[:-1]) + (" or " if len(letters) > 1 else "") + letters[-1]
        return (
            self.template.replace("{prompt}", prompt)
            .replace("{choices}", listed)
            .replace("{letters}", named)
        )

    @staticmethod
    def parse(reply: str, choices: tuple[str, ...]) -> int | None:
        """The chosen index: the reply is a letter ("B", "(B)"), starts with one and
        punctuation ("B. …", "B)"), or names one after "answer"/"choice"/"option"
        ("Answer: B", "the answer is B"); else the reply is one choice's text; else exactly
        one valid capital letter stands alone in it ("A" and "I" are words, so not counted
        there). None otherwise."""
        import re

        valid = LETTERS[: len(choices)]
        text = reply.strip()
        patterns = (
            rf"^\W*([{valid}])\W*$",
            rf"^\(?([{valid}])[).:]",
            rf"(?i:answer|choice|option)(?:\s+is)?\s*[:\-]?\s*\(?([{valid}])(?![A-Za-z])",
        )
        for pattern in patterns:
            if found := re.search(pattern, text):
                return valid.index(found.group(1))
        bare = text.rstrip(".").strip().lower()
        by_text = [i for i, c in enumerate(choices) if c.strip().rstrip(".").lower() == bare]
        if len(by_text) == 1:
            return by_text[0]
        alone = set(re.findall(rf"(?<![A-Za-z])([{valid}])(?![A-Za-z'])", text))
        alone -= {"A", "I"}
        if len(alone) == 1:
            return valid.index(alone.pop())
        return None
