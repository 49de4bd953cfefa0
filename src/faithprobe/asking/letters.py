"""How a model that cannot score candidates is asked to choose among them: by letter.

The candidate-scoring suites (``distractors``: the cloze candidates; ``natural-logic``: the
NLI labels; ``confidence-shift``: the choices) ask a model that can only write -- a
chat-only endpoint, or any model run with ``-o answer=letter`` -- the same question with its
options listed as ``A. …``, ``B. …`` (:class:`~faithprobe.multiple_choice_prompts.LetterPrompt`), and read
the answer back the same way:

* **the choice** is the option the reply names (:meth:`LetterPrompt.parse
  <faithprobe.multiple_choice_prompts.LetterPrompt.parse>`: its letter, or an option's text); a reply
  naming none (a refusal, "it depends", an empty reply) is *no answer*: counted and
  reported as such, never guessed;
* **the probabilities**, where the model answers letter-choice requests (an endpoint's chat
  completions with ``top_logprobs``, :class:`~faithprobe.requests.LetterChoiceRequest`):
  each letter's probability at the reply's first token (white space and an opening bracket
  skipped), renormalised over the letters; a letter outside the endpoint's top k counts
  as 0, and ``letter_mass`` keeps the share of that token's probability the letters held.
  They are the option probabilities that the effects needing probabilities are computed
  from (a confidence spread, a relative probability, p(entailment)); the choice stays the
  one the reply names. A model asked by plain generation (a local model with
  ``answer=letter``), or an endpoint giving no alternatives, has none: those effects say
  they need probabilities.

Each subject's rows say how it answered (``answer_mode``, :data:`SCORES`,
:data:`LETTER_PROBABILITIES` or :data:`LETTER_REPLIES`; :func:`answer_mode` decides it
per subject from its answers), and the card shows it (:mod:`faithprobe.metrics.
answer_modes`). Light to import (the suites' options read :data:`ANSWER_MODES`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from faithprobe.multiple_choice_prompts import LETTERS, LetterPrompt
from faithprobe.requests import (
    CandidateScoreRequest,
    Generation,
    GenerationRequest,
    LetterChoice,
    LetterChoiceRequest,
    TextPairRequest,
)

# the ``answer`` option of every candidate-scoring suite
ANSWER_MODES = ("auto", "scores", "letter")
ANSWER_HELP = (
    "'scores' (the options' log-likelihoods or class scores), 'letter' (the options listed "
    "A, B, …; the model names one; replies naming none counted) or 'auto' (letters only for "
    "models that cannot score)"
)
# how a subject answered, in its rows' ``answer_mode`` column
SCORES = "scores"
LETTER_PROBABILITIES = "letter-probabilities"  # letters, with their top_logprobs
LETTER_REPLIES = "letter-replies"  # letters parsed from replies, no probabilities
LETTER_KINDS = frozenset({LetterChoiceRequest.kind, GenerationRequest.kind})
MAX_NEW_TOKENS = 8  # a letter, perhaps with the option's text after it


@dataclass(frozen=True)
class LetterRead:
    """One letter answer read back: the reply, the chosen option's index (None: no
    answer), the options' probabilities (None where the answer gave none) and the share
    of the answer token's probability the letters held (NaN without probabilities)."""

    reply: str
    choice: int | None
    probabilities: tuple[float, ...] | None
    letter_mass: float

    @property
    def abstained(self) -> bool:
        return self.choice is None

    def logprobs(self) -> list[float] | None:
        """The options' log-probabilities, NaN for an option given no probability (outside
        the endpoint's top k); None without probabilities."""
        if self.probabilities is None:
            return None
        return [math.log(p) if p > 0 else math.nan for p in self.probabilities]


def letter_probabilities(answer: LetterChoice) -> tuple[tuple[float, ...] | None, float]:
    """The letters' probabilities renormalised over the letters (absent ones 0), and the
    share of the token's probability they hold; (None, NaN) without any letter's."""
    if answer.logprobs is None or all(v is None for v in answer.logprobs):
        return None, math.nan
    p = [0.0 if v is None else math.exp(v) for v in answer.logprobs]
    mass = sum(p)
    return tuple(x / mass for x in p), mass


def answer_mode(answers: Iterable[object]) -> str:
    """How a subject answered, from its answers to one suite: :data:`SCORES` unless they
    are letter answers; then :data:`LETTER_PROBABILITIES` if any came with the letters'
    log-probabilities (an endpoint giving ``top_logprobs``), else :data:`LETTER_REPLIES`."""
    letters = [a for a in answers if isinstance(a, Generation | LetterChoice)]
    if not letters:
        return SCORES
    given = any(isinstance(a, LetterChoice) and a.logprobs is not None for a in letters)
    return LETTER_PROBABILITIES if given else LETTER_REPLIES


def reply_columns(mode: str, original: Mapping, intervened: Mapping) -> dict:
    """The columns of a pair's row that say how it was answered: the subject's answer
    ``mode`` (:func:`answer_mode`), then the ``reply`` and whether it ``abstained`` on the
    original and on the intervened input, from each side's reading (a scoring answer's:
    None and False)."""
    return {
        "answer_mode": mode,
        "original_reply": original["reply"],
        "reply": intervened["reply"],
        "original_abstained": original["abstained"],
        "abstained": intervened["abstained"],
    }


@dataclass(frozen=True)
class LetterAsker:
    """Asks a question's options by letter (``prompt`` renders them), when ``answer``
    (a suite's option: auto, scores or letter) says so, and reads the answers back."""

    prompt: LetterPrompt
    answer: str = "auto"
    max_new_tokens: int = MAX_NEW_TOKENS

    def by_letter(self, subject, scoring: Collection[str]) -> bool:
        """Whether ``subject`` is asked by letter rather than by the request kinds
        ``scoring`` (what the suite asks a scoring model): as ``answer`` says, and with
        ``auto`` when it answers none of them but can write (letter-choice or generation
        requests). ``subject`` None (a suite asked without one) scores."""
        if self.answer != "auto":
            return self.answer == "letter"
        accepts = subject.accepts if subject is not None else frozenset(scoring)
        return not set(scoring) & accepts and bool(LETTER_KINDS & accepts)

    def request(
        self,
        question: str,
        options: tuple[str, ...],
        subject=None,
        scoring: CandidateScoreRequest | TextPairRequest | None = None,
    ) -> LetterChoiceRequest | GenerationRequest:
        """``question`` with ``options`` by letter: a letter-choice request (carrying
        ``scoring``, the same question for a subject that answers it by scoring) for a
        subject that answers those, else a chat generation request."""
        prompt = self.prompt.render(question, options)
        if subject is not None and LetterChoiceRequest.kind in subject.accepts:
            letters = LETTERS[: len(options)]
            return LetterChoiceRequest(
                prompt, letters, self.max_new_tokens, ("\n",), scoring=scoring
            )
        return GenerationRequest(prompt, self.max_new_tokens, ("\n",), chat=True)

    def read(self, answer: Generation | LetterChoice, options: tuple[str, ...]) -> LetterRead:
        """The choice the reply names and, for a letter-choice answer, the letters'
        probabilities (module docstring)."""
        choice = self.prompt.parse(answer.text, options)
        probabilities, mass = (None, math.nan)
        if isinstance(answer, LetterChoice):
            probabilities, mass = letter_probabilities(answer)
        return LetterRead(answer.text, choice, probabilities, mass)
