"""The catalogue: one :class:`DataSet` per name ``faithprobe data fetch`` takes.

Each data set lists the files it places under a data folder (:mod:`faithprobe.catalog.
locate`), where each comes from (the authors' official location; a member of an archive
where they release one) and, where the file is at hand on the machines faithprobe is built
on, its SHA-256; a file without one is checked by its format instead
(:mod:`faithprobe.catalog.fetch`), after its archive's SHA-256 where a well-kept loader
publishes that (ANLI, MultiNLI: not at hand here, so pinned by the archive). ``path`` is what the suites read: a file, or a folder
for NLI-XY and HELP.

Files on GitHub are fetched from the commit whose file has the SHA-256 given, so that a
later change upstream cannot turn a fetch into a checksum failure; docs/data.md says where
each file comes from and why.
"""

from __future__ import annotations

from dataclasses import dataclass

from faithprobe.options import check_among


@dataclass(frozen=True)
class Remote:
    """One file of a data set and where it comes from."""

    path: str  # where it lands, under the data folder
    url: str  # the official download (a file, or an archive holding it)
    sha256: str | None = None  # of the file at ``path``; None: checked by format only
    member: str | None = None  # the file's name inside the archive at ``url``
    # the SHA-256 of the archive at ``url``, where the checksum published is the archive's
    # (Hugging Face datasets' download_checksums) and not the file's: the archive is checked
    # before its members are extracted, each member then by its format
    archive_sha256: str | None = None
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
    check_among(name, [e.name for e in CATALOGUE], f"no data set called {name!r}")
    return next(entry for entry in CATALOGUE if entry.name == name)


def owner(path: str) -> DataSet | None:
    """The data set whose files include ``path`` (a catalogue path), if any."""
    for entry in CATALOGUE:
        if path == entry.path or any(f.path == path for f in entry.files):
            return entry
    return None


def _github(repo: str, commit: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


def _members(
    folder: str, url: str, inside: str, names: tuple[str, ...], archive_sha256: str | None = None
) -> tuple[Remote, ...]:
    """JSON-lines files of the archive at ``url``: ``<inside>/<name>`` in the archive,
    ``<folder>/<name>`` under a data folder."""
    return tuple(
        Remote(
            f"{folder}/{name}",
            url,
            member=f"{inside}/{name}",
            format="jsonl",
            archive_sha256=archive_sha256,
        )
        for name in names
    )


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
# ANLI and MultiNLI are pinned by their archives' SHA-256 as Hugging Face datasets published
# them: download_checksums in datasets/anli/dataset_infos.json and datasets/multi_nli/
# dataset_infos.json at huggingface/datasets@d7dfbc83d68e87ba002c5eb2555f7a932e59038a (the
# last commit holding its dataset folders); tensorflow/datasets' url_checksums/anli.txt and
# multi_nli.txt, and ParlAI's parlai/tasks/anli/build.py, give the same digests and sizes.
# The checksum published for ANLI is that of the v0.1 archive. The authors' README now links
# v1.0, whose data did not change ("Change to version 1.0 (nothing changed from 0.1, but
# now it's officially 'fixed')", facebookresearch/anli@68eba05) and whose archive's
# checksum no loader publishes; the method's code read ANLI through Hugging Face datasets,
# whose loader fetched this v0.1 archive.
_ANLI_ZIP = "https://dl.fbaipublicfiles.com/anli/anli_v0.1.zip"
_ANLI_ZIP_SHA256 = "16ac929a7e90ecf9093deaec89cc81fe86a379265a5320a150028efe50c5cde8"
_MNLI_ZIP = "https://cims.nyu.edu/~sbowman/multinli/multinli_1.0.zip"
_MNLI_ZIP_SHA256 = "049f507b9e36b1fcb756cfd5aeb3b7a0cfcb84bf023793652987f7e7e0957822"
# HELP's README names only output_en/pmb_train_v1.0.tsv; the per-connective files the
# natural-logic suite reads are what scripts/create_dataset_PMB.py writes beside it
# ('../output_en/leskexppmb_' + determiner + '.tsv'). The checksums pin the copies at hand.
_HELP = "https://raw.githubusercontent.com/verypluming/HELP/master/output_en"

# BIG-Bench Hard: the task files, the chain-of-thought prompts and the LICENSE at commit
# 9ee07bd, the one the copies at hand were taken from, under the same paths in the
# repository as in the data set's folder. Every file has its checksum, so no format check
# applies (fetch.FORMATS has none for a prompt's .txt or the LICENSE).
_BBH = "suzgunmirac/BIG-Bench-Hard", "9ee07bd481feebf959a6b59d61ea57bdcf30964d"
_BBH_FILES = {
    "bbh/boolean_expressions.json":
        "ea6c754ec005e2d3f2d085d349a740f593b5764f32ea4638ffed4cfc0061b12a",
    "bbh/causal_judgement.json": "6e8bca44dd402008ed41c07a3d0a1d5e7b03db7001a7e002fcdf4c60985ea081",
    "bbh/date_understanding.json":
        "0148d4ac5fca05b2f82373e5fef7208e15363b9c6079493034d77b3dab496bf5",
    "bbh/disambiguation_qa.json":
        "cf06df9ebf911b883671cb1b35d3fbd1a1c306b19b9e9a012407e596c85fe8c6",
    "bbh/dyck_languages.json": "3f9badedf15c2be1ce53d94fdf016299bb30ba231ef087ab9f51a7ed6d0bdc25",
    "bbh/formal_fallacies.json": "4c1adb664821157faade1d4153685403afcc02648f3c180a608a18f17f589629",
    "bbh/geometric_shapes.json": "07be68a124420caa2ebc0b2c858ad79fc55c5c8806170e496e1e17ebfb11f31c",
    "bbh/hyperbaton.json": "b6d7f55c75f5d02f2987a4f3123802dfa093872089a56a334144aae8a7264fdc",
    "bbh/logical_deduction_five_objects.json":
        "d2df31394b903b7f0e085d42a69572a092987856eac076799017d70ef266fa8f",
    "bbh/logical_deduction_seven_objects.json":
        "2896c7e3482eea318dd37bcc370d24ec3cc91e8374c1784287b5dbd38a529e33",
    "bbh/logical_deduction_three_objects.json":
        "e590fae72e3a6041fbd23bd8ff6b74baf44ca563f6ba40a041c55e7b867c1681",
    "bbh/movie_recommendation.json":
        "a8b53a87ee21a865b7248e694f388a9b8f7cf6b839b11d44796a2dd3fc088983",
    "bbh/multistep_arithmetic_two.json":
        "c9d5a6433c9b78256422a15c78463949c8bec8d85607aa28b52d7234ad4a8595",
    "bbh/navigate.json": "b7944dfd3c81da5c4815bd75b00d6fa3c64140823498e78ed496f4c3d36f7f0d",
    "bbh/object_counting.json": "8acef14dbbdd40d2326ef7755750b6b5fe919fef06276af1bab3f1c297f022ff",
    "bbh/penguins_in_a_table.json":
        "bb87ee449698eee51215e025a453b1bcb2f5e6589c2063b2c79e68b8f0655228",
    "bbh/reasoning_about_colored_objects.json":
        "0a8850cf95166020fce7a78244026ceedd7ea839302471512b4f8744e85a6a49",
    "bbh/ruin_names.json": "b6f723aef2bafdd4c7bfc3c7e0329c7e8a8279391a609969c8ed76c9319f5f7f",
    "bbh/salient_translation_error_detection.json":
        "becf3eb8dd53c821a555ecd5c1334ecd93eb25f980e63be963c518e7138de5da",
    "bbh/snarks.json": "54a0661fe2de06167645a4965e6bcf963c4ba307e76262a7c750998b0e3d0d0e",
    "bbh/sports_understanding.json":
        "63ca262858f6176864515cd8cf53cdaa40839ebecc155b726d77930855d167bf",
    "bbh/temporal_sequences.json":
        "92a1189faaa84aacc4c405aaa13f13f48c2992eb884772eedb622505252baef5",
    "bbh/tracking_shuffled_objects_five_objects.json":
        "2063a46a4fb484236ed4310523606543a3e1dd4a4dc34eda65d407910ece25a5",
    "bbh/tracking_shuffled_objects_seven_objects.json":
        "b59fd05b850c37cf57cb514ae1e6975c00b1638ade2291722056b2af3c54084d",
    "bbh/tracking_shuffled_objects_three_objects.json":
        "546cc7bf10c6a01a6a4c17ae28a4966485f21f29fd5d111f37858ec78e354f6b",
    "bbh/web_of_lies.json": "3e60323f8514a107fdb4edf35f8832a9171c5a09c0eaa47823559de905e8ab8b",
    "bbh/word_sorting.json": "2a6132d2c99f00d0d2eb1113ac6b4a918bd969d863c48749210d969713db8d43",
    "cot-prompts/boolean_expressions.txt":
        "685affba97425cdf3549d5d313ba876caed2fa7c8a4cf1ea7549faf22179609d",
    "cot-prompts/causal_judgement.txt":
        "14377e36cccb084b7d0fe73988d08696f7675d712b02d3ae1f5f7f12c77028ea",
    "cot-prompts/date_understanding.txt":
        "a0a13c392f689a1828f5f6ffb9dee3d44483794490da5d92f0e2a723787b1cfb",
    "cot-prompts/disambiguation_qa.txt":
        "794fd259297972a4c963a5d13a84dc221edde460de27fa5d8fd64299a2001597",
    "cot-prompts/dyck_languages.txt":
        "b0836603007ec659ed685458647fb6d7543543304e7aca909b995d0c3aff22b2",
    "cot-prompts/formal_fallacies.txt":
        "10c06cc362520e9b8dddfc4861e263ff668d228a52d958dcc69f09f1d224935a",
    "cot-prompts/geometric_shapes.txt":
        "f36d9893507eb518d84f388fb677dc0226c74a98873700de0b556548d65d3f76",
    "cot-prompts/hyperbaton.txt":
        "19898af91c35cb26bbdf5fdb6f6fb17e138677250332e2994005625ffb50b261",
    "cot-prompts/logical_deduction_five_objects.txt":
        "4ed65246c0c1c4b0b4053d784181892b842bce19cf4358c976f34b1a434ef034",
    "cot-prompts/logical_deduction_seven_objects.txt":
        "4ed65246c0c1c4b0b4053d784181892b842bce19cf4358c976f34b1a434ef034",
    "cot-prompts/logical_deduction_three_objects.txt":
        "4ed65246c0c1c4b0b4053d784181892b842bce19cf4358c976f34b1a434ef034",
    "cot-prompts/movie_recommendation.txt":
        "cdf765634713b057091d541b4773dd2c998f81447b0bd8564ae70be4cdf3f5d0",
    "cot-prompts/multistep_arithmetic_two.txt":
        "a546e0b7cde09037bc144ae5c32c9cf78dafdfac929ae76e2051b2dd8f3671ce",
    "cot-prompts/navigate.txt": "dc2fd733f1867b8c79685f15b83746064534a94bf73468341c2a9dd335be22fc",
    "cot-prompts/object_counting.txt":
        "e51ffc03fd713a13a379a6c938a523dfc1c2f384f2a8447bd7a12d4458f18833",
    "cot-prompts/penguins_in_a_table.txt":
        "33be137e76c2a6af0bbacd17a8e7a92801886c0202a45e35ea9c2a88c1f26d51",
    "cot-prompts/reasoning_about_colored_objects.txt":
        "e4ea02d05b13e8ed9ccc3b0d878bc4df4c5a6fb76c65d39d48d6244f7ff0b9d5",
    "cot-prompts/ruin_names.txt":
        "731446c6c66bb5258677af1417b599a6a5539be6d74a5afc02cf7a716444ea54",
    "cot-prompts/salient_translation_error_detection.txt":
        "2c8367f75092202cc507fdbfaaf037b1c1eed38e91289084439738367f0785f7",
    "cot-prompts/snarks.txt": "35084a2a0b86bc4008ab206b838c0b97dd425897dd72198137c3cefc499c0960",
    "cot-prompts/sports_understanding.txt":
        "2058a9bed717a6edb8ca2f815e88851436a4ee14c8b0d504ccf464865c6d0295",
    "cot-prompts/temporal_sequences.txt":
        "3e7ebf1e20abe3e219dc6514dcb7474d82db1b2c66acc733cd30af2e9e0b64b0",
    "cot-prompts/tracking_shuffled_objects_five_objects.txt":
        "2ef54cb2a72052adc3484a76209cb6a6535f194d677e79bcec2e2e71cf3768af",
    "cot-prompts/tracking_shuffled_objects_seven_objects.txt":
        "2ef54cb2a72052adc3484a76209cb6a6535f194d677e79bcec2e2e71cf3768af",
    "cot-prompts/tracking_shuffled_objects_three_objects.txt":
        "2ef54cb2a72052adc3484a76209cb6a6535f194d677e79bcec2e2e71cf3768af",
    "cot-prompts/web_of_lies.txt":
        "c8025ca65ab7f0897c243504c863bda043d04b6e873777536743e94023c929d0",
    "cot-prompts/word_sorting.txt":
        "a2cdbcfe23abaa97b9787f7c03dbf49b1cfd0ff9e63197b7884bb5cd5a096ca6",
    "LICENSE": "4ef2ff4295d26ab6211235039c132697408cec5391d2c091b41e983771978db8",
}  # fmt: skip

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
        files=_members(
            "snli", _SNLI_ZIP, "snli_1.0", ("snli_1.0_dev.jsonl", "snli_1.0_test.jsonl")
        ),
        size="95 MB (zip)",
        homepage="https://nlp.stanford.edu/projects/snli/",
    ),
    DataSet(
        name="mnli",
        title="MultiNLI 1.0 dev, matched and mismatched",
        what="10,000 matched and 10,000 mismatched dev pairs (9,815 and 9,832 with a gold "
        "label), three classes; the archive's train split is not kept (natural-logic "
        "two-class accuracy)",
        license="most under the OANC's license (free use, modification and sharing); the "
        "fiction section under CC BY-SA 3.0, CC BY 3.0 or in the public domain (the authors' "
        "data description)",
        attribution="Williams, Nangia and Bowman (2018), A Broad-Coverage Challenge Corpus for "
        "Sentence Understanding through Inference",
        path="mnli",
        files=_members(
            "mnli",
            _MNLI_ZIP,
            "multinli_1.0",
            ("multinli_1.0_dev_matched.jsonl", "multinli_1.0_dev_mismatched.jsonl"),
            _MNLI_ZIP_SHA256,
        ),
        size="227 MB (zip)",
        homepage="https://cims.nyu.edu/~sbowman/multinli/",
    ),
    DataSet(
        name="anli",
        title="ANLI rounds 1-3, dev and test",
        what="Adversarial NLI, each round's dev and test set (R1 and R2: 1,000 pairs each, "
        "R3: 1,200), labels e/n/c; the archive's train splits are not kept (natural-logic "
        "two-class accuracy, per round)",
        license="CC BY-NC 4.0",
        attribution="Nie, Williams, Dinan, Bansal, Weston and Kiela (2020), Adversarial NLI: A "
        "New Benchmark for Natural Language Understanding",
        path="anli",
        files=_members(
            "anli",
            _ANLI_ZIP,
            "anli_v0.1",
            tuple(f"{r}/{split}.jsonl" for r in ("R1", "R2", "R3") for split in ("dev", "test")),
            _ANLI_ZIP_SHA256,
        ),
        size="18.6 MB (zip)",
        homepage="https://github.com/facebookresearch/anli",
    ),
    DataSet(
        name="bbh",
        title="BIG-Bench Hard",
        what="27 tasks, 6,511 examples, with the authors' 3-shot chain-of-thought prompts "
        "(reasoning)",
        license="MIT",
        attribution="Suzgun, Scales, Schärli, Gehrmann, Tay, Chung, Chowdhery, Le, Chi, Zhou "
        "and Wei (2022), Challenging BIG-Bench Tasks and Whether Chain-of-Thought Can Solve "
        "Them",
        path="bbh",
        files=tuple(
            Remote(f"bbh/{name}", _github(*_BBH, name), sha) for name, sha in _BBH_FILES.items()
        ),
        size="2.8 MB (55 files)",
        homepage="https://github.com/suzgunmirac/BIG-Bench-Hard",
    ),
)
