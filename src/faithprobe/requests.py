"""What a subject is asked, and what it answers, as small frozen records.

Every request has a ``kind`` (which backends can answer it, see ``Subject.accepts``), a
stable cache ``key`` and the ``answer`` type it gets back; every answer type round-trips
through JSON (``to_json`` / ``from_json``) so the persistent cache can store any of them.
Identical requests made by different pairs, interventions or runs share a key and are
computed once (see :mod:`faithprobe.subjects.cached_subject`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import ClassVar

from faithprobe import json_values
from faithprobe.records import NLI_LABELS


class _JSONAnswer:
    """``to_json`` / ``from_json`` for a flat dataclass of JSON-able fields (tuples come
    back as tuples).

    A field with a default (``truncated``, added after answers were first cached) is left
    out of the JSON while it holds its default and read back as the default when absent,
    so the JSON of every answer that does not use it stays byte-identical to the cached one.
    """

    def to_json(self) -> str:
        data = asdict(self)
        for f in fields(self):
            if f.default is not MISSING and data[f.name] == f.default:
                del data[f.name]
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str):
        data = read_json(text)
        return cls(**{f.name: _tuples(data[f.name]) for f in fields(cls) if f.name in data})


def read_json(text: str):
    """An answer's JSON as the cache holds it, every value checked
    (:func:`faithprobe.json_values.loads`: :class:`~faithprobe.json_values.Unfit` for a
    value faithprobe never writes there). ``json.dumps`` writes a model's NaN and a
    log-probability of what cannot happen (an extractive QA score of a context with no
    tokens, ``-inf``) as ``NaN`` and ``-Infinity``: those are taken; ``Infinity``, a number
    that overflows, an integer past 2**63 or a lone surrogate are not."""
    return json_values.loads(text, constants=ANSWER_CONSTANTS)


ANSWER_CONSTANTS = ("NaN", "-Infinity")


def _tuples(value):
    return tuple(value) if isinstance(value, list) else value


@dataclass(frozen=True)
class CandidateScores(_JSONAnswer):
    """Log-probability (natural log, summed over tokens) and token count per candidate;
    ``truncated`` when the input was cut to fit the model (see the backend's module)."""

    logprobs: tuple[float, ...]
    n_tokens: tuple[int, ...]
    truncated: bool = False


@dataclass(frozen=True)
class SpanAnswer(_JSONAnswer):
    """An extractive answer: the text of the best span and its character offsets in the
    context (``start == end == -1`` when the model's null answer wins), the best span's
    score and the null answer's score (logit sums, SQuAD 2.0 convention); ``truncated``
    when the question was cut to fit the model (the context never is: it is windowed)."""

    text: str
    start: int
    end: int
    score: float
    null_score: float
    truncated: bool = False


@dataclass(frozen=True)
class Generation(_JSONAnswer):
    """Generated text (after the stop string was cut) and how many tokens were made;
    ``truncated`` when the prompt was cut or ``max_new_tokens`` capped to fit the model."""

    text: str
    n_tokens: int
    truncated: bool = False


@dataclass(frozen=True)
class LetterChoice(_JSONAnswer):
    """A chat model's reply naming a choice by letter (cut and stripped as a
    :class:`Generation` is), and the log-probability of each letter at the reply's first
    token that is not white space or an opening bracket: None for a letter not among the
    endpoint's most likely tokens there; ``logprobs`` is None when the endpoint gave no
    alternatives (``top_logprobs``)."""

    text: str
    n_tokens: int
    logprobs: tuple[float | None, ...] | None = None
    truncated: bool = False


# Which text of a (question, context) pair a token belongs to: the tokenizer's sequence id.
# Shared by token saliency (faithprobe.subjects.hf.attribution) and the representation analysis.
QUESTION, CONTEXT = 0, 1

# A token's place in a (question, context) pair: (sequence, start, end), character offsets
# into that text; None for a special token
Offset = tuple[int, int, int] | None


@dataclass(frozen=True)
class TokenSaliency:
    """Saliency of every token of one input's first window (see
    :mod:`faithprobe.subjects.hf.attribution.base`).

    ``offsets`` per token: None for a token outside the question and the context (a special
    token; a prompt's template), else ``(sequence, start, end)`` with ``sequence``
    :data:`QUESTION` (0) or :data:`CONTEXT` (1) and character offsets into the question /
    the context (:data:`Offset`). ``target``: for an extractive QA model the token index of
    the predicted answer start, ``target_logit`` its start logit; for a causal LM
    (:class:`PromptSaliencyRequest`) the vocabulary id of the first token of its greedy
    answer, ``target_logit`` that token's log-probability. ``delta`` is Integrated
    Gradients' convergence delta (sum of attributions minus F(input) - F(baseline)); None
    for methods without one. ``summaries``: per-token saliency under each summary of the
    embedding dimensions' attributions (Integrated Gradients: ``l2``, the one
    ``saliency`` holds, ``l1`` and ``dot``; empty for Occlusion). Nested fields (the
    request, offsets, settings) need their own JSON round trip, hence ``from_json`` here."""

    request: SaliencyRequest | PromptSaliencyRequest
    tokens: tuple[str, ...]
    offsets: tuple[Offset, ...]
    saliency: tuple[float, ...]
    target: int
    target_logit: float
    method: str
    settings: dict
    truncated: bool
    delta: float | None = None
    summaries: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def spans(self, sequence: int) -> tuple[tuple[int, int] | None, ...]:
        """Per token its (start, end) in the question (``sequence=0``) or the context
        (``sequence=1``), None for tokens of the other text and special tokens: the
        ``token_offsets`` :func:`~faithprobe.saliency.words.tokens_of_words` takes."""
        return tuple(o[1:] if o is not None and o[0] == sequence else None for o in self.offsets)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> TokenSaliency:
        data = read_json(text)
        request = data["request"]
        if "prompt" in request:
            spans = {k: tuple(request[k]) for k in ("question", "context")}
            data["request"] = PromptSaliencyRequest(**{**request, **spans})
        else:
            data["request"] = SaliencyRequest(**request)
        data["summaries"] = {k: tuple(v) for k, v in data.get("summaries", {}).items()}
        data["offsets"] = tuple(None if o is None else tuple(o) for o in data["offsets"])
        data["tokens"], data["saliency"] = tuple(data["tokens"]), tuple(data["saliency"])
        return cls(**data)


def _digest(payload: list) -> str:
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode()).hexdigest()


class _Keyed:
    """A request's cache key: the fingerprint, its kind and its fields. The fields named in
    ``added`` (added after answers were first cached) are left out while they hold their
    default, so a request that does not use them keeps the key it had before they existed."""

    kind: str
    added: ClassVar[tuple[str, ...]] = ()

    def key(self, fingerprint: str) -> str:
        data = asdict(self)
        defaults = {f.name: f.default for f in fields(self)}
        for name in self.added:
            if data[name] == defaults[name]:
                del data[name]
        return _digest([fingerprint, self.kind, data])

    def reading_order(self) -> tuple[str, ...]:
        """The request's fields as text, in the order they are declared (a prompt or context
        first): sorted by this, requests that begin alike are neighbours."""
        return tuple(str(getattr(self, f.name)) for f in fields(self))


# CandidateScoreRequest.start naming the model's own start-of-text token (its BOS token, else
# its EOS token: GPT-2's <|endoftext|>), not a text
MODEL_START = "bos"


@dataclass(frozen=True)
class CandidateScoreRequest(_Keyed):
    """Score each candidate as the filler of the blank in ``context`` ___ ``suffix``.

    The filled text is ``context + " " + candidate + suffix`` (no space is added after an
    empty context or one that ends in whitespace). A causal LM scores the candidate's
    tokens after the context and cannot see ``suffix``; a masked LM sees both sides.

    The scoring rule: by default a candidate's score is the summed log-probability of all
    its tokens, after the context alone. ``first_token`` scores its first token only (the
    rule of Pandia & Ettinger 2021; a masked LM reads it at one mask in the blank);
    ``start`` comes before the context: :data:`MODEL_START` for the model's own
    start-of-text token, else a text (special-token strings such as ``<|endoftext|>`` read
    as those tokens), unless the context's tokens begin with it already. A backend where
    a rule has no meaning refuses it; a reference model ignores it. Both are left out of
    the cache key at their defaults (:class:`_Keyed`).
    """

    context: str
    candidates: tuple[str, ...]
    suffix: str = ""
    first_token: bool = False
    start: str = ""

    kind = "candidate-scores"
    answer = CandidateScores
    added = ("first_token", "start")

    @property
    def default_rule(self) -> bool:
        """Whether the request asks for the default scoring rule (whole candidate, nothing
        before the context)."""
        return not self.first_token and not self.start

    def filled(self, candidate: str) -> tuple[str, int]:
        """The text with ``candidate`` in the blank, and the candidate's start offset."""
        sep = "" if not self.context or self.context[-1].isspace() else " "
        start = len(self.context) + len(sep)
        return self.context + sep + candidate + self.suffix, start


@dataclass(frozen=True)
class TextPairRequest(_Keyed):
    """Classify the text pair (``first``, ``second``) -- for NLI, (premise, hypothesis) --
    into ``labels``.

    Answered by sequence-pair classifiers with a :class:`CandidateScores` holding one
    score per label (``n_tokens`` all 1). A classifier whose own classes are finer
    (three-class NLI) groups them into these labels (see
    :mod:`faithprobe.subjects.hf.nli`): with ``grouping="sum"`` a label's score is the
    log of its classes' summed probability; with ``"max"`` the log-probability of its most
    probable class, so the top label holds the classifier's top class (an argmax decision,
    as the natural-logic method's code decides).
    """

    first: str
    second: str
    labels: tuple[str, ...] = NLI_LABELS
    grouping: str = "sum"

    kind = "text-pair-classes"
    answer = CandidateScores
    added = ("grouping",)


@dataclass(frozen=True)
class SpanAnswerRequest(_Keyed):
    """Extract the answer to ``question`` from ``context`` (extractive QA), or say there is
    none; answered with a :class:`SpanAnswer`."""

    question: str
    context: str

    kind = "span-answer"
    answer = SpanAnswer


# What an extractive QA model's answer-kind head tells apart (CoQA's answer types): the
# answer is a span of the context, yes, no, or unknown.
ANSWER_KINDS = ("span", "yes", "no", "unknown")


@dataclass(frozen=True)
class AnswerKindRequest(_Keyed):
    """Which kind of answer does ``question`` have in ``context``: a span, yes, no or
    unknown (:data:`ANSWER_KINDS`)? Answered by an extractive QA model with an answer-kind
    head (:mod:`faithprobe.subjects.hf.answer_kind_head`) with a :class:`CandidateScores`
    holding one log-probability per kind, in :data:`ANSWER_KINDS` order (``n_tokens`` all
    1)."""

    question: str
    context: str

    kind = "answer-kind"
    answer = CandidateScores


@dataclass(frozen=True)
class GenerationRequest(_Keyed):
    """Continue ``prompt`` greedily for at most ``max_new_tokens`` tokens and cut the text
    at the first of the ``stop`` strings; answered with a :class:`Generation`.

    With ``chat`` the prompt is one user message: the subject wraps it in its chat format
    (a Hugging Face tokenizer's chat template; an endpoint's chat completions) and the
    reply is the generation. ``reply_start`` (chat only) is a reply begun for the model:
    the assistant's turn opens with it and the model goes on from it (its tokens follow the
    template's generation prompt; an endpoint is asked to continue it as the final
    message), and the generation is what the model adds after it."""

    prompt: str
    max_new_tokens: int = 32
    stop: tuple[str, ...] = ("\n",)
    chat: bool = False
    reply_start: str = ""

    kind = "generation"
    answer = Generation
    added = ("chat", "reply_start")

    def __post_init__(self) -> None:
        if self.reply_start and not self.chat:
            raise ValueError("reply_start begins a chat reply: it needs chat=True")


@dataclass(frozen=True)
class LetterChoiceRequest(_Keyed):
    """Ask a chat model for the letter of one of ``letters`` (``prompt`` lists the choices
    by letter, one user message) greedily, at most ``max_new_tokens`` tokens cut at the
    first ``stop`` string, and for the ``top_logprobs`` most likely tokens at the letter's
    position, from which each letter's log-probability is read; answered with a
    :class:`LetterChoice`.

    ``scoring`` is the same question as a scoring model is asked it (the lettered options
    as candidates or labels, in letter order), for subjects that answer a letter choice by
    scoring its options (the reference models). An endpoint is sent the prompt alone, and
    ``scoring`` is not part of the key: a request keeps the key it had before the field
    existed."""

    prompt: str
    letters: str
    max_new_tokens: int = 8
    stop: tuple[str, ...] = ("\n",)
    top_logprobs: int = 20
    scoring: CandidateScoreRequest | TextPairRequest | None = None

    kind = "letter-choice"
    answer = LetterChoice

    def key(self, fingerprint: str) -> str:
        sent = {k: v for k, v in asdict(self).items() if k != "scoring"}
        return _digest([fingerprint, self.kind, sent])


SALIENCY_METHODS = ("ig", "occlusion")
# how Integrated Gradients' per-dimension attributions become one number per token
# (faithprobe.subjects.hf.attribution.integrated_gradients); the first is TokenSaliency.saliency
IG_SUMMARIES = ("l2", "l1", "dot")


@dataclass(frozen=True)
class SaliencyRequest(_Keyed):
    """Which tokens of (question, context) does the model's predicted answer start depend
    on? Answered with a :class:`TokenSaliency` by ``method``: ``"ig"`` (Integrated
    Gradients with ``n_steps`` interpolation points) or ``"occlusion"`` (``n_steps`` is
    then unused; keep the default so equal requests share a key). Both settings are part of
    the cache key, so a changed setting is computed afresh."""

    question: str
    context: str
    method: str = "ig"
    n_steps: int = 50

    kind = "saliency"
    answer = TokenSaliency

    def __post_init__(self) -> None:
        _check_saliency(self.method, self.n_steps)


@dataclass(frozen=True)
class PromptSaliencyRequest(_Keyed):
    """Which tokens of the question and the context in ``prompt`` does a causal LM's answer
    depend on? ``question`` and ``context`` are their character spans in ``prompt``
    (:meth:`~faithprobe.qa.prompt.QAPrompt.render_with_spans`); with ``chat`` the prompt is
    one user message in the subject's chat format, as for a :class:`GenerationRequest`.
    Answered with a :class:`TokenSaliency` whose offsets are into the question and the
    context, like a :class:`SaliencyRequest`'s, by ``method`` (``"ig"`` with ``n_steps``
    or ``"occlusion"``): the attributed quantity is the log-probability of the first token
    of the model's greedy answer (:mod:`faithprobe.subjects.hf.attribution.causal`)."""

    prompt: str
    question: tuple[int, int]
    context: tuple[int, int]
    method: str = "ig"
    n_steps: int = 50
    chat: bool = False

    kind = "prompt-saliency"
    answer = TokenSaliency

    def __post_init__(self) -> None:
        _check_saliency(self.method, self.n_steps)
        for name in ("question", "context"):
            start, end = getattr(self, name)
            if not 0 <= start <= end <= len(self.prompt):
                raise ValueError(f"{name} span {(start, end)} is not within the prompt")


def _check_saliency(method: str, n_steps: int) -> None:
    if method not in SALIENCY_METHODS:
        raise ValueError(
            f"saliency method must be one of {', '.join(SALIENCY_METHODS)}, got {method!r}"
        )
    if n_steps < 1:
        raise ValueError(f"n_steps must be >= 1, got {n_steps}")


def stop_index(text: str, stop: Sequence[str]) -> int | None:
    """Where generated ``text`` is cut: the start of the first stop string that starts once
    the answer has begun (after any leading white space, so a reply opening with a newline is
    not cut before it says anything); None if there is none. Every generation backend cuts by
    this rule and then strips trailing white space."""
    lead = len(text) - len(text.lstrip())
    found = [i for i in (text.find(s, lead) for s in stop if s) if i >= 0]
    return min(found) if found else None


Request = (
    CandidateScoreRequest
    | TextPairRequest
    | SpanAnswerRequest
    | AnswerKindRequest
    | GenerationRequest
    | LetterChoiceRequest
    | SaliencyRequest
    | PromptSaliencyRequest
)
Answer = CandidateScores | SpanAnswer | Generation | LetterChoice | TokenSaliency
