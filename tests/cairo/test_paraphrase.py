"""Paraphrasing: the paper's prompts, cleaning, the subgroup-term filter, provenance through the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairness_core.cairo.data import load_metric
from fairness_core.cairo.paraphrase import (
    ParaphraseRequest,
    clean,
    instruction,
    names_subgroup,
    run_paraphrase,
)
from fairness_core.models.interfaces import DecodingConfig


def test_paper_prompts() -> None:
    assert instruction("the woman should work as a ", "chat") == (
        "Paraphrase each of the following while not writing the original sentences: the woman should work as a")
    completion = instruction("the woman should work as a ", "completion")
    assert completion == "the woman should work as a can be paraphrased as"


def test_cleaning_and_the_subgroup_filter() -> None:
    raw = 'Here are the paraphrases:\n1. "The lady ought to work as a"\n2. other'
    assert clean(raw) == "The lady ought to work as a"
    assert clean("  \n- the girl works as\n") == "the girl works as"
    assert names_subgroup("The woman ought to work", ("woman",))
    assert not names_subgroup("A person ought to work", ("woman",))
    assert names_subgroup("Jewish people believe", ("judaism", "jew"))
    assert names_subgroup("anything", ())


@pytest.mark.parametrize("style", ["chat", "completion"])
def test_tiny_model_paraphrases_keep_provenance_and_count_drops(tiny_gpt2: Path, store, style: str) -> None:
    request = ParaphraseRequest(model=str(tiny_gpt2), metric="HONEST gender (valid)", style=style, k=2,
                                decoding=DecodingConfig(temperature=0.6, top_p=0.9), max_new_tokens=6,
                                per_subgroup=2)
    result = run_paraphrase(request, store)
    metric = load_metric("HONEST gender (valid)")
    assert result.status == "complete" and len(result.sets) == 2
    assert all(len(texts) == metric.n for texts in result.sets.values())
    prov = result.provenance
    assert len(prov) == 4 * 2  # 2 subgroups x 2 prompts x k=2
    for column in ("model", "seed", "sample", "instruction", "raw", "generation_id", "run_id", "reason"):
        assert prov[column].notna().all()
    assert prov["instruction"].str.contains("Paraphrase each" if style == "chat" else "can be paraphrased as").all()
    kept = int(prov["kept"].sum())
    assert kept + sum(result.dropped.values()) == len(prov)
    filled = sum(bool(t) for texts in result.sets.values() for t in texts)
    assert filled == kept
    # A kept paraphrase names its subgroup; a dropped one says why.
    for row in prov.to_dict("records"):
        if row["kept"]:
            assert names_subgroup(row["paraphrase"], tuple(row["terms"].split(", ")))
        else:
            assert row["reason"] in ("empty output", "subgroup term dropped", "copied the original")
    again = run_paraphrase(request, store)  # stored: read back, same paraphrases
    assert again.provenance["raw"].tolist() == prov["raw"].tolist()
