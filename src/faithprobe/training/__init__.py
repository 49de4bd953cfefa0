"""Training recipes: fine-tune task heads on the embedded encoder (or any local one) so
that the suites have small task models to probe.

``faithprobe train mc`` (:func:`train_mc`) trains a multiple-choice classifier that the
``hf-mc`` backend loads; ``faithprobe train nli`` (:func:`train_nli`) a two-class NLI
classifier that the ``hf-nli`` backend loads. What they share is in
:mod:`faithprobe.training.common`.
"""

from faithprobe.training.multiple_choice import DEFAULT_LIMIT, MCTrainConfig, train_mc
from faithprobe.training.nli import NLITrainConfig, train_nli

__all__ = ["DEFAULT_LIMIT", "MCTrainConfig", "NLITrainConfig", "train_mc", "train_nli"]
