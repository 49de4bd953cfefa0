"""The catalogue: one :class:`DataSet` per name ``faithprobe data fetch`` takes.

Each data set lists the files it places under a data folder (:mod:`faithprobe.catalog.
locate`), where each comes from (the authors' official location; a member of an archive
where they release one) and, where the file is at hand on the machines faithprobe is built
on, its SHA-256; a file without one is checked by its format instead
(:mod:`faithprobe.catalog.fetch`). ``path`` is what the suites read: a file, or a folder
for NLI-XY and HELP.

Files on GitHub are fetched from the commit whose file has the SHA-256 given, so that a
later change upstream cannot turn a fetch into a checksum failure; docs/data.md says where
each file comes from and why.
"""

from __future__ import annotations

from dataclasses import dataclass

from faithprobe.errors import UsageError


@dataclass(frozen=True)
class Remote:
    """One file of a data set and where it comes from."""

    path: str  # where it lands, under the data folder
    url: str  # the official download (a file, or an archive holding it)
    sha256: str | None = None  # of the file at ``path``; None: checked by format only
    member: str | None = None  # the file's name inside the archive at ``url``
    # how it is checked without a checksum (faithprobe.catalog.fetch.FORMATS): json (an
    # object with a "data" list), json-records (a list of objects), jsonl, tsv (a header
    # naming ``columns``), labels (one integer a line)
    format: str = "json"
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class DataSet:
    name: str  # what `faithprobe data fetch` takes
    title: str  # e.g. "SQuAD 1.1 dev"
    what: str  # one line: what it holds and which suite reads it
    license: str
    attribution: str  # the authors and paper to cite
    path: str  # the file or folder the suites read, under a data folder
    files: tuple[Remote, ...]
    size: str  # the download's size, as a person says it
    homepage: str = ""


def dataset(name: str) -> DataSet:
    """The data set called ``name``; an unknown name lists the known ones."""
    for entry in CATALOGUE:
        if entry.name == name:
            return entry
    known = ", ".join(e.name for e in CATALOGUE)
    raise UsageError(f"no data set called {name!r}: choose from {known}")


def owner(path: str) -> DataSet | None:
    """The data set whose files include ``path`` (a catalogue path), if any."""
    for entry in CATALOGUE:
        if path == entry.path or any(f.path == path for f in entry.files):
            return entry
    return None


def _github(repo: str, commit: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


# NLI-XY's files live in three of the authors' repositories: the full grid in
# counterfact_nli, the challenge sets and the small splits in nli_xy, and HELP's test split
# (as NLI-XY's code reads it) in supporting_monotonicity.
_NLI_XY = "juliarozanova/nli_xy", "d6a316073a348ad0a71b424447a0858962ddd6c8"
_NLI_XY_FILES = (
    ("contexts.tsv", "juliarozanova/counterfact_nli", "97e3e2c2dd7efcbf0bb14addb25c155b76bf2aa5",
     "data/contexts.tsv",
     "a0430b5dd7a61c43b5f53fc6f30f44a38eb052596729e1f03a62cd3fab6e3308"),
    ("insertions.tsv", "juliarozanova/counterfact_nli", "41df00a0eb86eb8dbef6be50753d1d2a92eaf5a5",
     "data/insertions.tsv",
     "cf3853b8ad95f93609c1281b28c99e726472aba27f40bb2409cf15af677115e3"),
    ("help_test.tsv", "juliarozanova/supporting_monotonicity",
     "6b5ecaa98046496819aee73b2205ee0076e70d59", "data/HELP/HELP_test.tsv",
     "dd09effe4996b177c75a9cbc7c4c0ddc0c588b55eee48a420d7b4d44e7de217b"),
    ("monotonicity_fragments_easy_test.tsv", *_NLI_XY,
     "data/nli_challenge_sets/monotonicity_fragments_easy_test.tsv",
     "12f9a290c468f1a4475e465b2e5f6ae5793a3e1f25702402a26a251c55ec8334"),
    ("monotonicity_fragments_easy_train.tsv", *_NLI_XY,
     "data/nli_challenge_sets/monotonicity_fragments_easy_train.tsv",
     "feebe33f76ba5845c961f013ecdc62d2953dd998ce08af94ef58f9dd04072518"),
)  # fmt: skip
_NLI_XY_SMALL = {  # the release's train/dev/test split of a smaller grid
    "all/contexts.tsv": "bb08e1d815d5b551f6de095c67b4f112242b9463eff1be075074601bb56b150a",
    "all/insertions.tsv": "070e9a375b0c1e1c1f41478db37bfca9c365e3d1654381a37ff5ecd2319a677f",
    "dev/contexts.tsv": "2aee816da8db7eeff09d8c8e4e72eebba640cc9109e6e632dcff2f1b5a349457",
    "dev/insertions.tsv": "bf80b3eff92058ab58ef1ae3c2baa522c6a1bfa3be730dda4812fe9a94426d39",
    "dev/composite_control_labels.tsv":
        "94acc5c389c6ee95e993ba3b97962261f8582e6ebbf4438725eb5a08895bd97f",
    "dev/context_monotonicity_control_labels.tsv":
        "94acc5c389c6ee95e993ba3b97962261f8582e6ebbf4438725eb5a08895bd97f",
    "dev/insertion_rel_control_labels.tsv":
        "01ee094170afab5e8bba832f1c2d1d460215acd456177b3ab0ecee21b6ad8490",
    "test/contexts.tsv": "668b56c47d5874569c29dad7df99725d10fcf18245a5837417f74822b1e7b9e4",
    "test/insertions.tsv": "fad24cb90aa982eef4aa2b744d62bc56fb0132e899324d48ab2d7ecbbf4bdb45",
    "test/composite_control_labels.tsv":
        "c08e974245514f9506c795d073766eaa396839b110811a269febe292986f7677",
    "test/context_monotonicity_control_labels.tsv":
        "c08e974245514f9506c795d073766eaa396839b110811a269febe292986f7677",
    "test/insertion_rel_control_labels.tsv":
        "71c4bb61a64069c64808d1e392362c5d7f795bc2e23a97c3a5a30afa2601f6b9",
    "train/contexts.tsv": "4f374fc71b8da1dfaa996cbc105cbefd05e13b229076ef83c05ee76b30b24ff4",
    "train/insertions.tsv": "c6682d5eaa65d549b63dbf4a37ca1f428bb096aa25762d4972a45b8319963e1d",
    "train/composite_control_labels.tsv":
        "e29bbd48167235f69501edd1ee0391c092d295479877e696b02ee7b7ace1fb6d",
    "train/context_monotonicity_control_labels.tsv":
        "e29bbd48167235f69501edd1ee0391c092d295479877e696b02ee7b7ace1fb6d",
    "train/insertion_rel_control_labels.tsv":
        "225d306a0d866e6ae8b953d72b2a04239047e2d64781721386aba0080a7b9d1c",
}  # fmt: skip

_SOCIALIQA_ZIP = (
    "https://storage.googleapis.com/ai2-mosaic/public/socialiqa/socialiqa-train-dev.zip"
)
_SNLI_ZIP = "https://nlp.stanford.edu/projects/snli/snli_1.0.zip"
_QUOREF_ZIP = (
    "https://quoref-dataset.s3-us-west-2.amazonaws.com/train_and_dev/quoref-train-dev-v0.1.zip"
)
# HELP's README names only output_en/pmb_train_v1.0.tsv; the per-connective files the
# natural-logic suite reads are what scripts/create_dataset_PMB.py writes beside it
# ('../output_en/leskexppmb_' + determiner + '.tsv'). The checksums pin the copies at hand.
_HELP = "https://raw.githubusercontent.com/verypluming/HELP/master/output_en"

CATALOGUE: tuple[DataSet, ...] = (
    DataSet(
        name="squad",
        title="SQuAD 1.1 dev",
        what="10,570 reading-comprehension questions on Wikipedia paragraphs (faithfulness "
        "deletion)",
        license="CC BY-SA 4.0",
        attribution="Rajpurkar, Zhang, Lopyrev and Liang (2016), SQuAD: 100,000+ Questions "
        "for Machine Comprehension of Text",
        path="squad/dev-v1.1.json",
        files=(
            Remote(
                "squad/dev-v1.1.json",
                "https://rajpurkar.github.io/SQuAD-explorer/dataset/dev-v1.1.json",
                "95aa6a52d5d6a735563366753ca50492a658031da74f301ac5238b03966972c9",
            ),
        ),
        size="4.9 MB",
        homepage="https://rajpurkar.github.io/SQuAD-explorer/",
    ),
    DataSet(
        name="socialiqa",
        title="Social IQA",
        what="commonsense multiple choice, train 33,410 and dev 1,954 (confidence-shift)",
        license="CC BY 4.0",
        attribution="Sap, Rashkin, Chen, Le Bras and Choi (2019), Social IQa: Commonsense "
        "Reasoning about Social Interactions",
        path="socialiqa/dev.jsonl",
        files=tuple(
            Remote(
                f"socialiqa/{name}",
                _SOCIALIQA_ZIP,
                sha,
                member=f"socialiqa-train-dev/{name}",
                format="jsonl" if name.endswith(".jsonl") else "labels",
            )
            for name, sha in (
                ("dev.jsonl", "d8128dfe60783a9971b954ca82dd57b87b05d5d40468876d51a8e1ad2c557465"),
                (
                    "dev-labels.lst",
                    "2d882ff71969d3980d37dd07aecdf9093c6e63e27c670f3a203bcf3b9b74bc05",
                ),
                ("train.jsonl", "4c5333dea02be6d212114a83f17f7bbcbdb53b3d692f476bd40dcd242b6233de"),
                (
                    "train-labels.lst",
                    "37cd494b60750f4f7a8c7cdd15fad545f4159070dbeb0431597e06e996ae2fd6",
                ),
            )
        ),  # fmt: skip
        size="2.2 MB (zip)",
        homepage="https://leaderboard.allenai.org/socialiqa",
    ),
    DataSet(
        name="nli-xy",
        title="NLI-XY",
        what="208 contexts with an x slot x 147 word pairs, with HELP's test split and the "
        "monotonicity fragments as challenge sets (natural-logic)",
        # research data: check with the authors before redistributing (docs/data.md)
        license="none stated by the authors",
        attribution="Rozanova, Ferreira, Valentino, Thayaparan and Freitas (2021), Decomposing "
        "Natural Logic Inferences in Neural NLI (arXiv:2112.08289)",
        path="nli-xy",
        files=(
            *(
                Remote(f"nli-xy/{name}", _github(repo, commit, upstream), sha, format="tsv")
                for name, repo, commit, upstream, sha in _NLI_XY_FILES
            ),
            *(
                Remote(
                    f"nli-xy/small/{name}",
                    _github(*_NLI_XY, f"data/nli_xy_small/{name}"),
                    sha,
                    format="tsv",
                )
                for name, sha in _NLI_XY_SMALL.items()
            ),
        ),
        size="1.8 MB (22 files)",
        homepage="https://github.com/juliarozanova/nli_xy",
    ),
    DataSet(
        name="hellaswag",
        title="HellaSwag val",
        what="10,042 sentence completions with four endings each, validation split "
        "(confidence-shift)",
        license="MIT",
        attribution="Zellers, Holtzman, Bisk, Farhadi and Choi (2019), HellaSwag: Can a "
        "Machine Really Finish Your Sentence?",
        path="hellaswag/hellaswag_val.jsonl",
        files=(
            Remote(
                "hellaswag/hellaswag_val.jsonl",
                "https://raw.githubusercontent.com/rowanz/hellaswag/master/data/"
                "hellaswag_val.jsonl",
                format="jsonl",
            ),
        ),
        size="about 11 MB",
        homepage="https://rowanzellers.com/hellaswag/",
    ),
    DataSet(
        name="hotpotqa",
        title="HotpotQA dev (distractor)",
        what="7,405 two-hop questions, each with ten paragraphs and its supporting facts "
        "(faithfulness OS/OS-R deletions, right-reasons comparisons)",
        license="CC BY-SA 4.0",
        attribution="Yang, Qi, Zhang, Bengio, Cohen, Salakhutdinov and Manning (2018), "
        "HotpotQA: A Dataset for Diverse, Explainable Multi-hop Question Answering",
        path="hotpotqa/hotpot_dev_distractor_v1.json",
        files=(
            Remote(
                "hotpotqa/hotpot_dev_distractor_v1.json",
                "http://curtis.ml.cmu.edu/datasets/hotpot/hotpot_dev_distractor_v1.json",
                format="json-records",
            ),
        ),
        size="46 MB",
        homepage="https://hotpotqa.github.io/",
    ),
    DataSet(
        name="coqa",
        title="CoQA dev",
        what="500 conversations, 7,983 questions with rationales (faithfulness with "
        "conversation history)",
        license="several, by domain of the passage: CC BY-SA 4.0 (literature, Wikipedia), "
        "MSR-LA (children's stories, from MCTest), RACE's license (school exams), Apache 2.0 "
        "(CNN news)",
        attribution="Reddy, Chen and Manning (2019), CoQA: A Conversational Question "
        "Answering Challenge",
        path="coqa/coqa-dev-v1.0.json",
        files=(
            Remote(
                "coqa/coqa-dev-v1.0.json",
                "https://downloads.cs.stanford.edu/nlp/data/coqa/coqa-dev-v1.0.json",
                format="json",
            ),
        ),
        size="9 MB",
        homepage="https://stanfordnlp.github.io/coqa/",
    ),
    DataSet(
        name="quoref",
        title="Quoref dev",
        what="2,418 questions that need coreference, on Wikipedia paragraphs (right-reasons "
        "coreference, faithfulness)",
        license="CC BY 4.0",
        attribution="Dasigi, Liu, Marasović, Smith and Gardner (2019), Quoref: A Reading "
        "Comprehension Dataset with Questions Requiring Coreferential Reasoning",
        path="quoref/quoref-dev-v0.1.json",
        files=(
            Remote(
                "quoref/quoref-dev-v0.1.json",
                _QUOREF_ZIP,
                "7ce660aba76c4bb6daabffacaeb1ab7b0a39cbf1d8a9c4e4436d35c9e2e8fdd2",
                member="quoref-train-dev-v0.1/quoref-dev-v0.1.json",
            ),
        ),
        size="5.1 MB (zip)",
        homepage="https://allenai.org/data/quoref",
    ),
    DataSet(
        name="help",
        title="HELP (conjunction, disjunction)",
        what="6,076 conjunction and 438 disjunction monotonicity pairs (natural-logic "
        "challenge sets)",
        license="Apache License (the authors' README)",
        attribution="Yanaka, Mineshima, Bekki, Inui, Sekine, Abzianidze and Bos (2019), HELP: "
        "A Dataset for Identifying Shortcomings of Neural Models in Monotonicity Reasoning",
        path="help",
        files=(
            Remote(
                "help/leskexppmb_and.tsv",
                f"{_HELP}/leskexppmb_and.tsv",
                "e1e691e166df81cb44af10e3fe8e02569eada575b19c4d88eb00155ff0750b3b",
                format="tsv",
            ),
            Remote(
                "help/leskexppmb_or.tsv",
                f"{_HELP}/leskexppmb_or.tsv",
                "4dc0e2168c9a92f8b8501f161ca5149a4808f46b67c288d4559b37f80868ea19",
                format="tsv",
            ),
        ),
        size="1.1 MB",
        homepage="https://github.com/verypluming/HELP",
    ),
    DataSet(
        name="med",
        title="MED",
        what="5,382 monotonicity NLI pairs, crowdsourced and from linguistics publications "
        "(natural-logic challenge set)",
        license="Apache License (the authors' README); the examples taken from published "
        "works stay under their authors' copyright",
        attribution="Yanaka, Mineshima, Bekki, Inui, Sekine, Abzianidze and Bos (2019), Can "
        "Neural Networks Understand Monotonicity Reasoning?",
        path="med/MED.tsv",
        files=(
            # The copy at hand (sha256 644d4ffc16ff...) differs by a few characters from the
            # file in the authors' repository as last seen, so a checksum would fail every
            # fetch: MED is checked by its header instead.
            Remote(
                "med/MED.tsv",
                "https://raw.githubusercontent.com/verypluming/MED/master/MED.tsv",
                format="tsv",
                columns=("sentence1", "sentence2", "gold_label"),
            ),
        ),
        size="0.8 MB",
        homepage="https://github.com/verypluming/MED",
    ),
    DataSet(
        name="snli",
        title="SNLI 1.0 dev and test",
        what="10,000 dev and 10,000 test premise-hypothesis pairs, three classes; the "
        "archive's train split is not kept (natural-logic two-class accuracy)",
        license="CC BY-SA 4.0",
        attribution="Bowman, Angeli, Potts and Manning (2015), A large annotated corpus for "
        "learning natural language inference",
        path="snli/snli_1.0_dev.jsonl",
        files=tuple(
            Remote(
                f"snli/{name}",
                _SNLI_ZIP,
                member=f"snli_1.0/{name}",
                format="jsonl",
            )
            for name in ("snli_1.0_dev.jsonl", "snli_1.0_test.jsonl")
        ),
        size="95 MB (zip)",
        homepage="https://nlp.stanford.edu/projects/snli/",
    ),
)
