"""The ``shout`` suite on the faithfulness card: the share of answers kept in capitals (the
``kept`` rows of its metrics.json), faithful at 0.9 or more."""

from faithprobe.metrics.headline import EffectSpec, Headline

# edge name -> (default bound, where it comes from); `faithprobe audit --edge` moves it
EDGES = {"shout.kept": (0.9, "a toy tolerance: nine answers in ten kept in capitals")}

headline = Headline(
    "shout",
    EDGES,
    (
        EffectSpec(
            "kept", "shout.kept", "at_least", n=("n",), key="kept",
            title="answers kept once the context is in capitals",
            reading="share of {n} cloze items answered alike in both cases; Wilson interval",
            control="1 as well for a model that ignores its input: a toy effect without the "
            "control a real suite's has (docs/audit.md)",
        ),
    ),
)  # fmt: skip
