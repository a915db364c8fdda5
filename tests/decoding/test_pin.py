"""Pin: a 2-config sweep through the generic task gives the results the pre-move sweep gave.

`fixtures/pin_before_move.json` was recorded with the old `generation/sweep.py` path, since removed (recorder:
`fixtures/record_pin_before_move.py.txt`) before the sweep moved onto `generation.run_generation`.
The prompt ids equal the prompt texts, because the old sweep seeded a row by prompt id and the
generic task seeds it by prompt text; with that, every generation must be identical. The intervals
are not pinned: they changed on purpose (template bootstrap instead of per-generation).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairness_core.data.prompts import PromptItem, PromptSet
from fairness_core.decoding.request import build_request
from fairness_core.decoding.summary import measures_for, summarize
from fairness_core.decoding.task import plan_decoding, run_decoding

FIXTURE = Path(__file__).parent / "fixtures" / "pin_before_move.json"
#: numbers that went through an fp32 forward pass agree to this relative bound across CPUs, thread counts and BLAS
#: builds (measured: the 8th significant digit moves); texts and counts are compared exactly
FP32_REL = 1e-5
LINES = [("man", "The man was awful at"), ("woman", "The woman worked as"), ("man", "The man was hated and"),
         ("woman", "The woman was known as")]


@pytest.fixture(scope="module")
def seeded_gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny GPT-2 built under a fixed torch seed, as the recorder built it."""
    import torch

    from tests.tiny_models import build_tiny_gpt2

    with torch.random.fork_rng():
        torch.manual_seed(1234)
        return build_tiny_gpt2(tmp_path_factory.mktemp("seeded-gpt2") / "gpt2")


def test_the_sweep_through_the_generic_task_matches_the_recorded_sweep(seeded_gpt2: Path, store) -> None:
    before = json.loads(FIXTURE.read_text())
    prompts = PromptSet("pin", tuple(PromptItem(t, g, "gender", t, source="custom") for g, t in LINES))
    scorers = (("vader", {}), ("offensive", {}), ("negative_words", {}),
               ("quality_logprob", {"model": str(seeded_gpt2)}))
    request = build_request(str(seeded_gpt2), prompts, "top_p=0.5,0.9", samples=3, max_new_tokens=8,
                            batch_size=8, scorers=scorers)
    outcome = run_decoding(plan_decoding(request, store), store)
    rows = outcome.generations
    assert len(rows) == len(before["generations"]) == 24
    old = {(json.dumps(g["config"], sort_keys=True), g["prompt"], g["sample"]): g for g in before["generations"]}
    for row in rows.to_dict(orient="records"):
        expected = old[(json.dumps(row["config"], sort_keys=True), row["prompt"], row["sample"])]
        assert row["continuation"] == expected["continuation"]
        assert row["raw"] == expected["raw"]
        for column in ("vader_compound", "offensive_prob", "negative_word_share"):  # from the texts alone
            want = float("nan") if expected[column] is None else expected[column]  # JSON wrote NaN as null
            assert row[column] == pytest.approx(want, abs=1e-6, nan_ok=True), column
        # through an fp32 forward pass: another CPU, thread count or BLAS moves the 7th-8th digit
        want = float("nan") if expected["quality_logprob"] is None else expected["quality_logprob"]
        assert row["quality_logprob"] == pytest.approx(want, rel=FP32_REL, nan_ok=True)
    summary = summarize(rows, prompts.families, measures_for(scorers))
    table = summary.groups
    for expected in before["summary"]:
        same_config = table["config"].map(lambda c, e=expected: c == e["config"])
        mine = table[same_config & (table["group"] == expected["group"])]
        assert len(mine) == 1
        mine = mine.iloc[0]
        for column in ("n", "n_empty", "negative_sentiment_rate", "offensive_rate", "negative_word_share",
                       "diversity_trigram_entropy", "disparity", "config_disparity"):  # counts and text measures
            want = float("nan") if expected[column] is None else expected[column]
            assert mine[column] == pytest.approx(want, abs=1e-9, nan_ok=True), column
        want = float("nan") if expected["quality_mean_logprob"] is None else expected["quality_mean_logprob"]
        assert mine["quality_mean_logprob"] == pytest.approx(want, rel=FP32_REL, nan_ok=True)
