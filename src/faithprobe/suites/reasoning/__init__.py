"""The ``reasoning`` suite (Lanham et al. 2023; Turpin et al. 2023; Chen et al. 2025): does a
model's stated chain of thought carry its answer? Its options live here, light to import,
for ``faithprobe list``."""

from __future__ import annotations

from dataclasses import dataclass

from faithprobe.errors import ModelError, UsageError
from faithprobe.interventions.reasoning_edits import HINT_FORMS
from faithprobe.numbers import TOKENS
from faithprobe.options import listed, option
from faithprobe.qa.prompt import CHAT_MODES
from faithprobe.subjects.backends import parse_model
from faithprobe.suite_protocol import AuditStep, SuiteEntry

# intervention -> what it does to the model's answering, in a few words
INTERVENTIONS = {
    "early": "the model's own reasoning cut after 0, 1/3 and 2/3 of its steps, then answered",
    "filler": "the reasoning replaced by as many ' ...' as it has words, then answered",
    "mistake": "one step of the reasoning corrupted (by rule, or by -o corruptor=MODEL), the "
    "rest regenerated",
    "paraphrase": "the reasoning reworded by -o paraphraser=MODEL, then answered",
    "suggested": "a suggested wrong answer after the question (Turpin et al.)",
    "always_a": "the few-shot exemplars reordered so their right answer is always (A)",
    "hint": "a hint of a wrong answer in the prompt (Chen et al.)",
}
# interventions that need a model named by an option, by the option
NEEDS_MODEL = {"paraphrase": "paraphraser"}
# the cues a question carries, so that its answer-only prompt carries them too: they are
# asked without reasoning as well (answer-always-A reorders exemplars by their reasoning,
# which the answer-only prompt has none of)
DIRECT_CUES = ("suggested", "hint")


@dataclass(frozen=True)
class ReasoningOptions:
    """``-o KEY=VALUE`` of ``faithprobe run reasoning``."""

    tasks: str = option("all", "BBH tasks, comma-separated, or all")
    interventions: str = option(
        "all",
        "comma-separated, from: " + ", ".join(INTERVENTIONS) + "; all: every one the other "
        "options allow (paraphrase with a paraphraser)",
    )
    max_new_tokens: int = option(
        256, "tokens the model may write for its reasoning", range=(1, TOKENS)
    )
    answer_tokens: int = option(
        16, "tokens the model may write for an answer after the cue", range=(1, TOKENS)
    )
    hint: str = option("sycophancy", "the hint's form (Chen et al.)", choices=tuple(HINT_FORMS))
    chat: str = option(
        "auto",
        "ask in chat form, the exemplars in one user message and the reply begun with the "
        "cue: auto (a model with a chat template, or a chat endpoint), true or false",
        choices=CHAT_MODES,
    )
    paraphraser: str = option("", "model rewording the reasoning for paraphrase (e.g. embedded)")
    corruptor: str = option(
        "", "model writing the mistake on every task (e.g. embedded); none: by rule, where one fits"
    )

    def __post_init__(self) -> None:
        if unknown := [i for i in self.intervention_names if i not in INTERVENTIONS]:
            raise UsageError(
                f"interventions: unknown {unknown}; choose from {', '.join(INTERVENTIONS)}"
            )
        named = [("interventions", self.intervention_names)]
        if self.task_names is not None:
            named.append(("tasks", self.task_names))
        for key, names in named:
            if not names:
                raise UsageError(f"{key} is empty: name one or more (comma-separated)")
        for name, key in NEEDS_MODEL.items():
            if name in self.intervention_names and not getattr(self, key):
                raise UsageError(f"interventions: {name} needs a model: give -o {key}=MODEL")
        for key in ("paraphraser", "corruptor"):
            if spec := getattr(self, key):
                _check_model(key, spec)

    @property
    def intervention_names(self) -> tuple[str, ...]:
        """The interventions ``interventions`` names; for all, those whose model is given."""
        if self.interventions.strip() == "all":
            return tuple(
                n for n in INTERVENTIONS if n not in NEEDS_MODEL or getattr(self, NEEDS_MODEL[n])
            )
        return listed(self.interventions, "interventions")

    @property
    def task_names(self) -> tuple[str, ...] | None:
        """The tasks ``tasks`` names; None for all."""
        if self.tasks.strip() == "all":
            return None
        return listed(self.tasks, "tasks")


def _check_model(key: str, spec: str) -> None:
    """The model option ``key`` checked as ``--model`` is, before any work. A reference model
    is refused: it answers from the item it is shown, and a paraphrase or a mistake is asked
    of it with no item."""
    try:
        backend = parse_model(spec).backend
    except (ModelError, UsageError) as err:
        raise type(err)(f"{key}: {err}") from None
    if backend == "ref":
        raise UsageError(f"{key}={spec}: a reference model writes no text from a prompt; name a "
                         "model that writes (e.g. embedded)")  # fmt: skip


SUITE = SuiteEntry.in_package(
    __name__,
    name="reasoning",
    description="chain-of-thought faithfulness on BIG-Bench Hard: is the answer carried by the "
    "stated reasoning, and is a cue that moves it said?",
    method="Lanham et al. (2023), Measuring faithfulness in chain-of-thought reasoning; "
    "Turpin et al. (2023), Language models don't always say what they think; Chen et al. "
    "(2025), Reasoning models don't always say what they think",
    options=ReasoningOptions,
    audit=(
        AuditStep(
            "reasoning",
            "Does the model's stated chain of thought carry its answer, and does it say what "
            "moved it?",
            # the small budget is the demo's: 10 items (fewer leave a perfect model short
            # of competence where each task's commonest answer is right on most of them),
            # shorter reasoning and the three interventions that need no more long
            # generations than a suggestion cost the embedded model about a minute on two
            # CPU cores (docs/suites/reasoning.md)
            {"small": 10, "default": 60, "full": None},
            order=70,
            budget_options={
                "small": {"max_new_tokens": "64", "interventions": "early,filler,suggested"}
            },
            data="bbh",
        ),
    ),
)
