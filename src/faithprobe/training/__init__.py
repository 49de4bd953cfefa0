"""Training recipes: fine-tune task heads on the embedded encoder (or any local one) so
that the suites have small task models to probe.

``faithprobe train mc`` (:func:`~faithprobe.training.multiple_choice.train_mc`) trains a
multiple-choice classifier that the ``hf-mc`` backend loads; ``faithprobe train nli``
(:func:`~faithprobe.training.nli.train_nli`) a two-class NLI classifier that the ``hf-nli``
backend loads; ``faithprobe train qa`` (:func:`~faithprobe.training.extractive_qa.train_qa`) an
extractive QA model that the ``hf-qa`` backend loads. Their configs are in
:mod:`faithprobe.training.configs`; what they share in :mod:`faithprobe.training.common`.
"""
