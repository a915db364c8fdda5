"""The judge audit, used as the CLI and the page use it: build a request, run it through a store, read the rows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from fairness_core import audit
from fairness_core.cli import main
from fairness_core.store import RunStore


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> RunStore:
    return RunStore(tmp_path_factory.mktemp("audit") / "runs.duckdb")


@pytest.fixture(scope="module")
def jigsaw(store: RunStore) -> audit.AuditResult:
    return audit.run_audit(audit.build_request("jigsaw-toxicity", resamples=300), store)


def test_the_jigsaw_judge_scores_sexual_orientation_terms_as_more_toxic(jigsaw: audit.AuditResult) -> None:
    terms = audit.rows_frame(jigsaw, "term").set_index("term")
    assert len(terms) == 50 and (terms["n"] == 43).all()  # 43 built-in templates x 50 madlibs adjectives
    for term in ("gay", "lesbian", "bisexual", "homosexual"):  # Dixon et al.'s finding, reproduced
        assert terms.loc[term, "ci_low"] > 0.2
    assert terms.loc["straight", "ci_high"] < 0
    assert (terms["ci_low"] <= terms["shift"]).all() and (terms["shift"] <= terms["ci_high"]).all()
    assert terms["shift"].is_monotonic_decreasing  # the chart's order: largest shift first
    groups = audit.rows_frame(jigsaw, "group").set_index("group")
    assert groups["term"].isna().all() and groups.loc["sexual orientation", "shift"] > 0.1
    # shifts are against the average of the group means, so the group shifts average to zero
    assert abs(groups["shift"].mean()) < 1e-12


def test_the_aucs_are_borkans_and_match_sklearn(jigsaw: audit.AuditResult) -> None:
    scores = jigsaw.scores
    row = audit.rows_frame(jigsaw, "term").set_index("term").loc["gay"]
    toxic = scores["label"] == "toxic"
    term = scores["term"] == "gay"
    assert row["subgroup_auc"] == pytest.approx(roc_auc_score(toxic[term], scores["score"][term]))
    bpsn = (toxic & ~term) | (~toxic & term)
    assert row["bpsn_auc"] == pytest.approx(roc_auc_score(toxic[bpsn], scores["score"][bpsn]))
    bnsp = (~toxic & ~term) | (toxic & term)
    assert row["bnsp_auc"] == pytest.approx(roc_auc_score(toxic[bnsp], scores["score"][bnsp]))
    assert row["bpsn_auc"] < 0.5 < row["bnsp_auc"]  # its non-toxic texts are scored like toxic ones elsewhere
    non_toxic_gay = scores[term & ~toxic]
    assert row["fpr"] == pytest.approx((non_toxic_gay["score"] >= 0.5).mean())


def test_vader_gives_every_term_outside_its_lexicon_the_same_shift(store: RunStore) -> None:
    result = audit.run_audit(audit.build_request("vader", resamples=100), store)
    terms = audit.rows_frame(result, "term").set_index("term")
    assert terms.loc["gay", "shift"] == pytest.approx(terms.loc["muslim", "shift"]) == terms.loc["deaf", "shift"]
    assert terms.loc["straight", "shift"] > 0.1  # "straight" is a positive word in VADER's lexicon
    assert result.request.judge.op == "<=" and result.request.judge.threshold == -0.25


def test_zero_non_toxic_templates_refuse_the_fpr_with_a_reason(tmp_path: Path, store: RunStore) -> None:
    templates = tmp_path / "toxic_only.txt"
    templates.write_text("{person} people are vile.\ttoxic\nI hate {person} people.\ttoxic\n")
    request = audit.build_request("jigsaw-toxicity", fmt="templates", templates=templates, resamples=50)
    payload = audit.audit_json(audit.run_audit(request, store))
    assert "no template is labelled non-toxic" in payload["refused"]["fpr"]
    assert "toxic and non-toxic" in payload["refused"]["subgroup_auc"]
    assert all(row["fpr"] is None and row["subgroup_auc"] is None for row in payload["rows"])
    assert all(row["flip_rate"] is not None for row in payload["rows"])
    json.dumps(payload, allow_nan=False)  # strict JSON: no NaN anywhere


def test_swapping_the_identity_word_in_generated_texts(store: RunStore) -> None:
    texts = ["My neighbour is gay and kind.", "My neighbour is gay and kind.", "The Muslim man worked as a chef.",
             "The gay and straight couple smiled.", "It rained."]
    request = audit.build_request("jigsaw-toxicity", fmt="texts", texts=texts, terms=None, resamples=50)
    notes = " ".join(request.design.notes)
    assert "2 of 4 distinct text(s)" in notes and "1 repeated text(s) counted once" in notes
    assert "1 text(s) mention several terms" in notes and "1 text(s) mention none" in notes
    result = audit.run_audit(request, store)
    swapped = result.scores[result.scores["template_id"] == "text:2"].set_index("term")["text"]  # 2nd distinct
    assert swapped["christian"] == "The christian man worked as a chef."
    assert swapped["muslim"] == "The muslim man worked as a chef."


def test_an_iptts_file_goes_through_the_importer_with_its_labels(tmp_path: Path, store: RunStore) -> None:
    rows = ["Text,Label,Template"]
    for term in ("gay", "straight", "muslim", "christian"):
        rows += [f"{term} people are wonderful,NOT_BAD,verb_adj", f"{term} people are disgusting,BAD,verb_adj",
                 f"i am {term},NOT_BAD,i_am", f"i hate {term} people,BAD,hate"]
    path = tmp_path / "iptts.csv"
    path.write_text("\n".join(rows) + "\n")
    request = audit.build_request("jigsaw-toxicity", fmt="iptts", templates=path, resamples=50)
    assert request.design.record()["n_toxic_templates"] == 2 and request.design.record()["n_non_toxic_templates"] == 2
    # the file's Template column groups its sentences: verb_adj's two sentences are one cluster
    assert (request.design.n_templates, request.design.n_clusters, request.design.cluster_unit) == (
        4, 3, "IPTTS templates")
    assert set(request.design.groups) == {"sexual orientation", "religion"}
    rows_out = audit.audit_json(audit.run_audit(request, store))["rows"]
    assert {r["term"] for r in rows_out if r["level"] == "term"} == {"gay", "straight", "muslim", "christian"}
    assert all(r["subgroup_auc"] is not None for r in rows_out)


def test_an_eec_file_groups_people_by_race_and_gender(tmp_path: Path, store: RunStore) -> None:
    header = "ID,Sentence,Template,Person,Gender,Race,Emotion,Emotion word"
    lines = [header]
    people = [("Alonzo", "male", "African-American"), ("Adam", "male", "European"),
              ("Ebony", "female", "African-American"), ("Amanda", "female", "European")]
    for i, word in enumerate(("angry", "happy", "sad")):
        for j, (person, gender, race) in enumerate(people):
            lines.append(f"{i}-{j},{person} feels {word}.,<person subject> feels <emotion word>.,{person},{gender},"
                         f"{race},anger,{word}")
    path = tmp_path / "eec.csv"
    path.write_text("\n".join(lines) + "\n")
    request = audit.build_request("vader", fmt="eec", templates=path, resamples=50)
    assert request.design.groups == {"African-American male": ("Alonzo",), "European male": ("Adam",),
                                     "African-American female": ("Ebony",), "European female": ("Amanda",)}
    payload = audit.audit_json(audit.run_audit(request, store))
    assert payload["templates"]["n_templates"] == 3 and "fpr" in payload["refused"]


def test_a_metric_is_audited_against_the_template_without_the_identity_word(store: RunStore) -> None:
    request = audit.build_request(scorer=None, metric="chrf", resamples=50)
    assert request.design.texts["reference"].iloc[0] == "I am a person."
    payload = audit.audit_json(audit.run_audit(request, store))
    assert "no decision threshold" in payload["refused"]["flip_rate"]
    assert "does not classify toxicity" in payload["refused"]["subgroup_auc"]
    shifts = {r["term"]: r["shift"] for r in payload["rows"] if r["level"] == "term"}
    assert shifts["african american"] < shifts["gay"]  # chrF: a longer inserted term costs more


#: the built-in set's shape: 3 single-template patterns and 8 patterns of 5 fillers = 43 templates in 11 clusters
BUILTIN_PATTERNS = np.repeat(np.arange(11), [1, 1, 1] + [5] * 8)


def simulated_frame(scores: np.ndarray, terms: list[str], group_of: dict[str, str],
                    patterns: np.ndarray = BUILTIN_PATTERNS) -> pd.DataFrame:
    """Scores (templates x terms) as the audit's input frame, each template in its pattern's cluster."""
    n_templates = scores.shape[0]
    return pd.DataFrame({"template_id": np.repeat([f"t{j}" for j in range(n_templates)], len(terms)),
                         "term": terms * n_templates, "group": [group_of[t] for t in terms] * n_templates,
                         "text": "", "label": "", "cluster": np.repeat([f"p{p}" for p in patterns], len(terms)),
                         "score": scores.ravel()})


def test_the_shift_interval_covers_at_the_built_in_size() -> None:
    """43 templates from 11 patterns x 6 terms in 3 groups: s_jt = a_j + d_t + g_pt + e_jt, where g_pt is how the
    judge reacts to term t in pattern p, shared by the pattern's fillers. An additive template effect a_j cancels
    in the shift; the pattern x term reaction does not, and it is what makes templates of one pattern dependent.
    The population shift of term t is d_t minus the average of the group means of d. Issue 42 §3: round 5's
    percentile bootstrap over the 11 patterns covers 0.891 here (0.886-0.898 per term, 2,000 datasets,
    docs/statistics.md); the delete-a-pattern jackknife with t on its effective 7.2 degrees of freedom covers 0.952
    (0.942-0.957; the goal: >= 0.93). Here 300 datasets x 6 terms (s.e. of the mean ~0.006)."""
    rng = np.random.default_rng(0)
    groups = {"g1": ("a", "b"), "g2": ("c",), "g3": ("d", "e", "f")}
    terms = [t for ts in groups.values() for t in ts]
    group_of = {t: g for g, ts in groups.items() for t in ts}
    effects = np.array([0.3, 0.1, 0.0, -0.1, -0.2, 0.05])
    group_means = [effects[[terms.index(t) for t in ts]].mean() for ts in groups.values()]
    truth = effects - np.mean(group_means)
    judge = audit.Judge("scorer", "simulated", column="score", threshold=None)
    hits, trials = np.zeros(len(terms)), 300
    for trial in range(trials):
        reaction = rng.normal(0, 0.1, (11, len(terms)))[BUILTIN_PATTERNS]  # g_pt, shared within a pattern
        scores = rng.normal(0.5, 0.2, (43, 1)) + effects + reaction + rng.normal(0, 0.05, (43, len(terms)))
        table = audit.audit_table(simulated_frame(scores, terms, group_of), groups, judge, resamples=200,
                                  seed=trial, cluster_unit="patterns")
        for row in table.rows:
            if row["level"] == "term":
                index = terms.index(row["term"])
                hits[index] += row["ci_low"] <= truth[index] <= row["ci_high"]
    coverage = hits / trials
    assert coverage.mean() >= 0.93 and coverage.min() >= 0.91 and coverage.max() <= 0.98, coverage
    assert table.extra["resampled"]["unit"] == "patterns" and table.extra["resampled"]["n_clusters"] == 11


def test_the_fped_test_holds_its_size_where_the_terms_are_exchangeable() -> None:
    """An exact null: the judge reacts to terms differently in each pattern (g_pt) but no term is treated worse on
    average, so the terms are exchangeable within each pattern. Permuting the terms within patterns rejects at
    alpha = 0.05 in ~3% of 400 datasets (the flags are 0/1, so the test is a little conservative); permuting
    within single templates ignores the shared reaction and rejects in ~23%. 400 datasets: s.e. ~1.1%."""
    from fairness_core.audit.summary import fped_test

    rng = np.random.default_rng(1)
    non_toxic = BUILTIN_PATTERNS[:23]  # the built-in set's 23 non-toxic templates, in 7 patterns
    rejected = {"patterns": 0, "templates": 0}
    for dataset in range(400):
        scores = (rng.normal(0, 0.6, (23, 1)) + rng.normal(0, 0.3, (7, 12))[non_toxic]
                  + rng.normal(0, 0.3, (23, 12)))
        flagged = (scores >= 0.5).astype(float)
        rejected["patterns"] += fped_test(flagged, non_toxic, 200, seed=dataset)["p_value"] < 0.05
        rejected["templates"] += fped_test(flagged, np.arange(23), 200, seed=dataset)["p_value"] < 0.05
    assert 0.02 <= rejected["patterns"] / 400 <= 0.08, rejected
    assert rejected["templates"] / 400 > 0.12, rejected


def test_fped_is_reported_with_its_test_and_no_corrected_estimate(jigsaw: audit.AuditResult) -> None:
    """Issue 42 §3: FPED − mean(FPED*) over-corrects by an amount that depends on the unknown rates and had no
    interval, so it is no longer reported; the test and the chance level stand beside the plug-in value."""
    fped = jigsaw.table.extra["fped"]
    assert fped["p_value"] < 0.05 and fped["headline"].startswith("the terms' false-positive rates differ (p = ")
    assert "corrected" not in fped and "where chance alone gives" in fped["headline"]
    assert 0 < fped["null_mean"] < fped["value"] and 0 <= fped["ci_low"] <= fped["value"] <= fped["ci_high"]
    flat = np.zeros((23, 12))
    flat[:, :] = np.random.default_rng(0).integers(0, 2, (23, 1))  # every term flagged alike on each template
    from fairness_core.audit.summary import fped_test

    alike = fped_test(flat, BUILTIN_PATTERNS[:23], 200)
    assert alike["p_value"] == 1.0 and alike["headline"] == (
        "no difference between the terms' false-positive rates is detectable here (p = 1.00)")


def test_the_built_in_intervals_resample_patterns_and_widen(jigsaw: audit.AuditResult) -> None:
    """Fillers of one pattern share the judge's reaction to a term: the jackknife leaves out the 11 patterns, not
    the 43 templates (issue 33: 1.21-1.90x wider)."""
    assert jigsaw.request.design.record()["resampled"] == "patterns"
    resampled = jigsaw.table.extra["resampled"]
    assert (resampled["unit"], resampled["n_clusters"], resampled["n_jackknife_units"]) == ("patterns", 11, 11)
    assert resampled["df"] == pytest.approx(7.19, abs=0.01)  # 3 single-template patterns and 8 of 5
    as_templates = audit.audit_table(jigsaw.scores.drop(columns="cluster"), jigsaw.request.design.groups,
                                     jigsaw.request.judge, resamples=300, seed=0)
    width = {row["term"]: row["ci_high"] - row["ci_low"] for row in jigsaw.table.rows if row["level"] == "term"}
    narrow = {row["term"]: row["ci_high"] - row["ci_low"] for row in as_templates.rows if row["level"] == "term"}
    ratios = np.array([width[t] / narrow[t] for t in width if narrow[t] > 0])
    assert np.median(ratios) > 1.3 and width["gay"] > 1.5 * narrow["gay"]


def test_the_cli_prints_the_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--store", str(tmp_path / "s.duckdb"), "audit-scorer", "--scorer", "offensive", "--resamples",
                 "50", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["scorer"] == "offensive" and payload["flagged_when"] == "offensive_prob >= 0.5"
    for row in payload["rows"]:
        assert set(audit.ROW_KEYS) <= set(row)
    assert payload["examples"][0]["text"]


def test_swapping_words_in_a_stored_generation_run(tiny_gpt2: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Generations as the pipeline writes them (tiny GPT-2), audited with --swap-run: each prompt's identity word
    is swapped for every term, the judge scores every version."""
    from fairness_core.data.prompts import parse_custom
    from fairness_core.generation.systems import System
    from fairness_core.generation.task import GenerationRequest, run_generation
    from fairness_core.models import DecodingConfig

    store_path = tmp_path / "runs.duckdb"
    prompts = parse_custom("gay: The gay person worked as\nstraight: The straight person worked as\n"
                           "muslim: The Muslim person was known for")
    request = GenerationRequest((System(str(tiny_gpt2), DecodingConfig(top_p=0.9)),), prompts, (("vader", {}),),
                                samples=2, max_new_tokens=5, batch_size=8)
    run_id = run_generation(request, RunStore(store_path)).run_ids[0]
    terms = tmp_path / "terms.txt"
    terms.write_text("sexual orientation: gay, straight\nreligion: muslim, christian\n")
    assert main(["--store", str(store_path), "audit-scorer", "--scorer", "jigsaw-toxicity", "--swap-run", run_id,
                 "--terms", str(terms), "--resamples", "50", "--json"]) == 0
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert payload["templates"]["source"] == "texts" and payload["templates"]["n_templates"] >= 3
    assert {r["term"] for r in payload["rows"] if r["level"] == "term"} == {"gay", "straight", "muslim", "christian"}
    assert "no template is labelled non-toxic" in payload["refused"]["fpr"]
    assert "mention exactly one identity term and were swapped" in captured.err


def test_progress_leaves_room_for_the_summary_after_the_last_batch(tmp_path: Path) -> None:
    """Issue 35 §3: progress read 100% once the last batch was scored while the summary (the template bootstrap of
    every statistic) still ran, so the time left said 0. Progress is weighted by the costs of both parts."""
    request = audit.build_request("vader", resamples=200)
    scoring, summary = audit.audit_parts(request)
    work = audit.audit_work(request)
    assert work.kind == "audit" and work.units == 2_150  # the built-in set's distinct texts, each scored once
    assert work.reference_s == pytest.approx(scoring + summary) and work.fixed_s == pytest.approx(summary)
    seen: list = []
    audit.run_audit(request, RunStore(tmp_path / "runs.duckdb"), on_progress=seen.append)
    assert seen[-1].fraction == pytest.approx(scoring / (scoring + summary)) and seen[-1].fraction < 1.0
    assert [p.fraction for p in seen] == sorted(p.fraction for p in seen)
