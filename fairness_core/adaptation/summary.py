"""Tables the page and the CLI show for an adaptation run: rewrites and their rejection rate, NOE counts
(Table 2), VBCM vectors with CIs per set, MAE / Pearson r against the NOEs (Figs. 4–5), template
characteristics (Table 3, Figs. 7–8) and semantic similarity original ↔ adapted (Table 4)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from fairness_core.adaptation.characteristics import (
    CHECKER,
    characteristic_differences,
    characteristic_intervals,
    characteristics,
)
from fairness_core.adaptation.compare import compare, improvement, same_templates
from fairness_core.adaptation.rewrite import ACCEPTED, STATUSES
from fairness_core.adaptation.task import SETS, AdaptationResult
from fairness_core.adaptation.vbcm import VBCMResult, vbcm
from fairness_core.bias import bootstrap_mean

SET_LABELS = {"original": "original templates", "adapted": "adapted templates", "noe": "NOEs"}


def rewrites_frame(result: AdaptationResult) -> pd.DataFrame:
    return pd.DataFrame([{"template_id": r.template_id, "kind": r.kind, "anchor": r.anchor, "original": r.original,
                          "reply": r.reply, "adapted": r.cleaned, "status": r.status,
                          "adapted_template": r.adapted_template or ""} for r in result.rewrites],
                        columns=["template_id", "kind", "anchor", "original", "reply", "adapted", "status",
                                 "adapted_template"])


def rejection_intervals(frame: pd.DataFrame, n_resamples: int, seed: int, level: float = 0.95
                        ) -> dict[str, tuple[float, float]]:
    """95% percentile bootstrap of the rejection rate, overall ("all") and per kind of term, resampling
    *templates* (the sampled unit: a drawn template brings all of its rewrites)."""
    if frame.empty or n_resamples < 1 or frame["template_id"].nunique() < 2:
        return {}
    templates = list(dict.fromkeys(frame["template_id"]))
    index = {t: i for i, t in enumerate(templates)}
    kinds = {"all": np.ones(len(frame), dtype=bool)} | {k: (frame["kind"] == k).to_numpy()
                                                         for k in dict.fromkeys(frame["kind"])}
    rejected = (frame["status"] != ACCEPTED).to_numpy(dtype=float)
    unit = frame["template_id"].map(index).to_numpy()
    draws = np.random.default_rng(seed).integers(0, len(templates), size=(n_resamples, len(templates)))
    multiplicity = np.zeros((n_resamples, len(templates)))
    np.add.at(multiplicity, (np.arange(n_resamples)[:, None], draws), 1.0)
    alpha = (1 - level) / 2
    out = {}
    for kind, mask in kinds.items():
        per_template_rejected = np.bincount(unit[mask], weights=rejected[mask], minlength=len(templates))
        per_template_n = np.bincount(unit[mask], minlength=len(templates)).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = (multiplicity @ per_template_rejected) / (multiplicity @ per_template_n)
        finite = rates[np.isfinite(rates)]
        out[kind] = (float(np.quantile(finite, alpha)), float(np.quantile(finite, 1 - alpha))) if finite.size \
            else (float("nan"), float("nan"))
    return out


def rejection_summary(result: AdaptationResult) -> dict[str, Any]:
    frame = rewrites_frame(result)
    n = len(frame)
    counts = {status: int((frame["status"] == status).sum()) for status in STATUSES}
    per_kind = {kind: float((g["status"] != ACCEPTED).mean()) for kind, g in frame.groupby("kind", sort=False)}
    templates_kept = {a: len({p.template_id for p in result.perturbations.get(("adapted", a), [])})
                      for a in result.request.attributes}
    intervals = rejection_intervals(frame, result.request.resamples, result.request.seed)
    return {"n_rewrites": n, "counts": counts, "rejection_rate": (n - counts[ACCEPTED]) / n if n else float("nan"),
            "rejection_rate_ci": list(intervals.get("all", (float("nan"), float("nan")))),
            "rejection_rate_per_kind": per_kind,
            "rejection_rate_per_kind_ci": {k: list(intervals.get(k, (float("nan"), float("nan"))))
                                           for k in per_kind},
            "adapted_templates_per_attribute": templates_kept,
            "n_templates": len(result.request.templates.templates)}


def noe_summary(result: AdaptationResult) -> dict[str, Any]:
    """Table 2's NOE rows: sentences (templates) and perturbations per attribute."""
    noes = result.noes
    if noes is None:
        return {}
    used = len(result.noe_templates.templates) if result.noe_templates else 0
    return {"corpus": noes.corpus.name, "n_searched": noes.n_searched, "n_with_person": noes.n_with_person,
            "n_single_person": noes.n_single_person, "n_multi_person_skipped": noes.n_multi_person,
            "n_used": used, "n_examples_pool": len(noes.examples_pool),
            "perturbations": {a: len(result.perturbations.get(("noe", a), [])) for a in result.request.attributes}}


def score_table(result: AdaptationResult, set_name: str, attribute: str, classifier: str,
                groups: list[str] | None = None) -> pd.DataFrame:
    """template_id, group, term, score for one set, attribute and classifier (optionally some groups)."""
    perturbations = result.perturbations.get((set_name, attribute), [])
    frame = pd.DataFrame([{"template_id": p.template_id, "group": p.group, "term": p.term, "text": p.text}
                          for p in perturbations], columns=["template_id", "group", "term", "text"])
    if groups is not None:
        frame = frame[frame["group"].isin(groups)]
    assert result.scores is not None
    scores = result.scores[result.scores["classifier"] == classifier].drop_duplicates("text")
    frame["score"] = frame["text"].map(dict(zip(scores["text"], scores["score"], strict=True)))
    return frame


def name_groups(result: AdaptationResult, attribute: str) -> list[str]:
    return [g for g in result.request.groups(attribute) if result.request.kind_of(g) == "names"]


def vbcm_results(result: AdaptationResult) -> dict[tuple[str, str, str], VBCMResult]:
    """VBCM with template-bootstrap CIs per (classifier, attribute, set) over all of the set's groups."""
    request = result.request
    out = {}
    for classifier in request.classifiers:
        for attribute in request.attributes:
            for set_name in SETS:
                groups = list(request.groups(attribute)) if set_name != "noe" else name_groups(result, attribute)
                table = score_table(result, set_name, attribute, classifier.label)
                if table.empty or len(groups) < 2:
                    continue
                out[(classifier.label, attribute, set_name)] = vbcm(
                    table[["template_id", "group", "term", "score"]], groups=groups,
                    n_resamples=request.resamples, seed=request.seed)
    return out


def vbcm_frame(results: dict[tuple[str, str, str], VBCMResult]) -> pd.DataFrame:
    rows = []
    for (classifier, attribute, set_name), res in results.items():
        for group, value in res.vbcm.items():
            low, high = res.ci.get(group, (np.nan, np.nan))
            rows.append({"classifier": classifier, "attribute": attribute, "set": set_name, "group": group,
                         "vbcm": value, "ci_low": low, "ci_high": high,
                         "n_templates": res.n_templates_per_group[group]})
    return pd.DataFrame(rows, columns=["classifier", "attribute", "set", "group", "vbcm", "ci_low", "ci_high",
                                       "n_templates"])


#: fewer adapted templates than this: the comparison is shown as numbers with a warning, never as bars (a bootstrap
#: over 4 templates has too few distinct resamples to mean anything)
MIN_ADAPTED_TEMPLATES = 5
#: the comparison rows, in the order the table shows them
ORIGINAL_VS_NOES, ACCEPTED_VS_NOES = "original vs NOEs", "original (accepted templates) vs NOEs"
ADAPTED_VS_NOES, ADAPTED_VS_ORIGINAL, GAIN = "adapted vs NOEs", "adapted vs original", "adapted − original"


def comparison_problem(frame: pd.DataFrame) -> str | None:
    """One sentence when a classifier × attribute's comparison cannot be read as a result, else None.

    "No difference measurable" is a test, not a threshold on an absolute value (an MAE between two noisy vectors is
    above 0 even when adapting changed nothing): on the accepted templates, no group's VBCM moved by more than a
    simultaneous 95% bootstrap band (`compare.simultaneous_change`)."""
    n_adapted = int(frame["n_adapted_templates"].iloc[0])
    if n_adapted < MIN_ADAPTED_TEMPLATES:
        return (f"only {n_adapted} adapted template(s) were accepted; a comparison of adapted templates needs at "
                f"least {MIN_ADAPTED_TEMPLATES}, so only original vs NOEs is drawn: the adapted rows of the table "
                "are not evidence either way")
    between = frame[frame["comparison"] == ADAPTED_VS_ORIGINAL]
    detected = between["change_detected"].iloc[0] if len(between) else None
    if detected is not None and not pd.isna(detected) and not bool(detected):
        band = between["change_band"].iloc[0]
        return (f"no difference measurable: on the {n_adapted} accepted templates, no group's VBCM changed by more "
                f"than resampling templates and names moves it (±{band:.3g}, a simultaneous 95% band), so 'closer "
                "to the NOEs' cannot be credited to adapting")
    return None


def readable_comparisons(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The comparison rows worth drawing, and one sentence per classifier · attribute that cannot be read as a
    result (`comparison_problem`); for those only 'original vs NOEs' is kept, the comparison that needs no rewrite."""
    readable, problems = [], []
    for (classifier, attribute), part in frame.groupby(["classifier", "attribute"], sort=False):
        problem = comparison_problem(part)
        if problem:
            problems.append(f"{classifier} · {attribute}: {problem}.")
            part = part[part["comparison"] == ORIGINAL_VS_NOES]
        readable.append(part)
    return (pd.concat(readable) if readable else frame.iloc[:0]), problems


def comparisons(result: AdaptationResult) -> pd.DataFrame:
    """MAE and r of original vs NOEs and adapted vs NOEs over the name groups (β_j over those groups, as the
    NOEs have names only), and the adapted − original differences with joint CIs.

    Equal template sets (issue 30): MAE grows with noise and the adapted set holds only the accepted templates, so
    every row that involves the adapted set is matched by the originals of the *same* templates: "original
    (accepted templates) vs NOEs" beside "adapted vs NOEs", and "adapted vs original" / "adapted − original" on
    those templates (`n_templates` says how many). "original vs NOEs" (all templates) answers the question that
    needs no rewrite. Every comparison whose sets have scored perturbations is made: a run in which no rewrite
    was accepted (no adapted set) still compares the original templates with the NOEs."""
    request = result.request
    rows = []
    for classifier in request.classifiers:
        for attribute in request.attributes:
            groups = name_groups(result, attribute)
            if len(groups) < 2:
                continue
            tables = {}
            for set_name in SETS:
                frame = score_table(result, set_name, attribute, classifier.label, groups)
                if not frame.empty and frame["score"].notna().any():
                    tables[set_name] = vbcm(frame[["template_id", "group", "term", "score"]], groups=groups).table
            if "original" in tables and "adapted" in tables:
                tables["accepted"] = same_templates(tables["original"], tables["adapted"].templates)
            start = len(rows)
            for name, label in (("original", ORIGINAL_VS_NOES), ("accepted", ACCEPTED_VS_NOES),
                                ("adapted", ADAPTED_VS_NOES)):
                if name in tables and "noe" in tables:
                    comparison = compare(tables[name], tables["noe"], groups, paired=False,
                                         n_resamples=request.resamples, seed=request.seed)
                    rows.append(_row(classifier.label, attribute, label, comparison.mae.as_dict(),
                                     comparison.r.as_dict() if comparison.r else None, len(groups),
                                     comparison.n_templates[0]))
            if "original" in tables and "adapted" in tables:
                paired = compare(tables["original"], tables["adapted"], groups, paired=True,
                                 n_resamples=request.resamples, seed=request.seed)
                rows.append(_row(classifier.label, attribute, ADAPTED_VS_ORIGINAL, paired.mae.as_dict(),
                                 paired.r.as_dict() if paired.r else None, len(groups), paired.n_templates[1])
                            | {"change_detected": paired.change_detected, "change_band": paired.change_band})
            if {"original", "adapted", "noe"} <= set(tables):
                gain = improvement(tables["original"], tables["adapted"], tables["noe"], groups,
                                   n_resamples=request.resamples, seed=request.seed)
                rows.append(_row(classifier.label, attribute, GAIN, gain.mae_difference.as_dict(),
                                 gain.r_difference.as_dict() if gain.r_difference else None, len(groups),
                                 gain.n_templates))
            for row in rows[start:]:
                row["n_adapted_templates"] = len(tables["adapted"].templates) if "adapted" in tables else 0
    return pd.DataFrame(rows, columns=["classifier", "attribute", "comparison", "mae", "mae_ci_low", "mae_ci_high",
                                       "r", "r_ci_low", "r_ci_high", "n_groups", "n_templates", "n_adapted_templates",
                                       "change_detected", "change_band"])


def _row(classifier: str, attribute: str, comparison: str, m: dict, r: dict | None, n: int,
         n_templates: int) -> dict[str, Any]:
    return {"classifier": classifier, "attribute": attribute, "comparison": comparison, "mae": m["value"],
            "mae_ci_low": m["ci_low"], "mae_ci_high": m["ci_high"],
            "r": np.nan if r is None else r["value"], "r_ci_low": np.nan if r is None else r["ci_low"],
            "r_ci_high": np.nan if r is None else r["ci_high"], "n_groups": n, "n_templates": n_templates,
            "change_detected": None, "change_band": np.nan}


#: the characteristics rows that compare adapted with original on the same rewrites
ACCEPTED_ORIGINALS, ADAPTED_SET = "original templates (filled), accepted ones", "adapted templates (filled)"
CHARACTERISTIC_CHANGE = "adapted − original (same rewrites, paired)"


def characteristics_frame(result: AdaptationResult, domain_sample: int = 300) -> pd.DataFrame:
    """Table 3 / Figs. 7–8 per set: the original and adapted sentences (filled with the anchor), the NOE
    sentences as found, and a seeded sample of domain sentences; each column with a 95% bootstrap interval
    over the set's sentences (`<column>_ci_low`, `<column>_ci_high`).

    Adapted templates are compared with the originals *of the accepted rewrites* (a row of their own beside
    all originals) and by the paired difference rewrite − original with a paired bootstrap (issue 30: all
    originals vs the accepted rewrites mixed in which templates were accepted)."""
    import random

    rewrites = result.rewrites
    accepted = [r for r in rewrites if r.status == ACCEPTED]
    sets = {
        "original templates (filled)": list(dict.fromkeys(r.original for r in rewrites)),
        ACCEPTED_ORIGINALS: [r.original for r in accepted],
        ADAPTED_SET: [r.cleaned for r in accepted],
        "NOEs (as found)": [t.attrs.get("sentence", "") for t in (result.noe_templates.templates
                                                                  if result.noe_templates else [])],
    }
    if result.noes is not None:
        pool = list(result.noes.corpus.texts)
        sets["domain sample"] = random.Random(result.request.seed).sample(pool, min(domain_sample, len(pool)))
    rows = []
    for name, texts in sets.items():
        row: dict[str, Any] = {"set": name, **characteristics(texts)}
        for key, (low, high) in characteristic_intervals(texts, result.request.resamples,
                                                         result.request.seed).items():
            row[f"{key}_ci_low"], row[f"{key}_ci_high"] = low, high
        rows.append(row)
    if accepted:
        change: dict[str, Any] = {"set": CHARACTERISTIC_CHANGE, "n": len(accepted)}
        for key, (value, low, high) in characteristic_differences(
                [r.original for r in accepted], [r.cleaned for r in accepted], result.request.resamples,
                result.request.seed).items():
            change[key], change[f"{key}_ci_low"], change[f"{key}_ci_high"] = value, low, high
        rows.append(change)
    return pd.DataFrame(rows)


def similarity_summary(result: AdaptationResult) -> dict[str, Any]:
    """Table 4: mean cosine original ↔ adapted (MiniLM), bootstrap CI over rewrites, per kind and overall."""
    frame = result.similarity if result.similarity is not None else pd.DataFrame(columns=["kind", "cosine"])
    out: dict[str, Any] = {}
    values = frame["cosine"].dropna().to_numpy(dtype=float)
    out["all"] = bootstrap_mean(values, n_resamples=max(result.request.resamples, 1),
                                seed=result.request.seed).as_dict()
    for kind, group in frame.groupby("kind", sort=False):
        out[kind] = bootstrap_mean(group["cosine"].dropna().to_numpy(dtype=float),
                                   n_resamples=max(result.request.resamples, 1), seed=result.request.seed).as_dict()
    return out


def deviations(result: AdaptationResult) -> list[str]:
    """Where this run departs from the paper, one sentence each (shown on the page and in docs)."""
    request = result.request
    notes = []
    if request.n_examples != 15:
        notes.append(f"The prompt shows {request.n_examples} domain examples (the paper: 15).")
    if request.temperature not in (0.0, 0.01):
        notes.append(f"Rewriting samples at temperature {request.temperature} (the paper: 0 or 0.01).")
    if request.max_new_tokens != 102:
        notes.append(f"Rewrites are cut at {request.max_new_tokens} new tokens (the paper: 102 for Wikipedia).")
    if request.model == "smollm2-135m-instruct":
        notes.append("The rewriting model is SmolLM2-135M-Instruct (the offline model; the paper: LLaMA-3 8B/70B "
                     "and Mixtral-8x7B), so rewrites are far weaker: judge them side by side below.")
    notes.append("The domain is BOLD's Wikipedia sentences, not Wikipedia Talk pages or tweets, unless a corpus was "
                 "uploaded." if "BOLD" in request.corpus.name else f"The domain corpus is {request.corpus.name}.")
    notes.append("Name lists are smaller than the paper's (20 names per sex; 12 countries x 10 names) and written by "
                 "the project from public rankings (sources in the identity-terms file).")
    notes.append("One rejection rule beyond the paper: a reply that quotes the original sentence inside commentary "
                 "is not a rewrite and is rejected.")
    notes.append("NOE templates are sentences with exactly one person name (the paper gives no rule); the comparison "
                 "with the NOEs uses the name groups only, with each set's background over those groups.")
    notes.append(f"Spelling checker: {CHECKER}.")
    return notes


def report_json(result: AdaptationResult) -> dict[str, Any]:
    if not result.complete:
        return {"status": result.status, "stage": result.stage, "run_ids": result.run_ids}
    frame = vbcm_frame(vbcm_results(result))
    vectors: dict[str, Any] = {}
    for _, row in frame.iterrows():
        vectors.setdefault(row["classifier"], {}).setdefault(row["attribute"], {}).setdefault(row["set"], {})[
            row["group"]] = {"value": row["vbcm"], "ci_low": row["ci_low"], "ci_high": row["ci_high"]}
    compared: dict[str, Any] = {}
    for _, row in comparisons(result).iterrows():
        compared.setdefault(row["classifier"], {}).setdefault(row["attribute"], {})[row["comparison"]] = {
            "mae": {"value": row["mae"], "ci_low": row["mae_ci_low"], "ci_high": row["mae_ci_high"]},
            "r": None if pd.isna(row["r"]) else {"value": row["r"], "ci_low": row["r_ci_low"],
                                                 "ci_high": row["r_ci_high"]},
            "n_groups": int(row["n_groups"]), "n_templates": int(row["n_templates"])} | (
            {"change_detected": bool(row["change_detected"]), "change_band": row["change_band"]}
            if row["comparison"] == ADAPTED_VS_ORIGINAL and row["change_detected"] is not None else {})
    return {
        "status": result.status, "run_ids": result.run_ids, "from_cache": result.from_cache,
        "templates": {"name": result.request.templates.name, "n": len(result.request.templates.templates)},
        "rewrites": rejection_summary(result), "noes": noe_summary(result), "vbcm": vectors,
        "comparisons": compared,
        "characteristics": characteristics_frame(result).to_dict(orient="records"),
        "similarity": similarity_summary(result), "deviations": deviations(result),
        "classifier_mappings": {c.label: c.mapping for c in result.request.classifiers},
    }


def report_text(result: AdaptationResult) -> str:
    if not result.complete:
        return f"run {result.status} during {result.stage}; finished batches are stored and rerunning resumes"
    lines = []
    rej = rejection_summary(result)
    lines.append(f"rewrites: {rej['n_rewrites']}, rejected {rej['rejection_rate']:.0%} ({rej['counts']})")
    noe = noe_summary(result)
    lines.append(f"NOEs: {noe['n_used']} sentences used of {noe['n_single_person']} with one person "
                 f"({noe['n_searched']} searched, {noe['n_multi_person_skipped']} with several people skipped)")
    table = comparisons(result)
    for _, row in table.iterrows():
        r = "" if pd.isna(row["r"]) else f", r {row['r']:.3f} [{row['r_ci_low']:.3f}, {row['r_ci_high']:.3f}]"
        change = ""
        if row["comparison"] == ADAPTED_VS_ORIGINAL and row["change_detected"] is not None:
            change = (f"; VBCM {'changed' if row['change_detected'] else 'unchanged'} beyond ±"
                      f"{row['change_band']:.4f} (simultaneous 95% band)")
        lines.append(f"{row['classifier']} / {row['attribute']} / {row['comparison']}: MAE {row['mae']:.4f} "
                     f"[{row['mae_ci_low']:.4f}, {row['mae_ci_high']:.4f}]{r} on {int(row['n_templates'])} "
                     f"template(s){change}")
    return "\n".join(lines)


def tables(result: AdaptationResult) -> dict[str, Any]:
    """Everything the page shows, computed once (in the background job) from a complete result."""
    if not result.complete:
        return {"status": result.status, "stage": result.stage}
    return {
        "status": result.status, "rewrites": rewrites_frame(result), "rejections": rejection_summary(result),
        "noes": noe_summary(result), "vbcm": vbcm_frame(vbcm_results(result)), "comparisons": comparisons(result),
        "characteristics": characteristics_frame(result), "similarity": similarity_summary(result),
        "deviations": deviations(result), "run_ids": result.run_ids, "from_cache": result.from_cache,
        "mappings": {c.label: c.mapping for c in result.request.classifiers},
    }


def noe_counts(noes: dict[str, Any]) -> pd.DataFrame:
    """Table 2: how the domain corpus became naturally occurring examples, step by step (from `noe_summary`)."""
    return pd.DataFrame([
        {"what": "domain sentences searched", "count": noes["n_searched"]},
        {"what": "with a person name (NER)", "count": noes["n_with_person"]},
        {"what": "with exactly one person (kept as NOE templates)", "count": noes["n_single_person"]},
        {"what": "with several people (skipped)", "count": noes["n_multi_person_skipped"]},
        {"what": "NOE templates used", "count": noes["n_used"]},
        *[{"what": f"NOE perturbations, {a}", "count": n} for a, n in noes["perturbations"].items()],
        {"what": "sentences without a person (example pool)", "count": noes["n_examples_pool"]}])


def report_download(report: dict[str, Any]) -> str:
    """The page's report (`tables`) as JSON text: frames as lists of records, NaN/±inf as null (strict JSON)."""
    from fairness_core.store.manifest import strict_json

    return strict_json({k: (v.to_dict(orient="records") if isinstance(v, pd.DataFrame) else v)
                        for k, v in report.items()}, indent=2)


def run_report(request: Any, store: Any, on_progress: Any = None, cancel: Any = None,
               executor: Any = None) -> dict[str, Any]:
    """The page's job: run (or read back) the adaptation pipeline and return its tables."""
    from fairness_core.adaptation.task import run_adaptation

    return tables(run_adaptation(request, store, on_progress=on_progress, cancel=cancel, executor=executor))
