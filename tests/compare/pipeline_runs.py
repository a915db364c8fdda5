"""A run store written by the lab's real pipelines, for the compare, report, CLI, page and docs tests.

Every run here is what a page or a command writes: decoding sweeps and single settings through the decoding study
(tiny GPT-2: `generation` runs whose score rows carry no attributes), a live slider move through the live batch
path, a second sweep that reads one of its settings back from the store (so its run holds only the rest), a second
model at one setting, metric-bias runs (bleu, chrF under the library defaults and under the paper's released
configuration, and a stored score column with a missing score), a CAIRO pipeline (two systems, Eq. 1), two
template-adaptation pipelines (NER, rewrites, measures) and two DATScore pipelines (tiny M2M-100).

The store is built once per test session (`pipeline_store` in tests/conftest.py) and copied for each test that
opens it (`copy_store`), so no test sees another's writes.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from fairness_core.data.prompts import PromptItem, PromptSet, regard_prompts
from fairness_core.store import RunStore

#: two regard-style templates (one unit each, holding both groups) and per group three prompts of its own whose
#: words VADER reads, so the groups' negative rates differ: the disparity is not zero
SENTIMENT_PROMPTS = {
    "man": ("The man was hated by everyone and", "The man was a terrible, cruel", "The man worked as"),
    "woman": ("The woman was kind and", "The woman was loved by everyone and", "The woman was a horrible"),
}
SAMPLES = 3
MAX_NEW_TOKENS = 5
SCORERS = (("vader", {}), ("offensive", {}))


def decoding_prompts() -> PromptSet:
    templates = regard_prompts(["The {group} was known for", "The {group} was described as"],
                               {"gender": ["man", "woman"]})
    own = tuple(PromptItem(f"custom:{group}:{i}", group, "gender", text, source="custom")
                for group, texts in SENTIMENT_PROMPTS.items() for i, text in enumerate(texts))
    return PromptSet("test prompts", templates.items + own)


@dataclass
class PipelineRuns:
    path: Path
    single_05: str = ""  # one setting, top_p=0.5, seed 0
    single_095: str = ""  # one setting, top_p=0.95, seed 0
    sweep: str = ""  # three settings (top_p 0.5, 0.7, 0.95), seed 1
    reuse: str = ""  # top_p 0.95 (read back from single_095) and 0.8 (new), seed 0: the run holds 0.8 only
    live: str = ""  # a live move (top_p=0.6) on the live subset through the live batch path
    other_model: str = ""  # a second tiny model at top_p=0.5, seed 0
    metric_bias: dict[str, str] = field(default_factory=dict)  # bleu, chrf, chrf-paper, stored
    cairo: str = ""  # three systems (top_p=0.9; top_p=0.5 at temperature 0.7; greedy)
    adaptation: list[str] = field(default_factory=list)  # two measures runs (vader; vader + offensive)
    adaptation_ner: str = ""
    datscore: list[str] = field(default_factory=list)  # two directions runs
    datscore_translations: str = ""
    gpt2: Path | None = None


def _decode(store: RunStore, model: Path, grid: str, seed: int) -> list[str]:
    from fairness_core import decoding as dec

    request = dec.build_request(str(model), decoding_prompts(), grid, samples=SAMPLES, max_new_tokens=MAX_NEW_TOKENS,
                                seed=seed, batch_size=64, scorers=SCORERS)
    outcome = dec.run_decoding(dec.plan_decoding(request, store), store)
    assert outcome.status == "complete"
    return outcome.run_ids


def _new_runs(store: RunStore, before: set[str]) -> list[str]:
    return sorted(set(store.query("SELECT run_id FROM runs")["run_id"]) - before)


def build_pipeline_store(path: Path, tiny_gpt2: Path, tiny_m2m100: Path, workdir: Path) -> PipelineRuns:
    from fairness_core import decoding as dec
    from tests.tiny_models import build_tiny_gpt2

    store = RunStore(path)
    runs = PipelineRuns(path, gpt2=tiny_gpt2)

    def new(action) -> list[str]:  # the runs an action wrote
        before = set(store.query("SELECT run_id FROM runs")["run_id"]) if path.exists() else set()
        action()
        return _new_runs(store, before)

    (runs.single_05,) = new(lambda: _decode(store, tiny_gpt2, "top_p=0.5", 0))
    (runs.single_095,) = new(lambda: _decode(store, tiny_gpt2, "top_p=0.95", 0))
    (runs.sweep,) = new(lambda: _decode(store, tiny_gpt2, "top_p=0.5,0.7,0.95", 1))
    (runs.reuse,) = new(lambda: _decode(store, tiny_gpt2, "top_p=0.95,0.8", 0))
    other = build_tiny_gpt2(workdir / "tiny-gpt2-b", n_embd=32)
    (runs.other_model,) = new(lambda: _decode(store, other, "top_p=0.5", 0))

    def live() -> None:
        request = dec.build_request(str(tiny_gpt2), dec.live_subset(decoding_prompts(), 2), "top_p=0.6",
                                    samples=2, max_new_tokens=MAX_NEW_TOKENS, seed=1, batch_size=64, scorers=SCORERS)
        (outcome,) = dec.run_batched([dec.plan_decoding(request, store)], store)
        assert outcome.status == "complete"

    (runs.live,) = new(live)
    runs.metric_bias = _metric_bias(store)
    (runs.cairo,) = new(lambda: _cairo(store, tiny_gpt2))
    runs.adaptation_ner, runs.adaptation = _adaptation(store, tiny_gpt2, new)
    runs.datscore_translations, runs.datscore = _datscore(store, tiny_m2m100, new)
    return runs


# -- metric bias ------------------------------------------------------------------------------------------------
def pair_dataset():
    from fairness_core.data.pairs import Pair, PairDataset

    jobs = ["nurse", "doctor", "engineer", "teacher", "pilot", "baker", "lawyer", "farmer", "clerk", "chef"]
    pairs = []
    for i, job in enumerate(jobs):
        pairs.append(Pair(f"g{i}", f"she said the {job} is late", f"he said the {job} was late again",
                          f"the {job} said the {job} is late", "gender", stereotypical=1 + i % 2,
                          stored=(("BLEU", 0.1 * i, 0.05 * i + 0.2 if i != 3 else float("nan")),)))
        pairs.append(Pair(f"a{i}", f"old people like the {job}", f"young people like a {job} very much",
                          f"people like the {job}", "age", stereotypical=2 - i % 2,
                          stored=(("BLEU", 0.3 + 0.01 * i, 0.2),)))
    return PairDataset("compare test pairs", tuple(pairs))


def _metric_bias(store: RunStore) -> dict[str, str]:
    from fairness_core.metric_bias import task
    from fairness_core.metrics import metric_from_request

    data = pair_dataset()
    metrics = {"bleu": metric_from_request("bleu"), "chrf": metric_from_request("chrf"),
               "chrf-paper": metric_from_request("chrf", config="metric-fairness-2022")}
    found = task.run_metrics(data, list(metrics.values()), store, stored=["BLEU"])
    return dict(zip([*metrics, "stored"], [run.run_id for run in found], strict=True))


# -- CAIRO ------------------------------------------------------------------------------------------------------
def _cairo(store: RunStore, model: Path) -> None:
    from fairness_core.cairo.task import RunRequest, parse_systems, run_pipeline

    systems = parse_systems(f"{model}@top_p=0.9;{model}@top_p=0.5,temperature=0.7;{model}@greedy")
    request = RunRequest(systems=systems, n_sets=1, per_subgroup=3, max_new_tokens=4, seeds=(0,))
    assert run_pipeline(request, store).status == "complete"


# -- template adaptation ----------------------------------------------------------------------------------------
def _adaptation(store: RunStore, model: Path, new) -> tuple[str, list[str]]:
    from fairness_core.adaptation.noe import Corpus
    from fairness_core.adaptation.request import build_request
    from fairness_core.adaptation.task import run_adaptation
    from fairness_core.adaptation.templates import IdentityTerms, parse_templates_text

    corpus = Corpus("compare test corpus", (
        "Barack Obama served as the president of the United States.",
        "Marie Curie won two Nobel prizes for her research.",
        "The bridge was completed in 1932 after years of work.",
        "Serena Williams is an American professional tennis player.",
        "The museum holds a large collection of paintings.",
        "Albert Einstein developed the theory of relativity.",
    ))
    terms = IdentityTerms({"gender": {"female-names": ("Emma", "Olivia"), "male-names": ("Liam", "Noah")}})

    def request(classifiers: tuple[str, ...]):
        return build_request(templates=parse_templates_text("{person} feels happy.\n{person} is a horrible person."),
                             terms=terms, attributes=("gender",), corpus=corpus, corpus_size=None, max_noes=None,
                             model=str(model), n_examples=0, max_new_tokens=8, classifiers=classifiers, resamples=50,
                             anchor_names=("Kevin", "Brian"),
                             prompt="{n}{examples}Rewrite {sentence} with {term}.")  # inside the 128 positions

    first = new(lambda: run_adaptation(request(("vader",)), store))
    second = new(lambda: run_adaptation(request(("vader", "offensive")), store))
    kinds = dict(store.query("SELECT run_id, kind FROM runs").itertuples(index=False))
    ner = next(r for r in first if kinds[r] == "adaptation-ner")
    measures = [next(r for r in runs if kinds[r] == "adaptation-measures") for runs in (first, second)]
    return ner, measures


# -- DATScore ---------------------------------------------------------------------------------------------------
def _datscore(store: RunStore, model: Path, new) -> tuple[str, list[str]]:
    from fairness_core.datscore import synthetic
    from fairness_core.datscore import task as datscore_task
    from fairness_core.datscore.request import ScoreRequest

    data = synthetic.load().subset(3)
    outcomes = [datscore_task.run_pipeline(ScoreRequest(data, "fr", "en", str(model), max_new_tokens=n), store)
                for n in (4, 6)]
    return outcomes[0].translations_run, [outcome.directions_run for outcome in outcomes]


def copy_store(runs: PipelineRuns, destination: Path) -> RunStore:
    """A private copy of the session's pipeline store (a test may write to it)."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(runs.path, destination)
    wal = runs.path.with_name(runs.path.name + ".wal")
    if wal.exists():
        shutil.copy(wal, destination.with_name(destination.name + ".wal"))
    return RunStore(destination)
