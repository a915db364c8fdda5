"""Paraphrasing: the paper's prompts, cleaning, the subgroup-term filter, provenance through the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairness_core.cairo.data import DEGENERATE_REASONS, degenerate_reason, load_metric
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
    # A kept paraphrase names its subgroup and is not degenerate; a dropped one says why.
    degenerate = {f"degenerate: {reason}" for reason in DEGENERATE_REASONS}
    for row in prov.to_dict("records"):
        if row["kept"]:
            assert names_subgroup(row["paraphrase"], tuple(row["terms"].split(", ")))
            assert degenerate_reason(row["paraphrase"]) is None
        else:
            assert row["reason"] in {"empty output", "subgroup term dropped", "copied the original"} | degenerate
    again = run_paraphrase(request, store)  # stored: read back, same paraphrases
    assert again.provenance["raw"].tolist() == prov["raw"].tolist()


def test_paraphrases_through_an_endpoint_chat_route_are_stored_with_token_usage(store) -> None:
    """The CAIRO page's endpoint choice: the paper's chat prompt goes to /v1/chat/completions with the paper's
    decoding, each reply is cleaned, filtered and stored, and the tokens the server counted are kept per row."""
    from fairness_core.generation.task import token_usage
    from fairness_core.models import cache as model_cache
    from fairness_core.models.endpoint import Endpoint
    from tests.endpoint_servers import FakeServer

    server = FakeServer()
    model_cache.clear()
    try:
        source = Endpoint(server.base_url, "fake-model", max_in_flight=3).source()
        request = ParaphraseRequest(model=source, metric="HONEST gender (valid)", style="chat", k=2,
                                    max_new_tokens=12, per_subgroup=2)
        result = run_paraphrase(request, store)
        assert result.status == "complete" and list(result.sets) == ["fake-model (here) #1", "fake-model (here) #2"]
        prov = result.provenance
        assert len(prov) == 4 * 2  # 2 subgroups x 2 prompts x k=2

        chats = [body for path, _, body in server.requests if path.endswith("/chat/completions")]
        assert len(chats) == 8
        assert {(body["temperature"], body["top_p"], body["max_tokens"]) for body in chats} == {(0.6, 0.9, 12)}
        assert len({body["seed"] for body in chats}) == 8  # one seed per (prompt, sample)
        sent = {body["messages"][0]["content"] for body in chats}
        assert sent == set(prov["instruction"]) and all(s.startswith("Paraphrase each of the following") for s in sent)

        # the fake replies "Reply to <instruction> [settings]": it repeats the instruction instead of paraphrasing,
        # so every reply is dropped as degenerate (it talks about the task), kept in the provenance with its reason
        assert not prov["kept"].any() and result.dropped == {"degenerate: talks about the task": 8}
        for row in prov.to_dict("records"):
            assert row["raw"].startswith(f"Reply to {row['instruction']} [t=0.6 p=0.9 k=None s=")
            assert row["paraphrase"] == row["raw"] and row["model"] == source
            assert result.sets[row["set"]][row["index"]] == ""

        # the server's own count, per reply: 5 prompt and 4 completion tokens
        assert token_usage(store, result.run_ids) == {"requests": 8, "prompt_tokens": 40, "completion_tokens": 32}

        model_cache.clear()
        again = run_paraphrase(request, store)  # answered from the store: no chat request is sent again
        assert again.provenance["raw"].tolist() == prov["raw"].tolist()
        assert len([path for path, _, _ in server.requests if path.endswith("/chat/completions")]) == 8
    finally:
        server.stop()
        model_cache.clear()
