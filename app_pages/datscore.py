"""DATScore demo: score translations with augmented translations, per direction, and meta-evaluate.

Thin page: widgets -> fairness_core.datscore (its public face) -> ui/datscore_charts.
Scoring runs as a background job through the run store; weights and ablations are recomputed from the
stored direction scores on every click (no model call).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from fairness_core import datscore as ds
from ui import common, jobs
from ui import datscore_charts as charts
from ui.report import report_button

BACKBONES = {
    "smollm2-135m-instruct": "SmolLM2-135M-Instruct — offline; the LM variant (DATScore-LM)",
    "m2m100-418m": "facebook/m2m100_418M — the paper's backbone (hub; DATScore)",
    "other": "another hub id or local directory (multilingual seq2seq = DATScore, causal LM = DATScore-LM)",
}
JOB_KEY = "datscore_job"
DEVIATIONS = (
    "Uniform term weights are BARTScore's mean over tokens (the paper writes w_t = 1; BARTScore's code averages); "
    "the plain sum (w_t = 1) and the entropy-normalised mean are offered too, so Table 6's ablation can change "
    "the weighting and the length normalisation one at a time.",
    "Entropy-weighted scores follow Eq. 1 literally (Σ_t w_t log p, not normalised by Σ w_t), so longer texts "
    "score lower.",
    "Eq. 3 can give a direction a negative weight (it then counts against DATScore); that is kept as the "
    "default, and 'negatives clipped to 0' is offered as a stated option.",
    "Eq. 3 uses only segments with every direction scored; a constant direction contributes correlation 0.",
    "For a language pair without English (not in the paper) both augmented translations go into English.",
    "Bootstrap CIs resample source segments with the Eq. 3 weights held fixed (computed once on the corpus).",
    "Offline there is no translation model: the LM variant (DATScore-LM) lets a causal LM translate with a chat "
    "prompt and score log P(Y | translation prompt with X). It is not the paper's M2M-100 DATScore.",
    "Through an OpenAI-compatible endpoint (DATScore-LM), the Eq. 4 entropies are a lower bound computed from the "
    "server's top-20 log-probs (a server never returns the whole distribution), and X→Y is scored after the prompt "
    "in a plain User/Assistant format without an end-of-reply token; an endpoint without prompt log-probs cannot "
    "be used.",
)
#: said on the page whenever the LM variant ran (issue 23: its "translations" read like "El tradendo a la comería")
OFFLINE_LM_CANNOT_TRANSLATE = (
    "The small offline LM cannot translate: Trans1 and Trans2 below are not translations, so the directions into "
    "and out of them measure how the LM continues a prompt, not translation quality. Read the numbers as a "
    "demonstration of the method's arithmetic (Eqs. 1–4); with a real translation model (M2M-100 and the like, "
    "online) they become the paper's DATScore."
)

st.title("DATScore demo")
st.caption("*DATScore: Evaluating Translation with Data Augmented Translations* — builds on BARTScore (Yuan et "
           "al., 2021). Scores Hypo against Src, Ref and two augmented translations (Trans1 = Src translated, "
           "Trans2 = Ref translated) in 8 directions (Eq. 1), weighted one-vs-rest (Eq. 3) into DATScore (Eq. 2).")
with st.expander("Deviations from the paper (also in docs/datscore.md)"):
    for line in DEVIATIONS:
        st.markdown(f"- {line}")  # markdown: developer text

source = st.radio("Data", ["Synthetic demo set (fr→en)", "Upload segments (src, ref, hypo)",
                           "Upload direction scores (no model)"], horizontal=True, key="ds_source")


# ------------------------------------------------------------------ direction scores uploaded: instant
def direction_upload_view() -> None:
    upload = st.file_uploader("Direction scores CSV: segment_id,direction,score", type=["csv"], key="ds_dir_file")
    left, right = st.columns(2)
    rr_file = left.file_uploader("Optional relative ranking CSV: better_id,worse_id[,group]", type=["csv"],
                                 key="ds_dir_rr")
    da_file = right.file_uploader("Optional direct assessment CSV: segment_id,score", type=["csv"], key="ds_dir_da")
    if upload is None:
        st.info("Upload a CSV of direction scores (direction labels are free text) to get Eq. 3 weights and Eq. 2 "
                "scores; add human judgements for Kendall τ-like (Eq. 5) or Pearson |r|.")
        return
    try:
        scores = ds.read_direction_scores(upload.name, upload.getvalue())
        rr = ds.read_relative_ranking(rr_file.name, scores.segments, rr_file.getvalue(), source=upload.name) \
            if rr_file else None
        da = ds.read_direct_assessment(da_file.name, scores.segments, da_file.getvalue(), source=upload.name) \
            if da_file else None
    except ds.RequestError as error:
        st.error(common.escape_markdown(str(error)))
        return
    for note in scores.notes:
        st.caption(common.escape_markdown(note))
    result = ds.corpus_scores(scores.segments, scores.directions, scores.matrix)
    st.subheader("Direction weights (Eq. 3)")
    st.dataframe(ds.weights_table(result), hide_index=True, width="stretch")
    negative = ds.negative_weight_note(result.weights_dict())
    if negative:
        st.warning(common.escape_markdown(negative))
    st.plotly_chart(charts.correlation_heatmap(result.correlation_table()), width="stretch")
    st.subheader("DATScore per segment (Eq. 2)")
    st.dataframe(pd.DataFrame({"segment_id": result.segments, "DATScore": result.scores}), hide_index=True,
                 width="stretch")
    if rr or da:
        variant_list = ds.uploaded_variants(result, scores.segments, scores.directions, scores.matrix)
        st.dataframe(pd.DataFrame(ds.meta_table(variant_list, rr, da)), hide_index=True, width="stretch")
        if da and not rr:
            st.caption("The |r| intervals here resample segments one by one: a direct-assessment file names no "
                       "source, so hypotheses of one source are treated as independent and the intervals are too "
                       "narrow when sources share hypotheses; score the segments with a group column to resample "
                       "sources.")


if source.startswith("Upload direction"):
    direction_upload_view()
    st.stop()

# ------------------------------------------------------------------ segments: request
with st.expander("Segments, languages and backbone", expanded=True):
    ranking: tuple = ()
    try:
        if source.startswith("Synthetic"):
            full = ds.load_synthetic()
            n_sources = st.slider("Sources to score (each has 6 degraded hypotheses)", 2, 30, 3, key="ds_n_sources",
                                  help="A subsample keeps the CPU run short; the choice is stated with the results.")
            segments = full.subset(int(n_sources)) if n_sources < 30 else full
            src_lang, tgt_lang = ds.SYNTHETIC_SRC_LANG, ds.SYNTHETIC_TGT_LANG
            ranking = segments.ranking
            st.caption("**Synthetic**: project-written references; hypotheses degraded by word drop, swap, entity "
                       "change, negation and an untranslated span, applied cumulatively — the known quality order "
                       "replaces human judgements. The levels are balanced in words (LM token counts still differ), "
                       "and length is reported as a covariate (the 'length alone' row).")
        else:
            upload = st.file_uploader("Segments CSV: src, ref, hypo (+ segment_id, score, group)", type=["csv"],
                                      key="ds_seg_file")
            rr_upload = st.file_uploader("Optional relative ranking CSV: better_id,worse_id[,group]", type=["csv"],
                                         key="ds_seg_rr")
            c1, c2 = st.columns(2)
            src_lang = c1.text_input("Source language (ISO 639-1)", "fr", key="ds_src_lang")
            tgt_lang = c2.text_input("Target language (ISO 639-1)", "en", key="ds_tgt_lang")
            if upload is None:
                st.info("Upload segments to score.")
                st.stop()
            segments = ds.read_segments(upload.name, upload.getvalue())
            if rr_upload is not None:
                ranking = tuple(ds.read_relative_ranking(rr_upload.name, [s.segment_id for s in segments.segments],
                                                      rr_upload.getvalue(), source=upload.name))
        b1, b2 = st.columns([3, 1])
        backbones = {**BACKBONES, **common.configured_endpoints()}  # endpoints.toml only: no URL is typed here
        choice = b1.selectbox("Backbone", list(backbones), format_func=backbones.get, key="ds_backbone")
        model = b1.text_input("Model id or path", key="ds_model_custom").strip() if choice == "other" else choice
        typed_problem = common.model_id_problem(model) if choice == "other" else None
        if typed_problem:
            raise ds.RequestError(typed_problem)
        max_new = int(b2.number_input("Max tokens per augmented translation", 8, 128, 32, key="ds_max_new"))
        request = ds.ScoreRequest(segments, src_lang, tgt_lang, model or " ", max_new)
    except ds.RequestError as error:
        st.error(common.escape_markdown(str(error)))
        st.stop()
    trans1, trans2 = ds.augmentation_languages(request.src_lang, request.tgt_lang)
    st.caption(common.escape_markdown(
        f"{len(segments.segments)} segments; Trans1 = Src → {trans1}, Trans2 = Ref → {trans2} "
               f"(Section 4.1). Work: {len(segments.segments) * 8} scored directions and "
               f"{len({s.src for s in segments.segments}) + len({s.ref for s in segments.segments})} translations."))

store, executor = common.get_store(), common.get_executor()


try:
    outcome = ds.find_stored(request, store)
except ds.ModelUnavailableError as error:
    st.error(common.escape_markdown(str(error)))
    st.stop()

job_request = {"data": segments.content_hash(), "src": request.src_lang, "tgt": request.tgt_lang, "model": model,
               "max_new": max_new, "store": str(store.path)}
job_key = jobs.key_for("datscore", job_request)
st.session_state[JOB_KEY] = job_key
if outcome is None:
    job = jobs.get(job_key)
    unavailable = ds.preset_unavailable(model)
    if unavailable is not None:
        st.warning(common.escape_markdown(unavailable))
    elif choice != "other" and choice not in BACKBONES:  # a configured endpoint: can it give prompt log-probs?
        unavailable = ds.endpoint_problem(model)
        if unavailable:
            st.warning(common.escape_markdown(unavailable))
    if st.button("Score", type="primary", key="ds_run",
                 disabled=unavailable is not None or (job is not None and job.running)):
        jobs.start(job_key, lambda on_progress, cancel: ds.run_pipeline(request, store, on_progress, cancel,
                                                                     executor=executor), label="DATScore")
        st.session_state.setdefault("ds_started_here", set()).add(job_key)
    job = jobs.show(job_key, label="DATScore")
    if job is not None and job.done and job.error is None and job.result is not None:
        outcome = job.result
    if outcome is None:
        st.stop()

# ------------------------------------------------------------------ results

label = ds.metric_label_for(outcome.backbone["kind"])
if outcome.backbone["kind"] != "seq2seq":
    st.warning(f"**{common.escape_markdown(label)}** — " + common.escape_markdown(
        f"LM variant: {ds.backbone_name(outcome.backbone)} translates with a chat prompt and scores "
        "log P(Y | translation prompt with X). This is not the paper's seq2seq DATScore.")
        + ("" if outcome.backbone.get("entropy") else " **" + OFFLINE_LM_CANNOT_TRANSLATE + "**"))
if outcome.backbone.get("entropy"):  # an endpoint
    st.info(common.escape_markdown(f"Entropy weights (Eq. 4) are {outcome.backbone['entropy']}: the "
                                   "entropy-weighted variants are approximations."))
if segments.synthetic:
    st.info(common.escape_markdown(f"Synthetic data: {segments.name}. τ below is measured against the known "
                                   "degradation order, not human judgements."))

w1, w2 = st.columns(2)
term_weighting = w1.radio("Token aggregation (Eq. 1)", [ds.ENTROPY, ds.UNIFORM, ds.SUM, ds.ENTROPY_MEAN],
                          key="ds_terms", format_func=ds.TERM_LABELS.get)
averaging = w2.radio("Direction weights", [ds.ONE_VS_REST, ds.UNIFORM, ds.ONE_VS_REST_CLIPPED], key="ds_avg",
                     format_func={ds.ONE_VS_REST: "one-vs-rest (Eq. 3)", ds.UNIFORM: "uniform average",
                                  ds.ONE_VS_REST_CLIPPED: "Eq. 3, negatives clipped to 0 (not the paper)"}.get)
order = [s.segment_id for s in segments.segments]
ids, matrix = ds.score_matrix(outcome.scores, term_weighting, segment_order=order)
result = ds.corpus_scores(ids, ds.DIRECTION_LABELS, matrix, averaging)

segment_tab, corpus_tab = st.tabs(["One segment", "The corpus"])
with segment_tab:
    by_id = {s.segment_id: s for s in segments.segments}
    chosen = st.selectbox("Segment", ids, key="ds_segment",
                          format_func=lambda i: f"{i}: {' '.join(by_id[i].hypo.split())[:80]}")
    seg = by_id[chosen]
    st.text(f"Src:    {seg.src}\nRef:    {seg.ref}\nHypo:   {seg.hypo}\n"
            f"Trans1: {outcome.translations.get((ds.TRANS1, seg.src), '')}   (Src → {trans1}, augmented)\n"
            f"Trans2: {outcome.translations.get((ds.TRANS2, seg.ref), '')}   (Ref → {trans2}, augmented)")
    score_value = result.scores[ids.index(chosen)]
    st.metric(f"{label} of this segment (Eq. 2)", f"{score_value:.3f}")
    st.plotly_chart(charts.direction_bars(ds.segment_view(outcome.scores, chosen, result), term_weighting),
                    width="stretch")
    common.how_to_read("Each bar is one direction X→Y: how likely the backbone finds Y given X (Eq. 1; higher = "
                       "better). The colour and label give the direction's corpus weight from Eq. 3: a direction "
                       "that disagrees with the others gets a low (even negative) weight. DATScore is the sum of "
                       "weight × score over the 8 bars.")
    into = st.selectbox("Token view of a direction into the hypothesis", [d.label for d in ds.DIRECTIONS
                                                                          if d.into_hypo], key="ds_tokens_dir")
    tokens = ds.token_frame(outcome.scores, chosen, into)
    if not tokens.empty:
        st.plotly_chart(charts.token_chart(tokens), width="stretch")
        st.dataframe(tokens, hide_index=True, width="stretch")
        common.how_to_read("Bars: log-probability of each hypothesis token given X and the tokens before it. Line: "
                           "the entropy of the model's whole next-token distribution at that step (Eq. 4), the "
                           "weight the token gets under entropy weighting — uncertain steps count more.")

with corpus_tab:
    st.subheader("Direction weights (Eq. 3)")
    table = ds.weights_table(result)
    if averaging != ds.UNIFORM:
        table = ds.with_weight_intervals(table, matrix, [by_id[i].group or i for i in ids])
    left, right = st.columns(2)
    left.dataframe(table, hide_index=True, width="stretch")
    right.plotly_chart(charts.weights_bars(table), width="stretch")
    st.caption(common.escape_markdown(
        f"Computed once over the {result.n_weight_segments} fully scored segments of this corpus. The 95% "
               "interval of each Eq. 3 weight resamples source segments (with all their hypotheses) and "
               "recomputes the correlations."))
    negative = ds.negative_weight_note(ds.eq3_weights(matrix))
    if negative:
        st.warning(common.escape_markdown(negative))
    st.subheader("Correlation between directions")
    st.plotly_chart(charts.correlation_heatmap(result.correlation_table()), width="stretch")
    common.how_to_read("Pearson r between the scores of two directions over the segments. Eq. 3 sums each row "
                       "(without the diagonal): that sum is the direction's weight.")
    human = {s.segment_id: s.human for s in segments.segments if s.human is not None}
    if ranking or human:
        matrices = {tw: ds.score_matrix(outcome.scores, tw, segment_order=order) for tw in ds.TERM_WEIGHTINGS}
        rows = pd.DataFrame(ds.meta_table(ds.variants(matrices, term_weighting=term_weighting,
                                                hypo_tokens=ds.hypothesis_tokens(outcome.scores)),
                                       ranking or None, human or None, n_resamples=1000,
                                       units={s.segment_id: s.group or s.segment_id for s in segments.segments}))
        statistic = "Kendall τ-like (Eq. 5)" if ranking else "Pearson |r|"
        st.subheader("Meta-evaluation: " + ("Kendall τ-like (Eq. 5)" if ranking else "Pearson |r|")
                     + (" — synthetic" if segments.synthetic else ""))
        table6 = rows[rows["kind"].isin(["full", "ablation", "covariate"])]
        st.dataframe(table6[["variant", "changes", "value", "ci_low", "ci_high", "difference", "difference_ci_low",
                             "difference_ci_high", "n", "units"]], hide_index=True, width="stretch")
        common.how_to_read("Table 6: each row changes exactly one thing relative to the full DATScore (first row). "
                           "*difference* is its value minus the full DATScore's, with a paired 95% bootstrap "
                           "interval (both computed on the same resampled source segments): an interval that "
                           "excludes 0 is a difference these sources show; two marginal intervals that overlap say "
                           "nothing either way. *length alone* ranks hypotheses by their token count (fewer = "
                           "better): how much length by itself explains.")
        reference = float(rows[rows["variant"] == ds.FULL_NAME]["value"].iloc[0]) if ranking or human else None
        st.plotly_chart(charts.ablation_bars(rows[rows["kind"].isin(["single", "facet"])], reference,
                                             f"{statistic}, each direction alone"), width="stretch")
        st.plotly_chart(charts.ablation_bars(rows[rows["kind"] == "leave-one-out"], reference,
                                             f"{statistic}, without one direction"), width="stretch")
        common.how_to_read("Fig. 2 of the paper on this data: each direction alone and DATScore without one "
                           "direction (dashed line: the full DATScore). Bars carry 95% bootstrap intervals over "
                           "source segments; whether a bar differs from the full DATScore is the paired "
                           "difference interval in the table above (the *difference* columns), not bar overlap.")
    # A result read back from the store right after this session's job computed it was computed now, not served.
    finished = jobs.get(job_key)
    computed_here = (job_key in st.session_state.get("ds_started_here", set()) and finished is not None
                     and finished.done and finished.error is None and finished.result is not None
                     and not finished.result.from_cache)
    for run_id in (outcome.translations_run, outcome.directions_run):
        info = store.get_run(run_id)
        if info is not None:
            common.manifest_box(info.manifest, run_id, outcome.from_cache and not computed_here)
            common.export_buttons(run_id, key=f"ds_export_{run_id}")
    report_button([outcome.translations_run, outcome.directions_run], key="ds_report")
