"""How a multiple-choice instance is put to a model, shared by every backend, the training
recipe and the benchmarks so that all of them see the same text.

The default follows the lm-evaluation-harness convention for Social IQA: the context is
``"Q: <prompt>\\nA:"`` and each choice is scored as ``" " + choice`` after it. A probe that
removes the question empties ``<prompt>``; the frame stays, as the [CLS]/[SEP] frame stays
for an encoder.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_TEMPLATE = "Q: {prompt}\nA:"


def command_line_template(text: str) -> str:
    """A template as typed on the command line: a literal backslash-n is a newline (shells
    pass ``-o template='Q: {prompt}\\nA:'`` with the two characters)."""
    return text.replace("\\n", "\n")


@dataclass(frozen=True)
class ChoicePrompt:
    template: str = DEFAULT_TEMPLATE

    def __post_init__(self) -> None:
        if "{prompt}" not in self.template:
            raise ValueError(f"prompt template {self.template!r} has no {{prompt}} slot")

    def render(self, prompt: str) -> str:
        return self.template.replace("{prompt}", prompt)
