"""Hidden-state similarity analyses: how far an intervention moves a model's internal
representations, compared between models (Chaturvedi et al., section 5.2: a QA model
trained normally vs with intervention-based training).

* :mod:`~faithprobe.representations.alignment` -- which tokens two inputs share, by
  character offsets in the copied text (pure);
* :mod:`~faithprobe.representations.similarity` -- encoding as the extractive QA backend
  does (first window only), final-layer hidden states, cosine similarities;
* :mod:`~faithprobe.representations.analysis` -- data -> items -> per-model similarities
  -> tables (Parquet) -> metrics;
* :mod:`~faithprobe.representations.cli` -- ``faithprobe analyze representations``.

Tables and histograms are drawn by :mod:`faithprobe.representations.report`.
"""
