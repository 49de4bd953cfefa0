"""``faithprobe audit``: every suite a model can answer, at a stated budget, one card.

:mod:`~faithprobe.audit.plan` says what runs (the steps, their data, their size per
budget); :mod:`~faithprobe.audit.execute` runs them through the runner and writes the audit
folder; :mod:`~faithprobe.audit.card_metrics` reads each step's headline effects and verdicts
into the audit's metrics.json; :mod:`~faithprobe.audit.compare` shows what changed between
two audits. The page itself is :mod:`faithprobe.audit.card_page`.
"""
