"""The representation analysis of Chaturvedi et al. (section 5.2): how far an intervention
moves a QA model's hidden representations, compared between models (e.g. trained
normally, OT, vs with intervention-based training, IBT).

**Items.** The questions of a SQuAD-format, CoQA or HotpotQA file, read as the faithfulness
suite reads them (:class:`~faithprobe.datasets.qa_formats.QAReading`: CoQA with the
``history_turns`` turns before each question and their gold answers, by faithprobe's or
the method's ``coqa_rules``, the turn's rationale span), built and sampled as that suite does
(:func:`~faithprobe.interventions.deletion_variants.variant_pairs`, ``--limit`` items in its
seeded order, ``heldout_of`` keeps the documents a trained model did not see), so the inputs
are exactly the ones that suite evaluates, the question with its history before it as an
extractive model is asked: the original story (OS) and, for SQuAD and CoQA, the truncated
story (TS) and TS without the rationale sentences (TS-R, the method's Tables 7 and 8 on
CoQA); for HotpotQA the gold paragraphs without the supporting facts (OS-R, Table 9). A variant the suite drops (e.g. TS-R when the rationale begins in the first
sentence) is not compared; the drops are counted.

**Measures**, per model, item and comparison (OS vs TS, OS vs TS-R; OS vs OS-R), on the
first window of each input (:mod:`~faithprobe.representations.similarity`; a longer
context is cut and the rows say so):

* ``cls_cosine``: cosine similarity of the final-layer states of the summary token (the
  method's "CLS embedding": the first token for BERT-like encoders, the last for XLNet;
  ``pooling``, :func:`~faithprobe.representations.similarity.summary_position`; the column
  keeps its name whichever token it is);
* ``shared_token_mean``: mean cosine similarity of the final-layer states of the tokens the
  two inputs share (:mod:`~faithprobe.representations.alignment`: by character offsets in
  the copied text, same token id; question tokens too; no special tokens). Every paired
  token's cosine is kept for the histograms.

**Statistics** (:func:`summarize`): per model x comparison (those the data has) x measure
the mean over items,
the standard deviation, n and a 95% bootstrap interval of the mean resampling passages
(the questions about one paragraph are a cluster); for every pair of models on the items
both have, the later model minus the earlier one (``--model`` order: IBT - OT, as the
faithfulness suite's ``differences``): the mean difference over items with the same
interval and a two-sided Wilcoxon signed-rank test on the per-passage mean differences.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from pathlib import Path

import pandas as pd

from faithprobe.atomic import write_json, write_parquet
from faithprobe.datasets.qa_formats import QAReading
from faithprobe.datasets.splits import heldout_part
from faithprobe.errors import DataError, UsageError
from faithprobe.interventions.deletion_variants import ORIGINAL, variant_pairs
from faithprobe.metrics.intervals import clustered_mean, paired_difference
from faithprobe.options import check_among
from faithprobe.qa.questions import history_question, passage_id
from faithprobe.records import QAExample
from faithprobe.representations.alignment import shared_tokens
from faithprobe.representations.config import (
    DEFAULT_LIMIT,
    POOLINGS,
    AnalysisConfig,
    NamedEncoder,
)
from faithprobe.representations.similarity import (
    Encoder,
    Encoding,
    mean_or_nan,
    summary_cosine,
    token_cosines,
)
from faithprobe.requests import CONTEXT
from faithprobe.suite_protocol import sample_items

# variant -> the comparison it is in (SQuAD-format data has the first two, HotpotQA the third)
COMPARISONS = {"TS": "OS vs TS", "TS-R": "OS vs TS-R", "OS-R": "OS vs OS-R"}
MEASURES = {"cls_cosine": "CLS", "shared_token_mean": "shared tokens"}

# start(description, total) -> advance(k), as the run command's progress bars
ProgressFactory = Callable[[str, int], Callable[[int], None]]


@dataclass(frozen=True)
class Item:
    """One question: the original example and its intervened versions by variant."""

    original: QAExample
    variants: dict[str, QAExample]

    @property
    def id(self) -> str:
        return self.original.id

    def inputs(self) -> list[tuple[str, str]]:
        """The distinct (question, context) inputs of the item, the original first."""
        out = [(history_question(self.original), self.original.context)]
        for x in self.variants.values():
            key = (history_question(x), x.context)
            if key not in out:
                out.append(key)
        return out


@dataclass(frozen=True)
class Items:
    items: list[Item]
    drops: list[dict] = field(default_factory=list)


def read_items(
    data: Path,
    *,
    heldout_of: str = "",
    limit: int | None = DEFAULT_LIMIT,
    seed: int = 0,
    reading: QAReading | None = None,
) -> Items:
    """The sampled items of ``data`` (read by ``reading``, default the suite's defaults)
    with their TS and TS-R versions (the faithfulness suite's pairs), in item id order, and
    the variants it dropped (per variant and reason)."""
    reading = reading or QAReading()
    read = reading.read(data)
    examples = heldout_part(read, data, heldout_of) if heldout_of else read
    pairs = [p for ex in examples for p in variant_pairs(ex, splitter=reading.splitter)]
    pairs = sample_items(pairs, limit, seed)
    originals: dict[str, QAExample] = {}
    variants: dict[str, dict[str, QAExample]] = {}
    drops: Counter = Counter()
    for pair in pairs:
        x = pair.intervened
        variant = x.features.get("variant")
        originals.setdefault(pair.original.id, pair.original)
        variants.setdefault(pair.original.id, {})
        if variant == ORIGINAL or variant not in COMPARISONS:
            continue
        if reason := x.features.get("dropped"):
            drops[(variant, reason)] += 1
            continue
        variants[pair.original.id][variant] = x
    items = [Item(originals[i], variants[i]) for i in sorted(originals)]
    dropped = [{"variant": v, "reason": r, "count": c} for (v, r), c in sorted(drops.items())]
    return Items(items, dropped)


# -- per model ------------------------------------------------------------------------


def _states(
    encoder: Encoder, items: Sequence[Item], batch_size: int
) -> Iterator[tuple[Item, dict[tuple[str, str], tuple[Encoding, object]]]]:
    """Per item, in order: its inputs' encodings and final hidden states. Inputs are run
    ``batch_size`` at a time in item order; an item is yielded (and its states dropped)
    as soon as all its inputs are done, so memory holds about one batch."""
    flat = [(n, key) for n, item in enumerate(items) for key in item.inputs()]
    encodings = [encoder.encode(*key) for _, key in flat]
    last = {n: k for k, (n, _) in enumerate(flat)}  # the item's last input
    held: dict[int, dict] = {}
    n_done = 0
    for start in range(0, len(flat), batch_size):
        stop = min(start + batch_size, len(flat))
        states = encoder.hidden_states(encodings[start:stop])
        for k, h in zip(range(start, stop), states, strict=True):
            n, key = flat[k]
            held.setdefault(n, {})[key] = (encodings[k], h)
        while n_done < len(items) and last[n_done] < stop:
            yield items[n_done], held.pop(n_done)
            n_done += 1


def _compare(
    model: str, item: Item, states: dict, summary: str = "first"
) -> tuple[list[dict], list[dict]]:
    """The similarity rows and paired-token rows of one item (``summary``: where the
    model's summary token is, ``first`` or ``last``)."""
    o = item.original
    o_enc, o_h = states[(history_question(o), o.context)]
    rows, tokens = [], []
    for variant, x in item.variants.items():
        x_enc, x_h = states[(history_question(x), x.context)]
        pairs = shared_tokens(o_enc.offsets, o_enc.ids, x_enc.offsets, x_enc.ids,
                              x.features["copied"])  # fmt: skip
        cos = token_cosines(o_h, x_h, pairs)
        in_context = [o_enc.offsets[i][0] == CONTEXT for i, _ in pairs]
        comparison = COMPARISONS[variant]
        rows.append(
            {
                "model": model,
                "item_id": o.id,
                "passage_id": passage_id(o),
                "comparison": comparison,
                "variant": variant,
                "intervened_id": x.id,
                "cls_cosine": summary_cosine(o_h, x_h, summary),
                "shared_token_mean": mean_or_nan(cos),
                "n_shared_tokens": len(pairs),
                "n_shared_context_tokens": int(sum(in_context)),
                "n_tokens_original": len(o_enc),
                "n_tokens_intervened": len(x_enc),
                "n_context_tokens_original": o_enc.n_context,
                "n_context_tokens_intervened": x_enc.n_context,
                "truncated_original": o_enc.truncated,
                "truncated_intervened": x_enc.truncated,
                "same_text": x.context == o.context,
            }
        )
        for (i, j), c, ctx in zip(pairs, cos, in_context, strict=True):
            tokens.append(
                {
                    "model": model,
                    "item_id": o.id,
                    "comparison": comparison,
                    "segment": "context" if ctx else "question",
                    "position_original": i,
                    "position_intervened": j,
                    "token_id": o_enc.ids[i],
                    "cosine": float(c),
                }
            )
    return rows, tokens


def model_similarities(
    encoder: Encoder,
    items: Sequence[Item],
    *,
    batch_size: int = 16,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[dict], list[dict], int]:
    """(similarity rows, paired-token rows, items whose original or a variant was cut)."""
    if batch_size < 1:
        raise UsageError(f"batch size must be 1 or more, got {batch_size}")
    rows, tokens, cut = [], [], 0
    for item, states in _states(encoder, items, batch_size):
        r, t = _compare(encoder.name, item, states, encoder.summary)
        rows += r
        tokens += t
        cut += any(enc.truncated for enc, _ in states.values())
        if progress:
            progress(1)
    return rows, tokens, cut


SIMILARITY_COLUMNS = [
    "model", "item_id", "passage_id", "comparison", "variant", "intervened_id", "cls_cosine",
    "shared_token_mean", "n_shared_tokens", "n_shared_context_tokens", "n_tokens_original",
    "n_tokens_intervened", "n_context_tokens_original", "n_context_tokens_intervened",
    "truncated_original", "truncated_intervened", "same_text",
]  # fmt: skip
TOKEN_COLUMNS = [
    "model", "item_id", "comparison", "segment", "position_original", "position_intervened",
    "token_id", "cosine",
]  # fmt: skip


def frames(rows: list[dict], tokens: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The similarity table and the compact paired-token table (categories, int32,
    float32 cosines)."""
    sims = pd.DataFrame(rows, columns=SIMILARITY_COLUMNS)
    toks = pd.DataFrame(tokens, columns=TOKEN_COLUMNS)
    for col in ("model", "item_id", "comparison", "segment"):
        toks[col] = toks[col].astype("category")
    for col in ("position_original", "position_intervened", "token_id"):
        toks[col] = toks[col].astype("int32")
    toks["cosine"] = toks["cosine"].astype("float32")
    return sims, toks


# -- statistics -----------------------------------------------------------------------


def _estimate(values: pd.Series, clusters: pd.Series, seed: int) -> dict:
    e = clustered_mean(values.to_numpy(), clusters.to_numpy(), seed=seed)
    return {
        "mean": e.value,
        "std": float(values.std(ddof=1)) if len(values) > 1 else float("nan"),
        "n": e.n,
        "n_passages": e.n_clusters,
        "ci_low": e.ci_low,
        "ci_high": e.ci_high,
        "method": e.method.replace("base items", "passages"),
    }


def _difference(a: pd.DataFrame, b: pd.DataFrame, measure: str, seed: int) -> dict:
    """Model A - model B on the items both have a value for."""
    joined = a.merge(b, on=["item_id", "passage_id"], suffixes=("_a", "_b"))
    joined = joined.dropna(subset=[f"{measure}_a", f"{measure}_b"])
    diff = joined[f"{measure}_a"] - joined[f"{measure}_b"]
    est = _estimate(diff, joined["passage_id"], seed)
    by_passage = joined.groupby("passage_id")
    test = paired_difference(
        by_passage[f"{measure}_a"].mean(), by_passage[f"{measure}_b"].mean(), seed=seed
    )
    return {
        "difference": est["mean"],
        "ci_low": est["ci_low"],
        "ci_high": est["ci_high"],
        "n": est["n"],
        "n_passages": est["n_passages"],
        "test": "Wilcoxon signed-rank over per-passage mean differences (two-sided)",
        "statistic": test["statistic"],
        "p_value": test["p_value"],
        "method": est["method"],
    }


def compared(sims: pd.DataFrame) -> list[str]:
    """The comparisons ``sims`` has rows of, in :data:`COMPARISONS` order."""
    present = set(sims["comparison"])
    return [c for c in COMPARISONS.values() if c in present]


def summarize(sims: pd.DataFrame, models: Sequence[str], seed: int = 0) -> dict:
    """``estimates`` (model x comparison x measure) and ``differences`` (every model minus
    each earlier one), for the comparisons the data has."""
    estimates, differences = [], []
    for model in models:
        for comparison in compared(sims):
            rows = sims[(sims["model"] == model) & (sims["comparison"] == comparison)]
            for measure in MEASURES:
                ok = rows[rows[measure].notna()]
                estimates.append(
                    {
                        "model": model,
                        "comparison": comparison,
                        "measure": measure,
                        **_estimate(ok[measure], ok["passage_id"], seed),
                    }
                )
    keys = ["item_id", "passage_id"]
    for a, b in combinations(models, 2):
        for comparison in compared(sims):
            of = sims[sims["comparison"] == comparison]
            for measure in MEASURES:
                later = of[of["model"] == b][[*keys, measure]]
                earlier = of[of["model"] == a][[*keys, measure]]
                differences.append(
                    {
                        "model": b,
                        "reference": a,
                        "comparison": comparison,
                        "measure": measure,
                        **_difference(later, earlier, measure, seed),
                    }
                )
    return {"estimates": estimates, "differences": differences}


# -- the whole analysis ---------------------------------------------------------------


@dataclass(frozen=True)
class Analysis:
    similarities: pd.DataFrame
    tokens: pd.DataFrame
    metrics: dict


def analyze(
    config: AnalysisConfig,
    *,
    progress: ProgressFactory | None = None,
    load: Callable[[NamedEncoder, int], Encoder] | None = None,
) -> Analysis:
    """Read the items, run every model on them and summarise (nothing is written).
    ``load(spec, max_length)`` loads a model (default :meth:`Encoder.load`)."""
    if config.batch_size < 1:
        raise UsageError(f"--batch-size must be 1 or more, got {config.batch_size}")
    if config.limit is not None and config.limit < 1:
        raise UsageError(f"--limit must be 1 or more, got {config.limit}")
    check_among(config.pooling, POOLINGS, f"--pooling {config.pooling!r}")
    data = Path(config.data)
    if not data.is_file():
        raise DataError(data, "no such data file")
    load = load or (lambda spec, n: Encoder.load(spec.name, spec.path, n, config.pooling))
    reading = QAReading(history_turns=config.history_turns, coqa_rules=config.coqa_rules)
    read = read_items(
        data, heldout_of=config.heldout_of, limit=config.limit, seed=config.seed, reading=reading
    )
    if not read.items:
        raise UsageError(f"{data}: no items to analyse (after heldout_of and --limit)")
    rows, tokens, models = [], [], []
    for spec in config.models:
        encoder = load(spec, config.max_length)
        advance = progress(spec.name, len(read.items)) if progress else None
        r, t, cut = model_similarities(
            encoder, read.items, batch_size=config.batch_size, progress=advance
        )
        rows += r
        tokens += t
        models.append(
            {
                "name": spec.name,
                "path": spec.path,
                "max_length": encoder.max_length,
                "token_type_ids": encoder.token_types,
                "summary_token": encoder.summary,
                "items_truncated": cut,
            }
        )
        del encoder
    sims, toks = frames(rows, tokens)
    names = [m["name"] for m in models]
    metrics = {
        "analysis": "representations",
        "options": {
            **asdict(config),
            "models": [asdict(m) for m in config.models],
            "data": str(data),
        },
        "window": "first window only: contexts longer than max_length tokens are cut",
        "models": models,
        "sizes": _sizes(read, sims),
        "drops": read.drops,
        **summarize(sims, names, config.seed),
    }
    return Analysis(sims, toks, metrics)


def _sizes(read: Items, sims: pd.DataFrame) -> dict:
    per_item = sims.drop_duplicates(["item_id", "comparison"])
    per_comparison = per_item.groupby("comparison").size()
    return {
        "items": len(read.items),
        "passages": len({passage_id(i.original) for i in read.items}),
        "compared": {c: int(per_comparison.get(c, 0)) for c in compared(sims)},
        "same_text": {
            c: int(per_item[per_item["comparison"] == c]["same_text"].sum()) for c in compared(sims)
        },
    }


def write_outputs(analysis: Analysis, out: Path) -> dict[str, Path]:
    """``similarities.parquet``, ``token_similarities.parquet`` and ``metrics.json`` in
    ``out``, each written whole or not at all (temporary file, then renamed)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "similarities": out / "similarities.parquet",
        "tokens": out / "token_similarities.parquet",
        "metrics": out / "metrics.json",
    }
    write_parquet(paths["similarities"], analysis.similarities)
    write_parquet(paths["tokens"], analysis.tokens)
    write_json(paths["metrics"], analysis.metrics)
    return paths
