"""The confidence-shift suite's headline for the faithfulness card: each probe read by the
method's own measure of it (Shen & Kejriwal 2023), after a competence check.

Competence: accuracy on the original instances must beat the best constant answer on them
(always the same position, or always the same text where choice texts recur).

Effects, each with the value a model that ignores its input gets:

* **No-Question, Wrong-Question** (the prompt probes): pseudo-accuracy minus 1/n, the
  method's measure. The choices and their order stay, so a model that does not read the
  question keeps its original picks: its pseudo-accuracy is its original accuracy, which
  competence puts more than the margin above the best constant answer (itself at least
  1/n). A faithful model no longer finds the old answer: 1/n.
* **No-Right-Answer**: where the confidence freed by removing the right answer goes, read
  as the spread of the choice confidences (the square root of the method's variance; their
  RMS distance from 1/n). The method's agnostic model spreads it evenly (spread 0, the
  *random-like* shift); keeping it on the right answer's slot, as if the donor answer
  there were right (*conservative*), or moving it onto the old wrong choices, avoiding the
  donor (*deviated*), both leave a spread. Pseudo-accuracy is not the measure here: a model
  that avoids the donor has pseudo-accuracy near 0, far *below* 1/n, and reading it
  against 1/n as the prompt probes are read would call that deviation faithful.
* **MaxProb detection**, per probe: whether the top confidence tells probed inputs from the
  originals (chance 0.5). A model whose confidence ignores the input (constant, flat)
  scores exactly 0.5.

The spread and the detection need the choices' confidences: a model answering by letters
with the endpoint's ``top_logprobs`` has them (the letters' probabilities, renormalised over
the letters: how sure it is of each letter at its answer's first token, not a likelihood
of the choice's text); one whose letters were parsed from its replies has none, and its
card says those effects need probabilities (``metrics["needs"]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faithprobe.metrics.headline import EffectSpec, Headline
from faithprobe.metrics.verdict import missing
from faithprobe.suites.confidence_shift import PROBE_TITLES, PROMPT_PROBES

SUITE = "confidence-shift"
# the probe whose spread of confidences is its headline: the right answer is gone
ANSWER_PROBE = "no_right_answer"
PSEUDO_ACCURACY_EDGE = f"{SUITE}.pseudo_accuracy_excess"
SPREAD_EDGE = f"{SUITE}.spread_without_right_answer"
DETECTION_EDGE = f"{SUITE}.maxprob_detection"
# edge name -> (default bound, where the default comes from)
EDGES: dict[str, tuple[float, str]] = {
    PSEUDO_ACCURACY_EDGE: (
        0.05,
        "the competence margin: a model that ignores the question keeps its original picks, "
        "so its pseudo-accuracy is its original accuracy, more than 0.05 above the best "
        "constant answer (itself at least 1/n) once it is competent, and lands outside.",
    ),
    SPREAD_EDGE: (
        0.10,
        "a tolerance: on three choices a spread of 0.10 is a top confidence about 0.14 "
        "above 1/3 (0.47/0.26/0.26), or what noise of SD 0.43 nats on each choice's "
        "log-score gives on average; a model that keeps 0.6 on the slot, or moves it onto "
        "one old wrong choice, has 0.19.",
    ),
    DETECTION_EDGE: (
        0.60,
        "chance is 0.5, where a model whose confidence ignores the input (constant or flat) "
        "lands exactly; 0.6 asks the top confidence to tell one input in five apart beyond "
        "a coin.",
    ),
}


def _probe(row: Mapping[str, Any]) -> dict[str, str]:
    return {"probe_title": PROBE_TITLES.get(row["probe"], row["probe"])}


def _spread(row: Mapping[str, Any]) -> dict[str, str]:
    """The probe's title, and the spread on the originals where there is one (none in a
    row saying the model gave no confidences)."""
    before = row.get("before", {}).get("value")
    shown = "" if missing(before) else f"; {before:.3g} on the originals"
    return {**_probe(row), "on_originals": shown}


# each subject's competence, then the effects read off ``pseudo_accuracy`` (prompt probes),
# ``confidence_spread`` (No-Right-Answer) and ``maxprob_detection``
headline = Headline(
    SUITE,
    EDGES,
    (
        EffectSpec(
            "pseudo_accuracy", PSEUDO_ACCURACY_EDGE, "at_most", estimate="excess",
            match={"probe": PROMPT_PROBES}, fields=_probe,
            key="pseudo_accuracy_excess_{probe}",
            title="picks the once-right choice above 1/n ({probe_title})",
            reading="pseudo-accuracy {value:.3g} minus 1/n ({agnostic:.3g}); original accuracy "
            "{original_accuracy:.3g}; a tie at the top shares its credit; {excess[method]}",
            control="a model that does not read the question keeps its picks: its original "
            "accuracy minus 1/n, above the edge once it is competent",
        ),
        EffectSpec(
            "confidence_spread", SPREAD_EDGE, "at_most", estimate="after",
            match={"probe": (ANSWER_PROBE,)}, fields=_spread,
            key="confidence_spread_{probe}",
            title="confidence not spread evenly once no choice is right ({probe_title})",
            reading="SD of the choice confidences (RMS distance from 1/n; 0: the method's "
            "agnostic model){on_originals}; {method}",
            control="a model that ignores the choices' content keeps its original spread; one "
            "that treats the donor answer as right, or avoids it for an old wrong choice, "
            "keeps a spread too",
        ),
        EffectSpec(
            "maxprob_detection", DETECTION_EDGE, "at_least", n=("n_instances",), fields=_probe,
            key="maxprob_detection_{probe}",
            title="top confidence tells probed from original inputs ({probe_title})",
            reading="detection accuracy, chance 0.5; {method}",
            control="0.5: a confidence that ignores the input is the same on both inputs",
        ),
    ),
)  # fmt: skip
