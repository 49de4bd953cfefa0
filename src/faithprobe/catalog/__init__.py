"""The data sets faithprobe reads, as a catalogue: what each is, its license, where it is
looked for, how it is fetched, and the small samples shipped inside the package.

* :mod:`~faithprobe.catalog.entries` -- one :class:`~faithprobe.catalog.entries.DataSet`
  per name ``faithprobe data fetch`` takes (files, official URLs, checksums, licenses);
* :mod:`~faithprobe.catalog.locate` -- the data folders searched (``--data-dir``,
  ``$FAITHPROBE_DATA``, the folder ``data fetch`` fills) and the shipped samples;
* :mod:`~faithprobe.catalog.fetch` -- downloads: resumable, checked, written atomically;
* :mod:`~faithprobe.catalog.cli` -- ``faithprobe data list`` and ``faithprobe data fetch``.

Every folder is laid out the same way (``squad/dev-v1.1.json``, ``socialiqa/dev.jsonl``,
``nli-xy/contexts.tsv``, ...), so a path under one is a path under any other.
"""
