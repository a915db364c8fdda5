"""A check's spec: one TOML file naming the system, the studies and the pass/fail criteria (docs/checks.md).

    [check]      name
    [system]     model + setting (+ quantization), or generations = RUN_ID (a stored or imported generation run)
    [decoding]   prompts, groups, counterfactual, word_lists, samples, max_new_tokens, seed, threshold, resamples,
                 scorers
    [audit]      scorer (or metric), column, threshold, templates, format, terms, resamples, seed
    [metric_bias] data, subset, file, metrics, model, resamples
    [stereotypes] benchmark, subset, limit, seed, resamples (the [system] model is scored)
    [baseline]   run = ID | check = ID | model + setting (+ quantization)
    [[criteria]] name, study, measure, group, metric, against, value_at_most | upper_at_most | value_at_least |
                 lower_at_least | equivalent_within, undetectable + effect, alpha

Everything that can be checked without a model is checked here (keys, types, files, prompt sets, measure and group
names), so a bad spec is one sentence naming its key or file (`SpecError`, exit 2) before any work starts. Paths are
relative to the spec file's folder.
"""

from __future__ import annotations

import difflib
import hashlib
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairness_core.data.prompt_set import PromptError, PromptSet
from fairness_core.data.quoting import quoted

MAX_SPEC_BYTES = 1_000_000
STUDIES = ("decoding", "audit", "metric-bias", "stereotypes")
#: which number a criterion compares with its threshold, and how
CONDITIONS = {"value_at_most": ("value", "<="), "upper_at_most": ("ci_high", "<="),
              "value_at_least": ("value", ">="), "lower_at_least": ("ci_low", ">="),
              # equivalence: both ends of the 95% interval within ±x (two one-sided tests, each at 2.5%)
              "equivalent_within": ("interval", "within")}
DEFAULT_SCORERS = ("vader", "offensive", "jigsaw-toxicity", "negative_words")
#: group words that are not a group name
ALL_FAMILIES, EVERY_FAMILY, EVERY_GROUP, ALL_GROUPS = "all families", "every family", "every group", "all groups"
#: the cell `slices` ranks worst over every group, template, setting and (for prompts of several attributes) every
#: attribute and intersection: judged by its value and interval (issue 46)
WORST_CELL = "worst cell"
EVERY_TERM, OVERALL, EVERY_ATTRIBUTE = "every term", "overall", "every attribute"
AUDIT_MEASURES = ("fpr", "flip_rate", "shift", "subgroup_auc", "bpsn_auc", "bnsp_auc", "fped", "fpr_overall")
METRIC_BIAS_MEASURES = ("bias",)
#: what a stereotypes criterion reads, per benchmark (issue 44): CrowS-Pairs' share of pairs preferring the
#: stereotype in percent (50: no preference) and its likelihood_diff; StereoSet's overall SS, LMS and ICAT; BBQ's
#: bias scores and accuracy per context condition
STEREOTYPE_MEASURES = {"crows-pairs": ("pct_stereotype", "likelihood_diff"), "stereoset": ("ss", "lms", "icat"),
                       "bbq": ("bias_ambig", "bias_disambig", "accuracy_ambig", "accuracy_disambig")}
EVERY_BIAS_TYPE, EVERY_CATEGORY = "every bias type", "every category"
DEFAULT_ALPHA = 0.05
#: the power the design must have at the criterion's `effect` for "no disparity detected" to pass (the decoding
#: summary's smallest detectable disparity and the planner's sizes are both at this power)
POWER = 0.8

KEYS = {
    "check": ("name",),
    "system": ("model", "setting", "quantization", "generations", "system"),
    "decoding": ("prompts", "groups", "bold_per_group", "counterfactual", "word_lists", "samples", "max_new_tokens",
                 "seed", "threshold", "resamples", "scorers"),
    "audit": ("scorer", "metric", "column", "threshold", "templates", "format", "terms", "resamples", "seed"),
    "metric_bias": ("data", "subset", "file", "metrics", "model", "resamples"),
    "stereotypes": ("benchmark", "subset", "limit", "seed", "resamples"),
    "baseline": ("run", "check", "model", "setting", "quantization"),
    "criteria": ("name", "study", "measure", "group", "metric", "against", *CONDITIONS, "undetectable", "effect",
                 "alpha"),
}


class SpecError(ValueError):
    """A spec that cannot be run; one sentence naming the file and the key (or the file it names)."""


@dataclass(frozen=True)
class SystemSpec:
    model: str | None  # preset key, hub id, local folder, .gguf or endpoint source
    setting: str  # one decoding setting in grid syntax ("top_p=0.9")
    quantization: str = "none"
    generations: str | None = None  # a stored generation run instead of generating
    system: str | None = None  # which system of that run (its name), when it holds several

    def record(self) -> dict[str, Any]:
        return {"model": self.model, "setting": self.setting, "quantization": self.quantization,
                "generations": self.generations, "system": self.system}

    def label(self) -> str:
        if self.generations:
            return f"run {self.generations}" + (f" ({self.system})" if self.system else "")
        return f"{self.model} · {self.setting}" + (f" [{self.quantization}]" if self.quantization != "none" else "")


@dataclass(frozen=True)
class DecodingSpec:
    prompts: PromptSet | None  # None: the system's generations are read from a stored run (they bring their own)
    prompts_source: str  # as the spec gives it
    samples: int = 10
    max_new_tokens: int = 20
    seed: int = 0
    threshold: float = -0.25
    resamples: int = 1000
    scorers: tuple[str, ...] = DEFAULT_SCORERS
    notes: tuple[str, ...] = ()

    def record(self) -> dict[str, Any]:
        prompts = None if self.prompts is None else {"source": self.prompts_source, "name": self.prompts.name,
                                                     "hash": self.prompts.content_hash(), "n": len(self.prompts.items)}
        return {"prompts": prompts,
                "samples": self.samples, "max_new_tokens": self.max_new_tokens, "seed": self.seed,
                "threshold": self.threshold, "resamples": self.resamples, "scorers": list(self.scorers)}


@dataclass(frozen=True)
class AuditSpec:
    scorer: str | None
    metric: str | None
    column: str | None
    threshold: float | None
    fmt: str
    templates: str | None  # a path (resolved) or None for the built-in set
    terms: str | None
    resamples: int
    seed: int
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict)  # the terms' groups (validated)
    content: str = ""  # hash of the templates and terms read

    def record(self) -> dict[str, Any]:
        return {"scorer": self.scorer, "metric": self.metric, "column": self.column, "threshold": self.threshold,
                "format": self.fmt, "templates": self.templates, "terms": self.terms, "resamples": self.resamples,
                "seed": self.seed, "content": self.content}


@dataclass(frozen=True)
class MetricBiasSpec:
    data: str
    files: tuple[str, ...]
    metrics: tuple[str, ...]
    model: str | None
    resamples: int
    attributes: tuple[str, ...] = ()
    content: str = ""

    def record(self) -> dict[str, Any]:
        return {"data": self.data, "files": list(self.files), "metrics": list(self.metrics), "model": self.model,
                "resamples": self.resamples, "content": self.content}


@dataclass(frozen=True)
class StereotypesSpec:
    benchmark: str
    subset: tuple[str, ...]
    limit: int | None
    seed: int
    resamples: int
    groups: tuple[str, ...] = ()  # CrowS-Pairs bias types or BBQ categories a criterion may name

    def record(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "subset": list(self.subset), "limit": self.limit, "seed": self.seed,
                "resamples": self.resamples}


@dataclass(frozen=True)
class BaselineSpec:
    run: str | None = None
    check: str | None = None
    model: str | None = None
    setting: str | None = None
    quantization: str = "none"

    def record(self) -> dict[str, Any]:
        return {k: v for k, v in (("run", self.run), ("check", self.check), ("model", self.model),
                                  ("setting", self.setting), ("quantization", self.quantization)) if v}

    def label(self) -> str:
        if self.run:
            return f"run {self.run}"
        if self.check:
            return f"check {self.check}"
        return f"{self.model} · {self.setting}"


@dataclass(frozen=True)
class CriterionSpec:
    name: str
    study: str
    measure: str
    group: str
    condition: str | None  # a key of CONDITIONS, or None (undetectable alone)
    threshold: float | None
    undetectable: bool = False
    alpha: float = DEFAULT_ALPHA
    metric: str | None = None  # metric-bias: the metric output
    against: str | None = None  # "baseline": the paired difference with the baseline
    #: with `undetectable`: the disparity the design must detect with POWER for "nothing detected" to pass
    effect: float | None = None

    def record(self) -> dict[str, Any]:
        return {"name": self.name, "study": self.study, "measure": self.measure, "group": self.group,
                "condition": self.condition, "threshold": self.threshold, "undetectable": self.undetectable,
                "effect": self.effect, "alpha": self.alpha, "metric": self.metric, "against": self.against}

    def rule(self) -> str:
        """The pass rule in words: "upper bound <= 0.05, or no disparity detectable (p >= 0.05)"."""
        parts = []
        if self.condition is not None:
            number, op = CONDITIONS[self.condition]
            what = {"value": "value", "ci_high": "upper bound", "ci_low": "lower bound",
                    "interval": "95% interval"}[number]
            if self.against:
                what = {"value": "difference", "ci_high": "difference's upper bound",
                        "ci_low": "difference's lower bound", "interval": "difference's 95% interval"}[number]
            if op == "within":
                parts.append(f"{what} within ±{self.threshold:g}")
            else:
                parts.append(f"{what} {'≤' if op == '<=' else '≥'} {self.threshold:g}")
        if self.undetectable:
            parts.append(f"no disparity detectable (Holm-adjusted p ≥ {self.alpha:g}) by a design that detects "
                         f"{self.effect:g} with {POWER:.0%} power")
        return ", or ".join(parts)


@dataclass(frozen=True)
class CheckSpec:
    name: str
    path: str
    system: SystemSpec
    criteria: tuple[CriterionSpec, ...]
    decoding: DecodingSpec | None = None
    audit: AuditSpec | None = None
    metric_bias: MetricBiasSpec | None = None
    baseline: BaselineSpec | None = None
    text_hash: str = ""
    stereotypes: StereotypesSpec | None = None

    @property
    def studies(self) -> set[str]:
        return {c.study for c in self.criteria}

    @property
    def relative(self) -> list[CriterionSpec]:
        return [c for c in self.criteria if c.against]

    def record(self) -> dict[str, Any]:
        """What determines the check's numbers (its manifest's spec part; no file paths, their contents)."""
        return {"name": self.name, "system": self.system.record(),
                "decoding": self.decoding.record() if self.decoding else None,
                "audit": self.audit.record() if self.audit else None,
                "metric_bias": self.metric_bias.record() if self.metric_bias else None,
                **({"stereotypes": self.stereotypes.record()} if self.stereotypes else {}),
                "baseline": self.baseline.record() if self.baseline else None,
                "criteria": [c.record() for c in self.criteria]}


# ------------------------------------------------------------------------------------------------ reading
class _Table:
    """One TOML table with typed getters whose errors name `[table] key`."""

    def __init__(self, spec_name: str, table: str, values: Any, allowed: tuple[str, ...]) -> None:
        self.spec_name, self.table = spec_name, table
        if not isinstance(values, dict):
            raise SpecError(f"{spec_name}: [{table}] must be a table of keys")
        for key in values:
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f" (did you mean {quoted(close[0])}?)" if close else f"; its keys are {', '.join(allowed)}"
                raise SpecError(f"{spec_name}: [{table}] has no key {quoted(key)}{hint}")
        self.values = values

    def where(self, key: str) -> str:
        return f"{self.spec_name}: [{self.table}] {key}"

    def has(self, key: str) -> bool:
        return key in self.values

    def text(self, key: str, default: str | None = None) -> str | None:
        value = self.values.get(key, default)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise SpecError(f"{self.where(key)} must be non-empty text (got {quoted(value)})")
        return value.strip()

    def integer(self, key: str, default: int, low: int, high: int) -> int:
        value = self.values.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise SpecError(f"{self.where(key)} must be a whole number between {low:,} and {high:,} "
                            f"(got {quoted(value)})")
        return value

    def number(self, key: str, default: float | None = None) -> float | None:
        value = self.values.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise SpecError(f"{self.where(key)} must be a finite number (got {quoted(value)})")
        return float(value)

    def words(self, key: str, default: tuple[str, ...] | None = None) -> tuple[str, ...] | None:
        """A list of texts, or one text of comma-separated items."""
        value = self.values.get(key)
        if value is None:
            return default
        if isinstance(value, str):
            value = [part for part in value.split(",")]
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
            raise SpecError(f"{self.where(key)} must be a list of names, e.g. [\"man\", \"woman\"] "
                            f"(got {quoted(value)})")
        return tuple(v.strip() for v in value)

    def flag(self, key: str, default: bool = False) -> bool:
        value = self.values.get(key, default)
        if not isinstance(value, bool):
            raise SpecError(f"{self.where(key)} must be true or false (got {quoted(value)})")
        return value


def _file(spec_dir: Path, value: str, where: str) -> Path:
    path = (spec_dir / value).expanduser() if not Path(value).expanduser().is_absolute() else Path(value).expanduser()
    if not path.exists():
        raise SpecError(f"{where}: the file {value} does not exist (paths are relative to the spec's folder)")
    if path.is_dir():
        raise SpecError(f"{where}: {value} is a folder, not a file")
    return path


def _read_bytes(path: Path, where: str, limit: int) -> bytes:
    try:
        size = path.stat().st_size
        if size > limit:
            raise SpecError(f"{where}: {path.name} is {size / 1e6:.0f} MB; the limit is {limit / 1e6:.0f} MB")
        return path.read_bytes()
    except OSError as error:
        raise SpecError(f"{where}: {path} cannot be read ({error.strerror or error})") from None


def read_spec_text(path: str | Path) -> tuple[str, bytes]:
    """The spec file's text and bytes; one sentence when it cannot be read."""
    path = Path(path).expanduser()
    if not path.exists():
        raise SpecError(f"the spec file {path} does not exist")
    if path.is_dir():
        raise SpecError(f"{path} is a folder; give the check's .toml spec file")
    data = _read_bytes(path, str(path), MAX_SPEC_BYTES)
    if b"\x00" in data[:4096]:
        raise SpecError(f"{path.name} is a binary file, not a TOML spec")
    try:
        return data.decode("utf-8-sig"), data
    except UnicodeDecodeError as error:
        raise SpecError(f"{path.name} is not UTF-8 text (byte {error.start} cannot be read); save it as UTF-8") \
            from None


def load_spec(path: str | Path, endpoint_model: str | None = None) -> CheckSpec:
    """Read and check a spec file (see the module docstring). `endpoint_model`: the system's model from the
    command line's --endpoint* flags (the spec's [system] model is then left out or 'endpoint')."""
    path = Path(path).expanduser()
    text, data = read_spec_text(path)
    return parse_spec(text, path.name, path.parent, endpoint_model, hashlib.sha256(data).hexdigest())


def parse_spec(text: str, name: str, spec_dir: Path, endpoint_model: str | None = None,
               text_hash: str = "") -> CheckSpec:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SpecError(f"{name} is not valid TOML: {error}") from None
    unknown = [k for k in document if k not in KEYS and k != "metric-bias"]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(KEYS), n=1)
        hint = f" (did you mean [{close[0]}]?)" if close else f"; its tables are {', '.join(f'[{k}]' for k in KEYS)}"
        raise SpecError(f"{name} has an unknown table {quoted(unknown[0])}{hint}")
    if "metric-bias" in document:
        raise SpecError(f"{name}: the table is [metric_bias] (with an underscore), not [metric-bias]")
    check = _Table(name, "check", document.get("check", {}), KEYS["check"])
    raw_criteria = document.get("criteria")
    if not isinstance(raw_criteria, list) or not raw_criteria:
        raise SpecError(f"{name} names no criterion: add at least one [[criteria]] table")
    criteria_tables = [_Table(name, f"criteria {i}", c, KEYS["criteria"]) for i, c in enumerate(raw_criteria, 1)]
    studies = set()
    for table in criteria_tables:
        study = table.text("study")
        if study is None:
            raise SpecError(f"{table.where('study')} is missing; choose one of {', '.join(STUDIES)}")
        if study not in STUDIES:
            raise SpecError(f"{table.where('study')} {quoted(study)} is not a study; choose one of "
                            f"{', '.join(STUDIES)}")
        studies.add(study)
    system = _system(_Table(name, "system", document.get("system", {}), KEYS["system"]), endpoint_model,
                     needs_model=bool({"decoding", "stereotypes"} & studies))
    if "stereotypes" in studies and system.generations:
        raise SpecError(f"{name}: [system] generations = RUN_ID holds texts, and the stereotypes study scores a "
                        "model's likelihoods: give [system] model")
    decoding = _decoding(_Table(name, "decoding", document.get("decoding", {}), KEYS["decoding"]), spec_dir,
                         system) if "decoding" in studies else None
    audit = _audit(_Table(name, "audit", document.get("audit", {}), KEYS["audit"]), spec_dir) \
        if "audit" in studies else None
    metric_bias = _metric_bias(_Table(name, "metric_bias", document.get("metric_bias", {}), KEYS["metric_bias"]),
                               spec_dir) if "metric-bias" in studies else None
    baseline = _baseline(_Table(name, "baseline", document["baseline"], KEYS["baseline"])) \
        if "baseline" in document else None
    stereotypes = _stereotypes(_Table(name, "stereotypes", document.get("stereotypes", {}), KEYS["stereotypes"])) \
        if "stereotypes" in studies else None
    criteria = tuple(_criterion(table, decoding, audit, metric_bias, stereotypes) for table in criteria_tables)
    if decoding is not None and decoding.prompts is not None:  # the decoding study's limits, as its page applies them
        from fairness_core.decoding import LimitError, check_limits

        systems = 1 + (1 if baseline is not None and baseline.model else 0)
        try:
            check_limits(systems, len(decoding.prompts.items), decoding.samples, decoding.max_new_tokens,
                         confirmed=True)
        except LimitError as error:
            raise SpecError(f"{name}: [decoding] {error}") from None
    names = [c.name for c in criteria]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise SpecError(f"{name}: two criteria are named {quoted(repeated[0])}; give each its own name")
    if baseline is not None and baseline.model and system.generations:
        raise SpecError(f"{name}: [baseline] model generates on the check's prompts, but [system] reads stored "
                        "generations; name a baseline run or check instead")
    return CheckSpec(check.text("name") or Path(name).stem, name, system, criteria, decoding, audit, metric_bias,
                     baseline, text_hash, stereotypes)


def _setting(table: _Table, key: str, default: str | None) -> str | None:
    from fairness_core.decoding import RequestError
    from fairness_core.decoding.request import parse_configs

    value = table.text(key, default)
    if value is None:
        return None
    try:
        configs = parse_configs(value, 20)
    except RequestError as error:
        raise SpecError(f"{table.where(key)}: {error}") from None
    if len(configs) != 1:
        raise SpecError(f"{table.where(key)} {quoted(value)} names {len(configs)} settings; a system is one setting "
                        "(one value per knob)")
    for problem in configs[0].problems():
        raise SpecError(f"{table.where(key)}: {problem}")
    return value


def _model(table: _Table, key: str, value: str | None) -> str | None:
    from fairness_core.decoding import RequestError, check_model_source

    if value is None:
        return None
    if value.startswith("endpoint:") and "://" not in value:
        from fairness_core.models.endpoint import configured_endpoint

        try:
            value = configured_endpoint(value.split(":", 1)[1]).source()
        except ValueError as error:
            raise SpecError(f"{table.where(key)}: {error}") from None
    try:
        return check_model_source(value)
    except RequestError as error:
        raise SpecError(f"{table.where(key)}: {error}") from None


def _quantization(table: _Table) -> str:
    value = table.text("quantization", "none")
    if value not in ("none", "8bit", "4bit"):
        raise SpecError(f"{table.where('quantization')} must be none, 8bit or 4bit (got {quoted(value)})")
    return str(value)


def _system(table: _Table, endpoint_model: str | None, needs_model: bool) -> SystemSpec:
    generations = table.text("generations")
    model = table.text("model")
    if endpoint_model is not None:
        if model not in (None, "endpoint"):
            raise SpecError(f"{table.where('model')} is {quoted(model)}, and the command line names an endpoint; give "
                            "one of them (model = \"endpoint\" takes the command line's)")
        model = endpoint_model
    elif model == "endpoint":
        raise SpecError(f"{table.where('model')} 'endpoint' needs --endpoint NAME or --endpoint-url and "
                        "--endpoint-model on the command line")
    if generations and model:
        raise SpecError(f"{table.where('generations')}: give a model to generate with, or stored generations, not "
                        "both")
    if table.has("system") and not generations:
        raise SpecError(f"{table.where('system')} picks a system of stored generations; it needs generations = "
                        "RUN_ID")
    if not generations:
        if model is None and needs_model:
            model = "smollm2-135m-instruct"
        model = _model(table, "model", model)
    return SystemSpec(model, _setting(table, "setting", "top_p=0.9") or "top_p=0.9", _quantization(table),
                      generations, table.text("system"))


def _decoding(table: _Table, spec_dir: Path, system: SystemSpec) -> DecodingSpec:
    from fairness_core.data.counterfactual import build_counterfactual, prompt_texts, read_lists_file
    from fairness_core.data.prompts import decode_upload, load_prompt_source, parse_custom
    from fairness_core.scorers import SCORERS

    scorers = table.words("scorers", DEFAULT_SCORERS) or DEFAULT_SCORERS
    for scorer in scorers:
        if scorer not in SCORERS:
            raise SpecError(f"{table.where('scorers')}: unknown scorer {quoted(scorer)}; known: {', '.join(SCORERS)}")
    threshold = table.number("threshold", -0.25)
    assert threshold is not None
    if not -1.0 <= threshold <= 1.0:
        raise SpecError(f"{table.where('threshold')} must be between -1 and 1 (VADER's compound range)")
    resamples = table.integer("resamples", 1000, 100, 100_000)
    if system.generations:  # the stored run brings its prompts and samples
        for key in ("prompts", "groups", "bold_per_group", "counterfactual", "word_lists", "samples",
                    "max_new_tokens", "seed"):
            if table.has(key):
                raise SpecError(f"{table.where(key)} is for generating; the system reads stored generations "
                                f"(run {system.generations})")
        return DecodingSpec(None, f"run {system.generations}", threshold=threshold, resamples=resamples,
                            scorers=tuple(scorers))
    source = table.text("prompts", "regard") or "regard"
    groups = table.words("groups")
    counterfactual = table.words("counterfactual")
    per_group = table.integer("bold_per_group", 20, 1, 10_000)
    seed = table.integer("seed", 0, 0, 2**31 - 1)
    notes: list[str] = []
    try:
        if source == "regard" or source.startswith("bold:"):
            loaded = load_prompt_source(source, per_group=per_group, seed=seed)
            texts = [item.text for item in loaded.items]
        else:
            path = _file(spec_dir, source, table.where("prompts"))
            text = decode_upload(path.name, _read_bytes(path, table.where("prompts"), 5_000_000))
            loaded = None if counterfactual else parse_custom(text)
            texts = prompt_texts(text, path.name) if counterfactual else []
        if counterfactual:
            lists_value = table.text("word_lists")
            lists = read_lists_file(_file(spec_dir, lists_value, table.where("word_lists")) if lists_value else None)
            built = build_counterfactual(texts, lists, counterfactual, name=f"counterfactual {source}")
            prompts, notes = built.prompt_set, list(built.notes)
        else:
            if table.has("word_lists"):
                raise SpecError(f"{table.where('word_lists')} is for counterfactual prompts: add counterfactual = "
                                "[\"gender\"] (the attributes to swap)")
            assert loaded is not None
            prompts = loaded
            notes = list(loaded.notes)
        if groups:
            prompts = prompts.only_groups(list(groups))
    except PromptError as error:
        raise SpecError(f"{table.where('counterfactual' if counterfactual else 'prompts')}: {error}") from None
    return DecodingSpec(prompts, source, table.integer("samples", 10, 1, 1000),
                        table.integer("max_new_tokens", 20, 1, 512), seed, threshold, resamples, tuple(scorers),
                        tuple(notes))


def _audit(table: _Table, spec_dir: Path) -> AuditSpec:
    from fairness_core.audit import AuditInputError, build_request

    scorer, metric = table.text("scorer"), table.text("metric")
    if scorer and metric:
        raise SpecError(f"{table.where('metric')}: name one judge, a scorer or a metric")
    if not scorer and not metric:
        scorer = "jigsaw-toxicity"
    templates = table.text("templates")
    fmt = table.text("format")
    if templates in (None, "builtin"):
        templates_path, fmt = None, "builtin"
        if table.has("format"):
            raise SpecError(f"{table.where('format')} is for a templates file; leave it out for the built-in set")
    else:
        templates_path = _file(spec_dir, str(templates), table.where("templates"))
        fmt = fmt or "templates"
        if fmt not in ("templates", "iptts", "eec", "texts"):
            raise SpecError(f"{table.where('format')} must be templates, iptts, eec or texts (got {quoted(fmt)})")
    terms_value = table.text("terms")
    terms_path = _file(spec_dir, terms_value, table.where("terms")) if terms_value else None
    resamples = table.integer("resamples", 1000, 100, 20_000)
    seed = table.integer("seed", 0, 0, 2**31 - 1)
    try:  # the texts and terms are read and checked now, with a judge every machine has (the real one runs later)
        checked = build_request(scorer="vader", fmt=fmt, templates=templates_path, terms=terms_path, resamples=0)
    except AuditInputError as error:
        raise SpecError(f"{table.where('templates' if templates_path else 'terms')}: {error}") from None
    _judge_name(table, scorer, metric)
    return AuditSpec(scorer, metric, table.text("column"), table.number("threshold"), fmt,
                     str(templates_path) if templates_path else None, str(terms_path) if terms_path else None,
                     resamples, seed, dict(checked.design.groups), checked.design.content_hash())


def _judge_name(table: _Table, scorer: str | None, metric: str | None) -> None:
    if scorer:
        from fairness_core.scorers import SCORERS

        if scorer not in SCORERS:
            raise SpecError(f"{table.where('scorer')}: unknown scorer {quoted(scorer)}; known: {', '.join(SCORERS)}")
    if metric:
        from fairness_core.metrics import METRICS

        if metric not in METRICS:
            raise SpecError(f"{table.where('metric')}: unknown metric {quoted(metric)}; known: "
                            f"{', '.join(sorted(METRICS))}")


def _metric_bias(table: _Table, spec_dir: Path) -> MetricBiasSpec:
    from fairness_core import metric_bias as mb

    data = table.text("data", "demo") or "demo"
    if data not in mb.FORMATS:
        raise SpecError(f"{table.where('data')} must be one of {', '.join(mb.FORMATS)} (got {quoted(data)})")
    files: tuple[str, ...] = ()
    if table.has("file"):
        files = (str(_file(spec_dir, str(table.text("file")), table.where("file"))),)
    subset = table.text("subset")
    metrics = table.words("metrics", ("bleu",)) or ("bleu",)
    try:
        dataset = mb.load_dataset(data, files or ((subset,) if subset else ()))
        names = mb.expand_presets([m.lower() for m in metrics])
        mb.build_metrics(names, model=table.text("model"))
    except mb.RequestError as error:
        raise SpecError(f"{table.where('data')}: {error}") from None
    except mb.MetricOptionError as error:
        raise SpecError(f"{table.where('metrics')}: {error}") from None
    attributes = tuple(dict.fromkeys(pair.attribute for pair in dataset.pairs))
    return MetricBiasSpec(data, files or ((subset,) if subset else ()), tuple(names), table.text("model"),
                          table.integer("resamples", 1000, 100, 100_000), attributes, dataset.content_hash())


def _stereotypes(table: _Table) -> StereotypesSpec:
    """The benchmark and its sample, checked as the `stereotypes` command checks them (the data is read: a subset
    or limit it lacks is said here, before any model loads)."""
    from fairness_core import stereotypes as ster

    benchmark = table.text("benchmark", "crows-pairs") or "crows-pairs"
    if benchmark not in ster.BENCHMARKS:
        raise SpecError(f"{table.where('benchmark')} must be one of {', '.join(ster.BENCHMARKS)} (got "
                        f"{quoted(benchmark)})")
    subset = table.words("subset", ())
    # the page's default sample (a stated sample: the whole benchmark is limit = 0)
    limit: int | None = table.integer("limit", ster.DEFAULT_LIMITS[benchmark], 0, 100_000) or None
    seed = table.integer("seed", 0, 0, 2**31 - 1)
    resamples = table.integer("resamples", 1000, 100, ster.MAX_RESAMPLES)
    try:  # the model is [system]'s; a placeholder here checks only the benchmark, subset and sample
        ster.build_request(benchmark, "check-spec", list(subset) or None, limit, int(seed), int(resamples))
    except ster.StereotypeInputError as error:
        raise SpecError(f"{table.spec_name}: [stereotypes] {error}") from None
    groups = {"crows-pairs": ster.CROWS_BIAS_TYPES, "bbq": ster.BBQ_CATEGORIES}.get(benchmark, ())
    return StereotypesSpec(benchmark, tuple(subset), limit, int(seed), int(resamples), tuple(groups))


def _baseline(table: _Table) -> BaselineSpec:
    given = [k for k in ("run", "check", "model") if table.has(k)]
    if len(given) != 1:
        raise SpecError(f"{table.spec_name}: [baseline] names one of run = ID, check = ID, or model (+ setting); "
                        f"got {', '.join(given) or 'none'}")
    if table.has("setting") and not table.has("model"):
        raise SpecError(f"{table.where('setting')} goes with a baseline model")
    model = _model(table, "model", table.text("model")) if table.has("model") else None
    return BaselineSpec(table.text("run"), table.text("check"), model,
                        _setting(table, "setting", "top_p=0.9") if model else None, _quantization(table))


def _decoding_measures(decoding: DecodingSpec) -> dict[str, str]:
    """measure name -> kind (rate, mean, disparity) for the spec's scorers."""
    from fairness_core.decoding import measures_for

    found: dict[str, str] = {}
    for measure in measures_for([(name, {}) for name in decoding.scorers]):
        found[measure.name] = measure.kind
        if measure.kind == "rate":
            stem = measure.name[: -len("_rate")] if measure.name.endswith("_rate") else measure.name
            found[f"{stem}_disparity"] = "disparity"
    return found


def _criterion(table: _Table, decoding: DecodingSpec | None, audit: AuditSpec | None,
               metric_bias: MetricBiasSpec | None, stereotypes: StereotypesSpec | None = None) -> CriterionSpec:
    study = str(table.text("study"))
    measure = table.text("measure")
    if measure is None:
        raise SpecError(f"{table.where('measure')} is missing (e.g. negative_sentiment_disparity, fpr, bias)")
    conditions = [k for k in CONDITIONS if table.has(k)]
    if len(conditions) > 1:
        raise SpecError(f"{table.spec_name}: [{table.table}] gives {' and '.join(conditions)}; give one threshold")
    condition = conditions[0] if conditions else None
    threshold = table.number(condition) if condition else None
    if condition == "equivalent_within" and threshold is not None and threshold <= 0:
        raise SpecError(f"{table.where(condition)} must be above 0: the half-width of the band the interval must lie "
                        f"in (got {threshold:g})")
    undetectable = table.flag("undetectable")
    alpha = table.number("alpha", DEFAULT_ALPHA)
    assert alpha is not None
    if not 0 < alpha < 1:
        raise SpecError(f"{table.where('alpha')} must be between 0 and 1 (got {alpha:g})")
    if condition is None and not undetectable:
        raise SpecError(f"{table.spec_name}: [{table.table}] has no pass rule: give one of "
                        f"{', '.join(CONDITIONS)} (or undetectable = true with effect = X)")
    against = table.text("against")
    if against not in (None, "baseline"):
        raise SpecError(f"{table.where('against')} must be \"baseline\" (got {quoted(against)})")
    group = table.text("group")
    metric = table.text("metric")
    if metric and study != "metric-bias":
        raise SpecError(f"{table.where('metric')} is for metric-bias criteria")
    if study == "decoding":
        assert decoding is not None
        kinds = _decoding_measures(decoding)
        if measure not in kinds:
            raise SpecError(f"{table.where('measure')} {quoted(measure)} is not measured by the scorers "
                            f"({', '.join(decoding.scorers)}); choose one of {', '.join(kinds)}")
        known = decoding.prompts  # None: stored generations, whose groups are checked when they are read
        if kinds[measure] == "disparity":
            group = group or ALL_FAMILIES
            allowed = [ALL_FAMILIES, *(() if against else (EVERY_FAMILY,)), *(known.families if known else ())]
        else:
            group = group or (ALL_GROUPS if against else EVERY_GROUP)
            allowed = [ALL_GROUPS, *(() if against else (EVERY_GROUP, WORST_CELL)),
                       *(known.groups if known else ())]
        if group == WORST_CELL and (kinds[measure] == "disparity" or against):
            raise SpecError(f"{table.where('group')} \"worst cell\" goes with a rate or mean of the decoding study, "
                            "judged absolutely (a disparity already sets every group of a family against the others; "
                            "a baseline comparison pairs groups, not cells)")
        if known is None and group not in allowed:
            allowed.append(group)
        if undetectable and (kinds[measure] != "disparity" or against):
            raise SpecError(f"{table.where('undetectable')} reads the disparity test's p-value: it goes with an "
                            "absolute disparity criterion")
    elif against:
        raise SpecError(f"{table.where('against')}: a baseline comparison is a paired difference of decoding "
                        "measures (the study the system generates for)")
    elif study == "audit":
        assert audit is not None
        if measure not in AUDIT_MEASURES:
            raise SpecError(f"{table.where('measure')} {quoted(measure)} is not an audit measure; choose one of "
                            f"{', '.join(AUDIT_MEASURES)}")
        terms = [t for ts in audit.groups.values() for t in ts]
        if measure in ("fped", "fpr_overall"):
            group = group or OVERALL
            allowed = [OVERALL]
        else:
            group = group or EVERY_TERM
            allowed = [EVERY_TERM, EVERY_GROUP, *audit.groups, *terms]
        if undetectable:
            raise SpecError(f"{table.where('undetectable')} goes with a decoding disparity")
    elif study == "stereotypes":
        assert stereotypes is not None
        measures = STEREOTYPE_MEASURES[stereotypes.benchmark]
        if measure not in measures:
            raise SpecError(f"{table.where('measure')} {quoted(measure)} is not a {stereotypes.benchmark} measure; "
                            f"choose one of {', '.join(measures)}")
        every = {"crows-pairs": EVERY_BIAS_TYPE, "bbq": EVERY_CATEGORY}.get(stereotypes.benchmark)
        group = group or OVERALL
        allowed = [OVERALL, *([every] if every else []), *stereotypes.groups]
        if undetectable:
            raise SpecError(f"{table.where('undetectable')} goes with a decoding disparity; a stereotype score is "
                            "judged by its value or interval (e.g. upper_at_most = 60 for pct_stereotype)")
        if condition == "equivalent_within" and measure in ("pct_stereotype", "ss"):
            raise SpecError(f"{table.where('equivalent_within')}: {measure} is 50 with no preference, not 0; give "
                            "two criteria, upper_at_most = 50 + x and lower_at_least = 50 - x")
    else:
        assert metric_bias is not None
        if measure not in METRIC_BIAS_MEASURES:
            raise SpecError(f"{table.where('measure')} {quoted(measure)} is not a metric-bias measure; choose "
                            f"{', '.join(METRIC_BIAS_MEASURES)}")
        if metric is None:
            raise SpecError(f"{table.where('metric')} is missing: name the metric whose bias is checked (one of "
                            f"{', '.join(metric_bias.metrics)})")
        if metric.split(".")[0] not in metric_bias.metrics:
            raise SpecError(f"{table.where('metric')} {quoted(metric)} is not among [metric_bias] metrics "
                            f"({', '.join(metric_bias.metrics)})")
        group = group or EVERY_ATTRIBUTE
        allowed = [EVERY_ATTRIBUTE, *metric_bias.attributes]
        if undetectable:
            raise SpecError(f"{table.where('undetectable')} goes with a decoding disparity")
    if group not in allowed:
        close = difflib.get_close_matches(group, allowed, n=1)
        hint = f" (did you mean {quoted(close[0])}?)" if close else ""
        raise SpecError(f"{table.where('group')} {quoted(group)} is not in the {study} study here{hint}; choose one of "
                        f"{', '.join(allowed[:20])}{' …' if len(allowed) > 20 else ''}")
    name = table.text("name") or " ".join(p for p in (study, measure, metric, group, "vs baseline" if against else "")
                                          if p)
    effect = _effect(table, undetectable)  # after the study's own refusals: they say what undetectable goes with
    return CriterionSpec(name, study, measure, group, condition, threshold, undetectable, alpha, metric, against,
                         effect)


def _effect(table: _Table, undetectable: bool) -> float | None:
    """The disparity `undetectable` must be able to see. Required with it: a test that detects nothing on a study
    too small to detect anything says nothing, so "no disparity" passes only where the design had the power to see
    this effect (issue 42 §4)."""
    effect = table.number("effect")
    if effect is None:
        if undetectable:
            raise SpecError(f"{table.where('undetectable')} needs effect = X: the smallest disparity the study must "
                            f"be able to detect (with {POWER:.0%} power) for \"none detected\" to count, e.g. "
                            "effect = 0.1; without it a study of 3 templates would pass")
        return None
    if not undetectable:
        raise SpecError(f"{table.where('effect')} goes with undetectable = true (the disparity the design must be "
                        "able to detect); a threshold criterion needs no effect")
    if not 0 < effect <= 1:
        raise SpecError(f"{table.where('effect')} must be a disparity of rates, above 0 and at most 1 "
                        f"(got {effect:g})")
    return effect
