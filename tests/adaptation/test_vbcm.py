"""VBCM (Quiroga et al. 2025, App. A.2): the worked example, per-template backgrounds, the CLI contract and
the bootstrap interval's coverage on synthetic data with a known truth."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairness_core.adaptation.vbcm import VBCMInputError, VBCMTable, vbcm, vbcm_bootstrap, vbcm_table

# App. A.2.2, Table 1: one template, three countries, three names each.
TABLE_1 = {"Spain": {"María": "0.20", "José": "0.25", "Carmen": "0.17"},
           "USA": {"Emily": "0.18", "John": "0.21", "Michael": "0.19"},
           "France": {"Chloé": "0.19", "Lucas": "0.22", "Emma": "0.18"}}


def table_1() -> pd.DataFrame:
    return pd.DataFrame([{"template_id": "I like {person}.", "group": g, "term": t, "score": float(s)}
                         for g, terms in TABLE_1.items() for t, s in terms.items()])


def exact_vbcm() -> tuple[Fraction, dict[str, Fraction]]:
    scores = [Fraction(s) for terms in TABLE_1.values() for s in terms.values()]
    background = sum(scores) / len(scores)
    out = {}
    for group, terms in TABLE_1.items():
        phi = sum(Fraction(s) for s in terms.values()) / len(terms)
        out[group] = 1 - abs(phi - background)
    return background, out


def test_worked_example_a22_exactly() -> None:
    background, expected = exact_vbcm()
    assert background == Fraction(179, 900)  # 0.19888…, printed 0.199
    # Exact arithmetic: Spain 0.99222…, USA 0.99444…, France 0.99777… (the paper prints 0.997 for France
    # because it rounds the group mean to 0.196 and the background to 0.199 first).
    assert expected["France"] == Fraction(449, 450)
    result = vbcm(table_1())
    for group, value in expected.items():
        assert result.vbcm[group] == pytest.approx(float(value), abs=1e-12)
    assert round(result.vbcm["Spain"], 3) == 0.992
    assert round(result.vbcm["USA"], 3) == 0.994
    assert round(result.vbcm["France"], 4) == 0.9978
    assert result.background == pytest.approx(float(background), abs=1e-12)
    assert result.n_templates == 1
    # The paper's rounded intermediate values give its printed 0.997.
    assert 1 - abs(0.196 - 0.199) == pytest.approx(0.997)


def test_unbalanced_two_templates_use_their_own_backgrounds() -> None:
    rows = [("A", "X", "a1", 0.2), ("A", "X", "a2", 0.4), ("A", "Y", "a3", 0.9),
            ("B", "X", "b1", 0.5), ("B", "Y", "b2", 0.1), ("B", "Y", "b3", 0.1), ("B", "Y", "b4", 0.4)]
    frame = pd.DataFrame(rows, columns=["template_id", "group", "term", "score"])
    result = vbcm(frame)
    table = result.table
    assert table.phi == pytest.approx(np.array([[0.3, 0.9], [0.5, 0.2]]))
    # β_j is the average across groups of the group means (Sec. 3.1): β_A = (0.3 + 0.9)/2, β_B = (0.5 + 0.2)/2.
    assert table.background == pytest.approx([0.6, 0.35])
    assert result.vbcm == pytest.approx({"X": (0.7 + 0.85) / 2, "Y": (0.7 + 0.85) / 2})
    assert result.background == pytest.approx(0.475)
    # The stated option "all-sentences" weights each group by its term count: β_A = 1.5/3, β_B = 1.1/4.
    by_sentence = vbcm(frame, background="all-sentences")
    assert by_sentence.table.background == pytest.approx([0.5, 0.275])
    assert by_sentence.vbcm == pytest.approx({"X": (0.8 + 0.775) / 2, "Y": (0.6 + 0.925) / 2})
    # A single pooled background (2.6 / 7) would give other numbers: the per-template one is what is computed.
    pooled = 2.6 / 7
    assert by_sentence.vbcm["X"] != pytest.approx(((1 - abs(0.3 - pooled)) + (1 - abs(0.5 - pooled))) / 2)


def test_background_is_the_average_of_group_means_not_of_sentences() -> None:
    # Issue 18 §2.3: one template, 20 names per sex scoring 0.5, 11 nouns per sex scoring 0.3.
    rows = [("t", f"{sex} names", f"{sex}-name-{i}", 0.5) for sex in ("female", "male") for i in range(20)]
    rows += [("t", f"{sex} nouns", f"{sex}-noun-{i}", 0.3) for sex in ("female", "male") for i in range(11)]
    frame = pd.DataFrame(rows, columns=["template_id", "group", "term", "score"])
    result = vbcm(frame)
    assert result.background == pytest.approx(0.4)
    assert result.vbcm == pytest.approx({g: 0.9 for g in ("female names", "male names", "female nouns",
                                                          "male nouns")})
    # The list-size-weighted background (the old rule, kept as an option) tilts towards the longer lists.
    old = vbcm(frame, background="all-sentences")
    assert old.background == pytest.approx(26.6 / 62)
    assert old.vbcm["male names"] == pytest.approx(1 - (0.5 - 26.6 / 62))  # 0.929
    assert old.vbcm["male nouns"] == pytest.approx(1 - (26.6 / 62 - 0.3))  # 0.871
    with pytest.raises(VBCMInputError, match="background must be one of"):
        vbcm(frame, background="median")


def test_missing_scores_are_skipped_and_counted_and_absent_groups_skip_templates() -> None:
    rows = [("A", "X", "x", 0.2), ("A", "Y", "y", 0.6), ("A", "Y", "z", None), ("B", "X", "x", 0.5)]
    result = vbcm(pd.DataFrame(rows, columns=["template_id", "group", "term", "score"]))
    assert result.n_skipped_nan == 1
    assert result.n_templates_per_group == {"X": 2, "Y": 1}
    assert result.vbcm["Y"] == pytest.approx(1 - abs(0.6 - 0.4))
    assert result.vbcm["X"] == pytest.approx(((1 - abs(0.2 - 0.4)) + 1.0) / 2)


def test_bad_tables_are_one_sentence() -> None:
    with pytest.raises(VBCMInputError, match="no column 'score'"):
        vbcm(pd.DataFrame({"template_id": ["a"], "group": ["g"], "term": ["t"]}))
    with pytest.raises(VBCMInputError, match="row 1: score 'high' is not a number"):
        vbcm(pd.DataFrame({"template_id": ["a"], "group": ["g"], "term": ["t"], "score": ["high"]}))


def write_scores(path: Path, frame: pd.DataFrame, bom: bool = False, crlf: bool = False) -> Path:
    text = frame.to_csv(index=False, lineterminator="\r\n" if crlf else "\n")
    path.write_bytes(("\ufeff" if bom else "").encode() + text.encode("utf-8"))
    return path


# ------------------------------------------------------------------------- bootstrap coverage
def synthetic_table(rng: np.random.Generator, n_templates: int, effects: np.ndarray, terms: int = 3) -> VBCMTable:
    """Template level b_j, group effect e_g plus a template-group wobble, plus a term-level noise."""
    n_groups = effects.size
    base = rng.uniform(0.2, 0.8, size=(n_templates, 1, 1))
    wobble = rng.normal(0, 0.05, size=(n_templates, n_groups, 1))
    noise = rng.normal(0, 0.03, size=(n_templates, n_groups, terms))
    scores = base + effects[None, :, None] + wobble + noise
    return VBCMTable([str(j) for j in range(n_templates)], [f"g{k}" for k in range(n_groups)],
                     scores.mean(axis=(1, 2)), scores.mean(axis=2), np.full((n_templates, n_groups), terms))


def synthetic_frame(table: VBCMTable, rng: np.random.Generator) -> pd.DataFrame:
    """Rows whose template/group means are the table's (two terms symmetric around φ_jg)."""
    rows = []
    for j, template in enumerate(table.templates):
        for k, group in enumerate(table.groups):
            delta = rng.uniform(0, 0.01)
            rows += [(template, group, "a", table.phi[j, k] - delta), (template, group, "b", table.phi[j, k] + delta)]
    return pd.DataFrame(rows, columns=["template_id", "group", "term", "score"])


def test_synthetic_table_matches_the_frame_path() -> None:
    rng = np.random.default_rng(0)
    table = synthetic_table(rng, 5, np.array([0.0, 0.1]))
    table.background = table.phi.mean(axis=1)  # equal terms per group: β_j = mean of φ_jg
    from_frame = vbcm(synthetic_frame(table, rng))
    assert list(from_frame.vbcm.values()) == pytest.approx(list(np.nanmean(table.distance, axis=0)))


def test_bootstrap_over_templates_covers_the_true_vbcm() -> None:
    effects = np.array([0.0, 0.04, -0.06, 0.1])
    rng = np.random.default_rng(123)
    # Truth: the population mean over templates of d(β_j, φ_jg), by a very large draw of templates.
    truth = synthetic_table(rng, 200_000, effects).distance.mean(axis=0)
    hits, reps = np.zeros(effects.size), 300
    for rep in range(reps):
        table = synthetic_table(rng, 30, effects)
        draws = vbcm_bootstrap(table, n_resamples=500, seed=rep)
        low, high = np.quantile(draws, [0.025, 0.975], axis=0)
        hits += (low <= truth) & (truth <= high)
    coverage = hits / reps
    assert np.all(coverage >= 0.87), coverage
    assert 0.90 <= coverage.mean() <= 0.99, coverage


def test_bootstrap_keeps_a_templates_perturbations_together() -> None:
    # Two templates whose groups swap order: resampling templates (not rows) can only give d-values
    # that are averages of whole templates' d-values.
    rows = [("A", "X", "1", 0.1), ("A", "Y", "2", 0.5), ("B", "X", "3", 0.9), ("B", "Y", "4", 0.7)]
    table = vbcm_table(pd.DataFrame(rows, columns=["template_id", "group", "term", "score"]))
    draws = vbcm_bootstrap(table, n_resamples=200, seed=0)
    d = table.distance
    allowed_x = {round(v, 12) for v in (d[0, 0], d[1, 0], (d[0, 0] + d[1, 0]) / 2)}
    assert {round(v, 12) for v in draws[:, 0]} <= allowed_x


def test_the_papers_table_1_ships_with_the_study_and_gives_its_worked_values() -> None:
    from fairness_core import adaptation

    scores = adaptation.paper_table_1()
    assert list(scores.columns) == ["template_id", "group", "term", "score"] and len(scores) == 9
    rows = adaptation.vbcm_rows(adaptation.vbcm(scores))
    assert dict(zip(rows["group"], rows["VBCM"].round(4), strict=True)) == {"Spain": 0.9922, "USA": 0.9944,
                                                                            "France": 0.9978}
    assert rows["templates"].tolist() == [1, 1, 1] and rows["CI low"].isna().all()


def test_a_score_file_without_any_score_is_one_sentence_naming_it() -> None:
    """Issue 30 §4: the page said "the score table has no scored rows" without naming the upload."""
    from fairness_core.adaptation.vbcm import check_scores

    frame = pd.DataFrame({"template_id": ["[x](https://evil.example)"], "group": [""], "term": [""], "score": [""]})
    with pytest.raises(VBCMInputError, match=r"^scores\.csv has no scored rows \(every score is empty\)"):
        check_scores(frame, source="scores.csv")
