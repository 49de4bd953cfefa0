"""Training recipes: fine-tune task heads on the embedded encoder (or any local one) so
that the suites have small task models to probe.

``faithprobe train mc`` (:func:`train_mc`) trains a multiple-choice classifier that the
``hf-mc`` backend loads.
"""

from faithprobe.training.multiple_choice import DEFAULT_LIMIT, MCTrainConfig, train_mc

__all__ = ["DEFAULT_LIMIT", "MCTrainConfig", "train_mc"]
