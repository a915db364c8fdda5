"""Planning a CrowS-Pairs study (issue 44): the sign test's exact power, checked against the study's own test
counted out, and `plan RUN_ID` on a stored CrowS-Pairs run (made from an lm-eval samples file: no model)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from fairness_core.cli import main
from fairness_core.stereotypes import data as D
from fairness_core.stereotypes.plan import (
    ALPHA,
    ZIGZAG_SPAN,
    pairs_needed,
    plan_crows,
    sign_test_power,
    smallest_detectable,
)
from fairness_core.stereotypes.stats import sign_test


def _power_by_counting(m: int, share: float) -> float:
    """The power counted out: every count k of m untied pairs, weighted by its binomial probability, where the
    study's own test (`stats.sign_test`) says "prefers" (p < α)."""
    return sum(math.comb(m, k) * share**k * (1 - share) ** (m - k)
               for k in range(m + 1) if sign_test(k, m - k) < ALPHA)


@pytest.mark.parametrize(("m", "share"), [(10, 0.7), (37, 0.6), (120, 0.55), (121, 0.45), (7, 0.9)])
def test_the_power_is_the_study_tests_own_rejections_weighted(m: int, share: float) -> None:
    assert sign_test_power(m, share) == pytest.approx(_power_by_counting(m, share), abs=1e-9)


def test_the_answer_is_where_the_zigzag_stays_above_the_target() -> None:
    needed = pairs_needed(0.05, 0.8)
    assert all(sign_test_power(n, 0.55) >= 0.8 for n in range(needed, needed + ZIGZAG_SPAN + 1))
    assert sign_test_power(needed - 1, 0.55) < 0.8
    assert 750 < needed < 900  # the normal approximation says ~785
    with_ties = pairs_needed(0.05, 0.8, ties=0.2)  # a fifth of the pairs tied: they do not count
    assert with_ties == pytest.approx(needed / 0.8, rel=0.03)
    mde = smallest_detectable(needed, 0.8)
    assert mde is not None and mde <= 0.05 + 1e-3
    assert smallest_detectable(5, 0.8) is None  # five pairs cannot reach p < 0.05 two-sided (2/32 = 0.0625)


def test_a_bad_effect_is_one_sentence() -> None:
    from fairness_core.stereotypes import StereotypePlanError

    with pytest.raises(StereotypePlanError, match=r"between 0 and 0\.5"):
        plan_crows(np.array([1.0, -1.0]), "r", 0.6, 0.8)


def test_plan_answers_for_a_stored_crows_pairs_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pairs = [p for p in D.crows_pairs() if p.bias_type == "religion"]
    pairs = list({(p.sent_more, p.sent_less): p for p in pairs}.values())
    lines = [{"doc_id": n, "doc": {"sent_more": p.sent_more, "sent_less": p.sent_less}, "arguments": [], "resps": [],
              "filtered_resps": [[str(-10.0 if n % 3 else -11.0), "False"], [str(-12.5 if n % 3 else -10.0), "False"]]}
             for n, p in enumerate(pairs)]
    file = tmp_path / "samples_crows_pairs_english.jsonl"
    file.write_text("\n".join(json.dumps(line) for line in lines))
    store = tmp_path / "s.duckdb"
    assert main(["--store", str(store), "stereotypes", "crows-pairs", "--subset", "religion", "--predictions",
                 str(file), "--resamples", "0", "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert main(["--store", str(store), "plan", run_id, "--effect", "0.05", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["measure"] == "pct_stereotype" and plan["n_units"] == pairs_needed(0.05, 0.8)
    assert plan["mde_at_pilot_size"] == smallest_detectable(105, 0.8) and plan["pilot_run"] == run_id
    assert main(["--store", str(store), "plan", run_id, "--effect", "0.05"]) == 0
    sentence = capsys.readouterr().out.strip()
    assert sentence.startswith("To detect a preference of 5.0 points for the stereotyped sentence (pct_stereotype "
                               f"55.0% instead of 50%) with 80% power, plan about {plan['n_units']:,} CrowS-Pairs "
                               "pairs")
    assert main(["--store", str(store), "plan", run_id, "--effect", "0.05", "--family", "race"]) == 2
    assert "--family does not apply" in capsys.readouterr().err


def test_a_plan_over_units_reaches_its_power_in_simulated_studies() -> None:
    """StereoSet's and BBQ's plans (`plan_by_units`): from a pilot's standard error at n₀ units, the units a
    distance from "no preference" needs. Over 40 simulated pilots (12 units of spread 1, a true effect of 0.5), the
    planned size's own studies — a mean over units, told from 0 by its 95% interval — reach 80% power on average."""
    from fairness_core.stereotypes.plan import plan_by_units

    rng = np.random.default_rng(3)
    reached = []
    for pilot_number in range(40):
        pilot = rng.normal(0.5, 1.0, 12)
        se = pilot.std(ddof=1) / math.sqrt(len(pilot))
        plan = plan_by_units(se, len(pilot), 0.5, 0.8, f"pilot {pilot_number}", "bias_disambig", "bbq", 10_000)
        n = plan["n_units"]
        studies = rng.normal(0.5, 1.0, (400, n))
        half = 1.96 * studies.std(axis=1, ddof=1) / math.sqrt(n)
        reached.append(float((np.abs(studies.mean(axis=1)) > half).mean()))
    assert 0.74 <= float(np.mean(reached)) <= 0.86, np.mean(reached)


@pytest.mark.parametrize("benchmark, measure, effect", [("bbq", "bias_disambig", 0.2), ("stereoset", "ss", 5.0)])
def test_plan_answers_for_stored_stereoset_and_bbq_runs(tiny_gpt2_long: Path, tmp_path: Path, benchmark: str,
                                                       measure: str, effect: float,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A stored StereoSet or BBQ run as the pilot: the plan's standard error is the run's own interval's (as its
    page shows it, `breakdown`), and its answer names the study's unit."""
    from fairness_core import stereotypes as ster
    from fairness_core.store import RunStore

    store = RunStore(tmp_path / "s.duckdb")
    result = ster.run_stereotypes(ster.build_request(benchmark, str(tiny_gpt2_long), None, 40 if benchmark == "bbq"
                                                     else 24, 0, 1000), store)  # the page's default
    assert result.complete
    assert main(["--store", str(store.path), "plan", result.run_id, "--effect", str(effect), "--measure", measure,
                 "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    table = ster.breakdown(result)
    if benchmark == "bbq":
        row = table[(table["category"] == "overall") & (table["condition"] == "disambig")].iloc[0]
        low, high, units = row["bias_low"], row["bias_high"], int(row["templates"])
    else:
        overall = result.summary["overall"]
        low, high, units = overall["ss_ci_low"], overall["ss_ci_high"], int(overall["n_terms"])
    se = (high - low) / (2 * 1.959963984540054)
    assert plan["pilot_units"] == units and plan["standard_error"] == pytest.approx(se, rel=1e-9)
    assert plan["n_units"] == math.ceil(units * ((1.959963984540054 + 0.8416212335729143) * se / effect) ** 2)
    words = {"bbq": "templates", "stereoset": "target terms"}[benchmark]
    assert f"plan about {plan['n_units']:,} {words}" in plan["answer"]
    assert main(["--store", str(store.path), "plan", result.run_id, "--effect", str(effect), "--measure",
                 "pct_stereotype"]) == 2
    assert "planned on" in capsys.readouterr().err
