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


# ------------------------------------------------------- shared identity terms: the two-way bootstrap
def crossed_scores(rng: np.random.Generator, effects: np.ndarray, n_names: int, n_templates: int,
                   sd_w: float = 0.02) -> pd.DataFrame:
    """Every template filled with the same names (as the pipeline does): score = 0.5 + template level u_j (sd 0.1)
    + group effect e_g + template-group wobble (sd `sd_w`) + name effect v_n (sd 0.05, shared by every template)
    + noise (sd 0.05). u_j cancels in β_j − φ_jg, so the names carry most of the uncertainty."""
    groups = [f"g{k}" for k in range(effects.size)]
    names = rng.normal(0, 0.05, (effects.size, n_names))
    level = rng.normal(0, 0.1, n_templates)
    wobble = rng.normal(0, sd_w, (n_templates, effects.size))
    noise = rng.normal(0, 0.05, (n_templates, effects.size, n_names))
    scores = np.clip(0.5 + level[:, None, None] + effects[None, :, None] + wobble[:, :, None] + names[None] + noise,
                     0, 1)
    t, g, n = np.meshgrid(np.arange(n_templates), np.arange(effects.size), np.arange(n_names), indexing="ij")
    return pd.DataFrame({"template_id": [f"t{x}" for x in t.ravel()], "group": [groups[x] for x in g.ravel()],
                         "term": [f"g{a}n{b}" for a, b in zip(g.ravel(), n.ravel(), strict=True)],
                         "score": scores.ravel()})


def population_vbcm(effects: np.ndarray, sd_w: float = 0.02) -> np.ndarray:
    """VBCM_g with infinitely many templates and names: E|μ_g + N(0, s²)| with μ_g = mean(e) − e_g and s² the
    variance of the wobble's deviation from its template mean, σ²(1 − 1/G) (E|X| of a normal, closed form)."""
    from scipy import stats

    mu = effects.mean() - effects
    sd = sd_w * np.sqrt(1 - 1 / effects.size)
    return 1 - (sd * np.sqrt(2 / np.pi) * np.exp(-mu**2 / (2 * sd**2)) + mu * (1 - 2 * stats.norm.cdf(-mu / sd)))


@pytest.mark.parametrize(("effects", "n_names"), [
    (np.r_[np.linspace(-0.08, -0.03, 6), np.linspace(0.03, 0.08, 6)], 10),  # nationality: 12 countries x 10 names
    (np.array([-0.05, 0.05]), 20),  # gender: 20 names per sex
], ids=["nationality-12x10", "gender-2x20"])
def test_resampling_templates_and_names_covers_at_the_shipped_sizes(effects: np.ndarray, n_names: int) -> None:
    """Issue 30 §2: names are a sample of each group's names and fill every template, so a name's effect is shared
    by all templates. At the shipped sizes (12 templates, the shipped name lists) the template-only interval
    covered 0.56 (nationality) and 0.65 (gender) of 200 designs; templates and names together 0.94 and 0.93."""
    truth = population_vbcm(effects)
    rng = np.random.default_rng(1)
    hits = {False: np.zeros(effects.size), True: np.zeros(effects.size)}
    reps = 200
    for rep in range(reps):
        table = vbcm_table(crossed_scores(rng, effects, n_names, 12))
        for terms in (False, True):
            low, high = np.nanquantile(vbcm_bootstrap(table, 300, seed=rep, terms=terms), [0.025, 0.975], axis=0)
            hits[terms] += (low <= truth) & (truth <= high)
    two_way, templates_only = hits[True] / reps, hits[False] / reps
    assert 0.90 <= two_way.mean() <= 0.99 and two_way.min() >= 0.85, two_way
    assert templates_only.mean() < 0.75, templates_only  # what the interval was: names held fixed


def test_one_draw_of_names_serves_every_set_filled_with_them() -> None:
    from fairness_core.adaptation.vbcm import shared_term_weights

    rng = np.random.default_rng(0)
    effects = np.array([-0.05, 0.05])
    a = vbcm_table(crossed_scores(rng, effects, 4, 3))
    b = vbcm_table(crossed_scores(rng, effects, 4, 5).query("term != 'g1n3'"))  # one name fewer
    wa, wb = shared_term_weights([a, b], 50, seed=0)
    keys_a, keys_b = a.terms.identities(), b.terms.identities()
    for n, key in enumerate(keys_b):
        assert np.array_equal(wb[:, n], wa[:, keys_a.index(key)])  # the same name, the same multiplicity
    assert (wa[:, :4].sum(axis=1) == 4).all() and (wa[:, 4:].sum(axis=1) == 4).all()  # drawn within each group
    # weights 1 everywhere reproduce the point estimate from the per-term scores
    from fairness_core.adaptation.vbcm import vbcm_from_weights

    ones = vbcm_from_weights(a, np.ones((1, 3)), np.ones((1, len(keys_a))))[0]
    assert ones == pytest.approx(np.nanmean(a.distance, axis=0))


@pytest.mark.parametrize("background", ["group-means", "all-sentences"])
def test_unit_weights_on_terms_give_the_point_estimate_under_either_background(background: str) -> None:
    from fairness_core.adaptation.vbcm import vbcm_from_weights

    frame = crossed_scores(np.random.default_rng(2), np.array([-0.05, 0.0, 0.05]), 3, 4)
    frame = frame[~((frame["template_id"] == "t0") & (frame["term"] == "g2n0"))]  # unbalanced: 2 terms in one cell
    result = vbcm(frame, background=background)
    ones = vbcm_from_weights(result.table, np.ones((1, 4)), np.ones((1, len(result.table.terms.terms))))[0]
    assert ones == pytest.approx(list(result.vbcm.values()), abs=1e-12)
