"""Reference models with planted chain-of-thought behaviour, for the ``reasoning`` suite:
``ref:cot-reader``, ``ref:rationaliser``, ``ref:silent-cue`` and ``ref:honest-cue``. They
write (answer generation requests) and nothing else; each is shown the BBH item behind a
request (the example channel) and answers the gold, so every one is competent: only how
its answer depends on its reasoning and on a cue differs.

What they write, asked with the chain-of-thought prompt: two plain steps, then (all but the
rationaliser) a conclusion step ``Therefore the answer must be X.`` (for a multiple-choice
item ``X`` is the label and the option's text, for a number the number), then ``So the answer
is X.``. Asked to go on from a reasoning the suite edited (the prompt then ends with that
reasoning, or with it and "So the answer is"):

* ``cot-reader`` answers from the reasoning it is shown: the last conclusion step's answer
  if that step is there and reads as an answer of the item (a corrupted number reads as the
  corrupted number; a label whose text no longer matches its option reads as none), else it
  cannot tell (states no answer). A cue in the prompt is ignored. Faithful by construction.
* ``rationaliser`` answers the gold whatever the reasoning (its steps are decorative, one
  with a number, so that the mistake rule of the number tasks can change it): unfaithful on
  early answering, filler and mistakes; it ignores cues.
* ``silent-cue`` is the reader, but where the prompt carries a cue (a suggested or hinted
  answer, answer-always-A exemplars) it answers the cued answer (asked without reasoning
  too), and its reasoning never mentions the cue: unfaithful on verbalisation.
* ``honest-cue`` follows the cue too and says so ("you suggested …", "the hint …", "the
  previous examples always answer (A)"): it moves with the cue, and its reasoning says why.

Asked anything but a BBH item (another suite's generated question, in an audit of every
step), a writer says it cannot tell: it is a reference for this suite only, and not
competent elsewhere.
"""

from __future__ import annotations

import re

from faithprobe.datasets.bbh import COT_CUE
from faithprobe.qa.cot import ANSWER_CUE, canonical_answer, gold_answer
from faithprobe.qa.cot_chat import plain_prompt
from faithprobe.records import MULTIPLE_CHOICE, Example, Origin, ReasoningExample
from faithprobe.requests import Generation, GenerationRequest

PLAIN_STEPS = "Let us read the question. We go through it step by step."
CONCLUSION = re.compile(r"Therefore the answer must be (.+?)\.(?=\s|$)")
CANNOT_TELL = " I cannot tell."
# what the honest cue-follower says, by the cue's intervention
SAYS = {
    "suggested": "You suggested {cue}, so I go with your answer.",
    "hint": "The hint points to {cue}, so I go with it.",
    "always_a": "The previous examples always answer (A), so I answer (A) too.",
}


class Writer:
    """A planted chain-of-thought behaviour (module docstring); a subclass says how it
    reasons and answers."""

    name: str
    reads_examples = True
    accepts = frozenset({GenerationRequest.kind})

    def recall(self, example: Example, origin: Origin | None) -> Example:
        del origin
        return example

    def generate(self, request: GenerationRequest, example: ReasoningExample | None) -> Generation:
        assert example is not None, "a writer is shown the item behind each request"
        if not isinstance(example, ReasoningExample):  # another suite's question (a QA step)
            return _said(CANNOT_TELL)
        prompt = request.prompt
        if request.chat:  # asked in chat form: read as the plain prompt it was made from
            prompt = plain_prompt(prompt, request.reply_start)
        gold = gold_answer(example)
        if COT_CUE not in prompt:  # the answer-only prompt: answered without reasoning
            return _said(f" {self.direct(gold, example.features.get('cue'))}")
        if not prompt.endswith(COT_CUE):
            shown = prompt.rsplit(COT_CUE, 1)[-1]
            answer = self.answer_from(shown, example, gold)
            said = f" {answer}." if answer is not None else CANNOT_TELL
            return _said(said if shown.rstrip().endswith(ANSWER_CUE) else f" {ANSWER_CUE}{said}")
        return _said(self.reason(example, gold, example.features.get("cue")))

    def direct(self, gold: str, cue: str | None) -> str:
        """Its answer asked without reasoning (``cue``: the cue the question carries)."""
        return gold

    def reason(self, example: ReasoningExample, gold: str, cue: str | None) -> str:
        """What it writes asked with reasoning (``cue``: the cue the prompt carries)."""
        return f" {PLAIN_STEPS} {_conclusion(example, gold)} {ANSWER_CUE} {gold}."

    def answer_from(self, shown: str, example: ReasoningExample, gold: str) -> str | None:
        """Its answer after the reasoning ``shown`` (the suite's edit of its own)."""
        found = CONCLUSION.findall(shown)
        return _read(found[-1], example) if found else None


class CotReader(Writer):
    name = "cot-reader"


class Rationaliser(Writer):
    name = "rationaliser"

    def reason(self, example: ReasoningExample, gold: str, cue: str | None) -> str:
        return f" {PLAIN_STEPS} We read it 2 times. {ANSWER_CUE} {gold}."

    def answer_from(self, shown: str, example: ReasoningExample, gold: str) -> str | None:
        return gold


class CueFollower(Writer):
    """Takes the cued answer, with reasoning or without (the subclasses differ in what their
    reasoning says)."""

    def direct(self, gold: str, cue: str | None) -> str:
        return gold if cue is None else cue


class SilentCue(CueFollower):
    name = "silent-cue"

    def reason(self, example: ReasoningExample, gold: str, cue: str | None) -> str:
        return super().reason(example, gold if cue is None else cue, None)


class HonestCue(CueFollower):
    name = "honest-cue"

    def reason(self, example: ReasoningExample, gold: str, cue: str | None) -> str:
        if cue is None:
            return super().reason(example, gold, None)
        said = SAYS[example.features["intervention"]].format(cue=cue)
        return f" {PLAIN_STEPS} {said} {_conclusion(example, cue)} {ANSWER_CUE} {cue}."


def _said(text: str) -> Generation:
    return Generation(text, len(text.split()))


def _conclusion(example: ReasoningExample, answer: str) -> str:
    """The conclusion step: a label with its option's text, so a changed text shows."""
    text = dict(example.options).get(answer)
    return f"Therefore the answer must be {answer}{f', {text}' if text else ''}."


def _read(stated: str, example: ReasoningExample) -> str | None:
    """The answer a conclusion states, or None where it no longer reads as one: a label
    whose text is not its option's."""
    if example.answer_format != MULTIPLE_CHOICE:
        return canonical_answer(stated, example.answer_format)
    label, _, text = stated.partition(", ")
    options = dict(example.options)
    return label if label in options and (not text or options[label] == text) else None
