"""How each kind of stored run is read: its arms, and its rows as sums per (arm, cell, unit), under the run's own
settings (`reading.settings`: the thresholds its rates are read at). Compare, the report, the planner, `check` and
`slices` all read runs here.

An **arm** is one thing a run measured whose numbers can be set beside another's:

- a generation run (the decoding page's sweeps and live moves, CAIRO, template adaptation's rewrites) has one arm
  per *system*: a model under one decoding setting and quantization (`fairness_core.generation.System`);
- a metric-bias run has one arm per metric output (bleu; bertscore, bertscore.P, ...), described with its
  configuration (e.g. chrf under `metric-fairness-2022`) and model;
- any other kind (adaptation measures, DATScore, NER, the legacy `decoding` kind) has one arm: the run.

A **cell** is (metric, then the kind's keys: family and group; attribute; classifier; direction), and a **unit** is
what the study sampled, so what a bootstrap resamples:

- generation: a regard-style template shared by the groups of a family ("The {group} worked as") is one unit with
  all its groups' prompts and samples, any other prompt is a unit of its own — the template design of the decoding
  page (`fairness_core.bias.cluster.template_design`), keyed by text so that two runs' prompts meet;
- metric-bias: a pair (keyed by the dataset's content hash and the pair id);
- other kinds: the item (a text, a segment).

The sums are Σ values and row counts per (arm, cell, unit): a cell's estimate is Σ totals / Σ counts, the mean of
its rows, exactly what the study pages report:

- generation: every scorer column's mean, and every rate a scorer declares (`Scorer.measures`), e.g.
  `negative_sentiment_rate` = share of generations with VADER compound ≤ −0.25 (Dhamala et al. 2022, Sec. 3) —
  at the threshold the run's settings say (`ReadSettings.threshold`: recorded with the run, or given);
  a generation whose score is NaN is left out of that score, as on the decoding page. CAIRO runs (prompt ids
  `metric|set|index`) sum per prompt its mean over seeds, so a group's estimate is the mean over prompts of prompt
  means, as in CAIRO's Eq. 1 table;
- metric-bias: a pair's |Ŝ1 − Ŝ2| with Ŝ = 100 (S − min) / (max − min) over the 2N scores of the pairs whose two
  scores are finite (Sun et al. 2022, Eq. 1-2), so a cell's estimate is the page's Bias; and the signed
  stereotypical difference (Appendix E) over pairs with a known stereotypical side.

What a generation run covers is its request, not only the rows it wrote: a sweep that found some of its settings
already stored generated only the rest, and a request whose generations were stored but not scored wrote only
score rows. The generations the request asked for are rebuilt from the manifest (systems, seeds, samples, length,
truncation, mode) and its prompts — those seen in the run's rows, plus those whose every generation and score was
already stored, which the manifest lists (`work.read_prompts`) — with `generation.task.generation_id`, and read
wherever they are stored: the reused rows are the run's rows. What is still missing (a run written before the
manifest listed those prompts; a generation no run stored, as in a cancelled run) is said in `RunRows.gaps`, which
the comparison's headline carries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from fairness_core.reading.settings import ReadSettings, settings_of
from fairness_core.store import RunInfo, RunStore
from fairness_core.store.typed import KEY_COLUMNS, TYPED_KINDS

#: Dhamala et al. 2022, Sec. 3: the default (`scorers.sentiment.DEFAULT_NEGATIVE_THRESHOLD`, not imported here: the
#: scorer registry is loaded only when a run is read); a run is read at its own (`ReadSettings.threshold`)
NEGATIVE_SENTIMENT_THRESHOLD = -0.25
SEP = "\u241f"  # joins the parts of a unit or cell key (a character no prompt or name contains)


class ReadError(ValueError):
    """A run that cannot be read as asked (an unknown field, a store too old to read); one sentence naming the run
    or field. Compare calls it `CompareError`."""



@dataclass(frozen=True)
class Arm:
    """One thing a run measured: a system of a generation run, an output of a metric-bias run, or the run."""

    run_id: str
    key: str  # system key / metric output name / "run"
    label: str  # words for people: "gpt2 · top_p=0.5", "chrf (metric-fairness-2022)"
    fields: dict[str, str] = field(default_factory=dict)  # what describes it (model, setting, metric, config, ...)
    setting: tuple[tuple[str, Any], ...] = ()  # decoding knobs (generation), for matching equal settings
    primary: bool = True  # a metric's primary output (bleu, bertscore) rather than a secondary one (bertscore.P)


@dataclass(frozen=True)
class GroupStatistic:
    """A statistic of a family's group cells: `name` from the cells of `metric` (one per group)."""

    name: str  # e.g. negative_sentiment_disparity
    metric: str  # the group cells it reads, e.g. negative_sentiment_rate
    how: str  # "pairwise" (Dhamala et al.: mean |r_g − r_h| over pairs) or "eq1" (CAIRO: Σ_s |mean − m_s|)


@dataclass
class RunRows:
    """A run read for comparing: its arms, its sums, the cell keys, and what was derived from them."""

    info: RunInfo
    arms: list[Arm]
    sums: pd.DataFrame  # arm, metric, *keys, unit, total, n
    keys: list[str]
    unit_name: str  # what one unit is: prompt, pair, text, segment, item
    statistics: list[GroupStatistic] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # sentences about what was read (coverage, exclusions)
    #: what the run's request covers that is not in the comparison, how many and why ("run ab12: 4 of its request's
    #: 12 prompts are left out: ..."): said in the headline, not only among the notes
    gaps: list[str] = field(default_factory=list)
    #: what the run was read with (thresholds, resamples, seed; the design of its kind): `reading.settings`
    settings: ReadSettings = field(default_factory=ReadSettings)
    #: generation runs: (unit, member) — a prompt text each unit holds — so that two runs' units holding the same
    #: prompt meet in a comparison (`shared_units`) whatever each run's template was called; None for other kinds
    members: pd.DataFrame | None = None
    #: the requests of the runs this run's request names by manifest hash (`input_requests`), e.g. "translations":
    #: the DATScore translations run whose augmented translations a directions run scored
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)

    def arm(self, key: str) -> Arm:
        return next(arm for arm in self.arms if arm.key == key)


def shared_units(a: RunRows, b: RunRows) -> dict[str, str]:
    """Per unit of either run that holds a prompt the other run's units hold too, the one unit both are resampled as.

    A unit is keyed by what its run called it: a regard template by its text ("The {group} worked as"), a
    counterfactual set by its seed prompt ("{group} variants of: The man worked as"). The same prompt text under two
    such keys is the same context on both sides (issue 43 §4: the rows listed it as "the same item on both sides"
    while the pairing said "no prompt in common"), so those units are joined — transitively, since a unit may hold
    prompts of several units of the other run — and take one weight per replicate on both sides. Joining units only
    makes the clusters coarser, which keeps the bootstrap valid. Units with no prompt in common are left out."""
    if a is b or a.members is None or b.members is None or a.members.empty or b.members.empty:
        return {}
    by_text: dict[str, tuple[set[str], set[str]]] = {}
    for side, members in enumerate((a.members, b.members)):
        for unit, text in zip(members["unit"].astype(str), members["member"].astype(str), strict=True):
            by_text.setdefault(text, (set(), set()))[side].add(unit)
    # a unit is its key: the same key on both sides is already one unit of the bootstrap
    parent: dict[str, str] = {}

    def root(unit: str) -> str:
        while parent.get(unit, unit) != unit:
            unit = parent[unit]
        return unit

    for units_a, units_b in by_text.values():
        if not units_a or not units_b or units_a == units_b:
            continue  # a prompt only one run holds, or under one key on both sides, joins nothing
        nodes = sorted(units_a | units_b)
        first = root(nodes[0])
        parent.setdefault(first, first)
        for unit in nodes[1:]:
            other = root(unit)
            if other != first:
                parent[other] = first
    components: dict[str, list[str]] = {}
    for unit in parent:
        components.setdefault(root(unit), []).append(unit)
    own = set(a.members["unit"].astype(str))
    out: dict[str, str] = {}
    for units in components.values():
        # a unit of the first run names the joined unit, so that its own labels stay as they were
        name = min((u for u in units if u in own), default=min(units))
        out |= {unit: name for unit in units if unit != name}
    return out


# -- field names (for --by and filters) ------------------------------------------------------------------------
def view_of(kind: str) -> str | None:
    typed = TYPED_KINDS.get(kind)
    return typed.view if typed else None


def field_names(kind: str) -> list[str]:
    """The fields a run of this kind can be grouped or filtered by (its typed view's columns and aliases)."""
    names = [name for name, _ in KEY_COLUMNS if name not in ("run_id", "shard", "value")]
    typed = TYPED_KINDS.get(kind)
    if typed is not None:
        names += list(typed.aliases.values()) + [spec.name for spec in typed.fields]
    names += list(default_keys(kind))
    return list(dict.fromkeys(names))


def default_keys(kind: str) -> tuple[str, ...]:
    return {"generation": ("family", "group"), "decoding": ("family", "group"), "metric-bias": ("attribute",),
            "adaptation-measures": ("classifier",), "datscore-directions": ("direction",),
            "datscore-translations": ("entity", "tgt_lang")}.get(kind, ("group",))


def field_sql(kind: str, name: str) -> str:
    """SQL for a field of a kind's view, checked against the known names (never user text in SQL)."""
    if name == "group":
        return "grp"
    if name not in field_names(kind):
        raise ReadError(f"runs of kind {kind!r} have no field {name!r}; choose one of: "
                           + ", ".join(field_names(kind)))
    if "." in name:
        parent, child = name.split(".", 1)
        return f'struct_extract("{parent}", \'{child}\')'
    return f'"{name}"'


def run_filter(store: RunStore, info: RunInfo, name: str) -> tuple[str, dict[str, Any]]:
    """SQL keeping one run's rows of its kind's view (or `results`), and its parameter.

    A typed view is filtered on the run's number (`run_no`): rows arrive run by run, so DuckDB skips every block
    of other runs by its min/max; on the hash-like `run_id` the same filter reads nearly every block.
    """
    if view_of(info.kind) is None:
        return f"run_id = ${name}", {name: info.run_id}
    found = store.query("SELECT run_no FROM typed_runs WHERE run_id = ?", [info.run_id])
    if found.empty:  # nothing of this run has been typed (no rows yet)
        return f"run_id = ${name}", {name: info.run_id}
    return f"run_no = ${name}", {name: int(found["run_no"].iloc[0])}


def _request(info: RunInfo) -> dict[str, Any]:
    request = info.manifest.get("request", {}) if isinstance(info.manifest, dict) else {}
    return request if isinstance(request, dict) else {}


def _key_select(kind: str, by: Sequence[str] | None) -> tuple[list[str], str]:
    by = [name for name in by or () if name != "metric"]  # the metric is always the first key
    keys = list(by) if by else list(default_keys(kind))
    if by:
        for name in keys:
            field_sql(kind, name)  # refuses an unknown field in one sentence
    return keys, "".join(f', {field_sql(kind, name)} AS "{name}"' for name in keys)


def source_metrics(metrics: Sequence[str] | None) -> list[str] | None:
    """The metrics a comparison must read for the ones asked for: a disparity reads its rate's group cells
    (negative_sentiment_disparity -> negative_sentiment_rate), an Eq. 1 bias its column's."""
    if not metrics:
        return None
    found = list(metrics)
    for name in metrics:
        if name.endswith("_disparity"):
            found.append(name[: -len("_disparity")] + "_rate")
        elif name.endswith("_eq1_bias"):
            found.append(name[: -len("_eq1_bias")])
    return list(dict.fromkeys(found))


def _metric_filter(metrics: Sequence[str] | None) -> str:
    return "WHERE list_contains($metrics, metric)" if metrics else ""


# -- generation runs -------------------------------------------------------------------------------------------
def setting_label(decoding: dict[str, Any] | None) -> str:
    """A decoding record in words: "top_p=0.5", "top_k=40,temperature=0.7", "greedy"."""
    if not isinstance(decoding, dict) or not decoding:
        return ""
    if decoding.get("greedy"):
        return "greedy"
    parts = []
    if decoding.get("top_p") is not None:
        parts.append(f"top_p={float(decoding['top_p']):g}")
    if decoding.get("top_k") is not None:
        parts.append(f"top_k={int(decoding['top_k'])}")
    temperature = decoding.get("temperature")
    if temperature is not None and (float(temperature) != 1.0 or not parts):
        parts.append(f"temperature={float(temperature):g}")
    return ",".join(parts)


def _model_label(record: Any) -> str:
    if isinstance(record, dict):
        return str(record.get("source") or record.get("name") or "")
    return str(record or "")


def generation_arms(info: RunInfo) -> list[Arm]:
    arms = []
    for system in _request(info).get("systems") or []:
        if not isinstance(system, dict) or not system.get("key"):
            continue
        decoding = system.get("decoding") if isinstance(system.get("decoding"), dict) else {}
        model = _model_label(system.get("model"))
        quantization = str(system.get("quantization") or "none")
        setting = setting_label(decoding)
        fields = {"model": model, "setting": setting}
        if quantization != "none":
            fields["quantization"] = quantization
        label = str(system.get("name") or " · ".join(v for v in (model, setting) if v))
        knobs = tuple(sorted((k, v) for k, v in decoding.items() if v is not None))
        arms.append(Arm(info.run_id, str(system["key"]), label, fields, (*knobs, ("quantization", quantization))))
    return arms


def run_measures(info: RunInfo) -> list[Any]:
    """The rate and mean measures the run's scorers declare (scorer registry look-up; no model loads)."""
    from fairness_core.scorers import SCORERS

    found = []
    for scorer in _request(info).get("scorers") or []:
        name = scorer.get("name") if isinstance(scorer, dict) else None
        cls = SCORERS.get(name) if name else None
        if cls is not None:
            found += [m for m in cls.measures if m not in found]
    return found


def is_cairo(info: RunInfo) -> bool:
    prompts = _request(info).get("prompts")
    return isinstance(prompts, dict) and str(prompts.get("name", "")).startswith("CAIRO ")


@dataclass(frozen=True)
class Coverage:
    """What a generation run's request covers beyond its own rows (`covered_generations`)."""

    elsewhere: list[str] = field(default_factory=list)  # generation ids asked for that other runs stored
    n_prompts: int = 0  # prompts the request named (0: not recorded)
    unknown_prompts: int = 0  # of those, prompts neither in the run's rows nor listed as read (texts unknown)


def covered_generations(store: RunStore, info: RunInfo, this_run: str, params: dict[str, Any]) -> Coverage:
    """The generation ids the run's request asked for that it did not store itself (read from earlier runs), and
    how many of the prompts the manifest counts are known neither from the run's rows nor from its list of prompts
    read whole from the store (`work.read_prompts`; runs written before it existed lack it)."""
    from fairness_core.generation.task import SCHEMA, generation_id

    request = _request(info)
    keys = [s.get("key") for s in request.get("systems") or [] if isinstance(s, dict) and s.get("key")]
    try:
        seeds = [int(s) for s in request.get("seeds") or []]
        samples = int(request.get("samples") or 0)
        max_new = int(request["max_new_tokens"])
        truncate, mode, stops = str(request["truncate"]), str(request["mode"]), str(request["stops"])
    except (KeyError, TypeError, ValueError):
        return Coverage()
    if request.get("schema") != SCHEMA or not keys:
        return Coverage()
    seen = store.query(f"SELECT DISTINCT prompt, item FROM generation WHERE {this_run} AND prompt IS NOT NULL",
                       params)
    work = _work(request)
    read_whole = [str(p) for p in work.get("read_prompts") or [] if isinstance(p, str)]
    prompts = sorted(set(seen["prompt"]) | set(read_whole))
    # items repeating an earlier item's text under other labels are counted by the manifest, not by distinct texts
    again = sum(1 for entry in work.get("repeated") or [] if isinstance(entry, list) and len(entry) == 5
                and entry[0] in set(prompts))
    stored = set(seen["item"])
    wanted = [generation_id(key, prompt, sample, seed, max_new, truncate, mode, stops)
              for key in keys for prompt in prompts for seed in seeds for sample in range(samples)]
    named = (request.get("prompts") or {}).get("n") if isinstance(request.get("prompts"), dict) else None
    n_prompts = named if isinstance(named, int) else 0
    return Coverage([item for item in wanted if item not in stored], n_prompts,
                    max(0, n_prompts - len(prompts) - again))


def _work(request: dict[str, Any]) -> dict[str, Any]:
    """The manifest's record of what the run computed and read (`generation.task`: `read_prompts`, `read_labels`,
    `repeated`), {} where a run predates it."""
    return request.get("work") if isinstance(request.get("work"), dict) else {}


def made_by(info: RunInfo, plan: Any) -> bool:
    """Whether a stored generation run was made by the request of `plan` (a `generation.GenerationPlan`): the same
    prompts, systems, scorers, samples, seeds and generation length — what decides which rows are the result's."""
    request = _request(info)
    asked = plan.request
    prompts = request.get("prompts") if isinstance(request.get("prompts"), dict) else {}
    systems = sorted(str(s.get("key")) for s in request.get("systems") or [] if isinstance(s, dict))
    scorers = sorted(str(s.get("hash")) for s in request.get("scorers") or [] if isinstance(s, dict))
    return (prompts.get("hash") == asked.prompts.content_hash() and systems == sorted(plan.system_keys)
            and scorers == sorted(plan.scorer_hashes) and request.get("samples") == asked.samples
            and list(request.get("seeds") or []) == list(asked.seeds)
            and request.get("max_new_tokens") == asked.max_new_tokens)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def generation_rows(store: RunStore, info: RunInfo, name: str = "run"
                    ) -> tuple[str, dict[str, Any], list[str], list[str]]:
    """SQL of a generation run's score rows — its own and those of the generations its request read from earlier
    runs, one row per (generation, metric), the run's own first — with its parameters (prefixed `name`), notes on
    what was read, and gaps: what its request covers that no stored row gives (how many, and why).
    CAIRO runs' `family` is their metric and prompt set ("bold · original"), the unit of CAIRO's Eq. 1 table."""
    this_run, params = run_filter(store, info, name)
    request = _request(info)
    scorers = [s.get("hash") for s in request.get("scorers") or [] if isinstance(s, dict) and s.get("hash")]
    params |= {f"{name}_scorers": scorers, f"{name}_arms": [arm.key for arm in generation_arms(info)]}
    coverage = covered_generations(store, info, this_run, {k: v for k, v in params.items() if k == name})
    notes, gaps = [], []
    rows = (f"SELECT *, 0 AS earlier FROM generation WHERE {this_run} AND metric <> 'generation' "
            f"AND list_contains(${name}_scorers, scorer) AND list_contains(${name}_arms, system)")
    if coverage.elsewhere:
        params[f"{name}_elsewhere"] = coverage.elsewhere
        # a reused row carries the labels of the run that reads it (family, group, template), taken from this run's
        # own rows of the same prompt text, or for a prompt read whole from the labels its manifest lists: the run
        # that stored it may have named it otherwise (a custom run's "custom" family for a regard template's
        # prompt; issue 43); a run written before the manifest listed them keeps the stored labels
        work = _work(request)
        read = [(text, *labels) for text, labels in zip(work.get("read_prompts") or [], work.get("read_labels") or [],
                                                         strict=False) if isinstance(labels, list) and len(labels) == 4]
        for at, column in enumerate(("prompt", "family", "grp", "source", "prompt_id")):
            params[f"{name}_read_{column}"] = [str(entry[at]) for entry in read]
        listed = ", ".join(f"unnest(${name}_read_{c}::VARCHAR[]) AS {c}" for c in ("prompt", "family", "grp", "source",
                                                                                  "prompt_id"))
        own = ("SELECT prompt AS o_prompt, arg_min(family, item) AS o_family, arg_min(grp, item) AS o_grp, "
               "arg_min(source, item) AS o_source, arg_min(prompt_id, item) AS o_prompt_id FROM (SELECT prompt, "
               f"family, grp, source, prompt_id, item FROM generation WHERE {this_run} AND prompt IS NOT NULL "
               f"UNION ALL SELECT {listed}, '' AS item) GROUP BY prompt")
        rows += (" UNION ALL SELECT g.* REPLACE (coalesce(o.o_family, g.family) AS family, coalesce(o.o_grp, g.grp) "
                 "AS grp, coalesce(o.o_source, g.source) AS source, coalesce(o.o_prompt_id, g.prompt_id) AS "
                 f"prompt_id), 1 AS earlier FROM generation g LEFT JOIN ({own}) o ON o.o_prompt = g.prompt "
                 f"WHERE g.item IN (SELECT unnest(${name}_elsewhere::VARCHAR[])) AND g.metric <> 'generation' "
                 f"AND list_contains(${name}_scorers, g.scorer)")
        found = int(store.query("SELECT count(DISTINCT item) AS n FROM generation WHERE metric = 'generation' AND "
                                "item IN (SELECT unnest($elsewhere::VARCHAR[]))",
                                {"elsewhere": coverage.elsewhere})["n"].iloc[0])
        if found:
            notes.append(f"run {info.run_id} read {found:,} of its request's generations from earlier runs (they were "
                         "stored before it, so it did not generate them again); they count as its own here")
        never = len(coverage.elsewhere) - found
        if never:
            why = "it was cancelled before generating them" if info.status != "complete" else \
                "no stored run holds them (a run that held them was deleted)"
            gaps.append(f"run {info.run_id} is missing {_plural(never, 'generation')} its request asked for: {why}")
    repeated = [entry for entry in _work(request).get("repeated") or []
                if isinstance(entry, list) and len(entry) == 5]
    if repeated:
        # a text the request holds under several labels was generated once and stored under its first item's:
        # each other item reads the same rows under its own labels (and its own item id, so each counts once)
        for at, column in enumerate(("prompt", "family", "grp", "source", "prompt_id")):
            params[f"{name}_again_{column}"] = [str(entry[at]) for entry in repeated]
        again = ", ".join(f"unnest(${name}_again_{c}::VARCHAR[]) AS r_{c}" for c in ("prompt", "family", "grp",
                                                                                    "source", "prompt_id"))
        rows = (f"SELECT * FROM ({rows}) UNION ALL SELECT b.* REPLACE (r.r_family AS family, r.r_grp AS grp, "
                "r.r_source AS source, r.r_prompt_id AS prompt_id, b.item || '#' || r.r_prompt_id AS item) "
                f"FROM ({rows}) b JOIN (SELECT {again}) r ON r.r_prompt = b.prompt")
    if coverage.unknown_prompts:
        gaps.append(f"run {info.run_id} leaves out {coverage.unknown_prompts:,} of its request's "
                    f"{coverage.n_prompts:,} prompts: their generations were all read from earlier runs, and runs "
                    "written before the lab recorded such prompts do not say which they were")
    family = ("CASE WHEN prompt_id LIKE '%|%|%' THEN split_part(prompt_id, '|', 1) || ' · ' || "
              "split_part(prompt_id, '|', 2) ELSE family END") if is_cairo(info) else "family"
    sql = (f"SELECT * REPLACE ({family} AS family) FROM ({rows}) WHERE isfinite(value) "
           "QUALIFY row_number() OVER (PARTITION BY item, metric ORDER BY earlier, run_no) = 1")
    return sql, params, notes, gaps


def read_generation(store: RunStore, info: RunInfo, by: Sequence[str] | None,
                    metrics: Sequence[str] | None, settings: ReadSettings | None = None) -> RunRows:
    keys, key_select = _key_select("generation", by)
    arms = generation_arms(info)
    rows, params, notes, gaps = generation_rows(store, info)
    cairo = is_cairo(info)
    measured = ["SELECT system AS arm, metric, value, * EXCLUDE (system, metric, value) FROM rows"]
    statistics: list[GroupStatistic] = []
    for measure in run_measures(info):
        if measure.kind == "rate":
            op = {">=": ">=", ">": ">", "<=": "<=", "<": "<"}.get(measure.op, ">=")
            threshold = (settings or ReadSettings()).threshold(measure)
            measured.append(f"SELECT system AS arm, '{measure.name}' AS metric, CAST(value {op} {threshold!r} AS "
                            "DOUBLE) AS value, * EXCLUDE (system, metric, value) FROM rows "
                            f"WHERE metric = '{measure.column}'")
            stem = measure.name[: -len("_rate")] if measure.name.endswith("_rate") else measure.name
            if not cairo:
                statistics.append(GroupStatistic(f"{stem}_disparity", measure.name, "pairwise"))
        if cairo:
            statistics.append(GroupStatistic(f"{measure.column}_eq1_bias", measure.column, "eq1"))
    # one row per (generation, metric): the run's own row first, else the earliest stored one
    unit = (f"CASE WHEN t.t_family IS NOT NULL THEN 'template' || '{SEP}' || m.family || '{SEP}' || m.source "
            f"ELSE 'prompt' || '{SEP}' || coalesce(m.family, '') || '{SEP}' || coalesce(m.grp, '') || '{SEP}' || "
            "m.prompt END")
    per_unit = "avg(value) AS total, 1.0 AS n" if cairo else "sum(value) AS total, count(*)::DOUBLE AS n"
    sql = f"""
        WITH rows AS ({rows}),
             shared AS (SELECT family AS t_family, source AS t_source FROM rows WHERE source LIKE '%{{group}}%'
                        GROUP BY ALL HAVING count(DISTINCT grp) > 1),
             measured AS ({' UNION ALL '.join(measured)})
        SELECT arm, metric{''.join(f', "{k}"' for k in keys)}, unit, {per_unit}, min(member_text) AS member
        FROM (SELECT arm, metric, value{key_select}, {unit} AS unit, m.prompt AS member_text
              FROM measured m LEFT JOIN shared t ON t.t_family = m.family AND t.t_source = m.source)
        {_metric_filter(metrics)}
        GROUP BY ALL
    """
    if metrics:
        params["metrics"] = list(metrics)
    sums = store.query(sql, params)
    # a prompt text per (cell, unit): with family and group cells each group's prompt of a template, so all of them
    members = sums[["unit", "member"]].dropna().drop_duplicates().reset_index(drop=True)
    sums = sums.drop(columns="member")
    present = set(sums["arm"]) if not sums.empty else set()
    arms = [arm for arm in arms if arm.key in present] or arms
    if by and not {"family", "group"} <= set(keys):
        statistics = []
    return RunRows(info, arms, sums, keys, "prompt", statistics, notes, gaps, members=members)


def read_legacy_decoding(store: RunStore, info: RunInfo, by: Sequence[str] | None,
                         metrics: Sequence[str] | None, settings: ReadSettings | None = None) -> RunRows:
    """Runs of the retired `decoding` kind (one row per generation and metric, the setting in `config`; the
    prompt id is the unit: those runs came from one prompt set)."""
    keys, key_select = _key_select("decoding", by)
    threshold = dict((settings or ReadSettings()).thresholds).get("negative_sentiment_rate",
                                                                   NEGATIVE_SENTIMENT_THRESHOLD)
    this_run, params = run_filter(store, info, "run")
    setting = ("concat_ws(',', CASE WHEN config.top_p IS NOT NULL THEN 'top_p=' || config.top_p END, CASE WHEN "
               "config.top_k IS NOT NULL THEN 'top_k=' || config.top_k END, 'temperature=' || config.temperature)")
    sql = f"""
        WITH rows AS (SELECT *, {setting} AS arm FROM decoding WHERE {this_run} AND isfinite(value)),
             measured AS (SELECT * FROM rows UNION ALL SELECT * REPLACE ('negative_sentiment_rate' AS metric,
                          CAST(value <= {float(threshold)!r} AS DOUBLE) AS value) FROM rows
                          WHERE metric = 'vader_compound')
        SELECT arm, metric{''.join(f', "{k}"' for k in keys)}, unit, sum(value) AS total, count(*)::DOUBLE AS n
        FROM (SELECT arm, metric, value{key_select}, 'prompt' || '{SEP}' || prompt_id AS unit FROM measured)
        {_metric_filter(metrics)} GROUP BY ALL
    """
    if metrics:
        params["metrics"] = list(metrics)
    return legacy_rows(info, store.query(sql, params), keys)


def legacy_rows(info: RunInfo, sums: pd.DataFrame, keys: Sequence[str] = ("family", "group")) -> RunRows:
    """A retired `decoding` run's arms (one per setting) and statistics around its sums (arm, metric, keys, unit,
    total, n): what `read_legacy_decoding` reads, and what a benchmark's pandas side builds the same way."""
    model = str(_request(info).get("model") or "")
    arms = [Arm(info.run_id, key, f"{model} · {key}" if model else key, {"model": model, "setting": key},
                (("setting", key),)) for key in sorted(set(sums["arm"]))] if not sums.empty else []
    statistics = [GroupStatistic("negative_sentiment_disparity", "negative_sentiment_rate", "pairwise")] \
        if {"family", "group"} <= set(keys) else []
    return RunRows(info, arms, sums, list(keys), "prompt", statistics)


# -- metric-bias runs ------------------------------------------------------------------------------------------
def metric_label(info: RunInfo, output: str) -> tuple[str, dict[str, str]]:
    """A metric output in words with what configures it: "chrf (config metric-fairness-2022)"."""
    metric = _request(info).get("metric") if isinstance(_request(info).get("metric"), dict) else {}
    options = metric.get("options") if isinstance(metric.get("options"), dict) else {}
    fields = {"metric": output}
    fields |= {str(k): str(v) for k, v in sorted(options.items()) if v not in (None, "")}
    model = _model_label(metric.get("model")) if metric.get("model") else ""
    if model and not fields.get("model"):  # the model the options name (a preset) over its folder's name
        fields["model"] = model  # ("bertscore (model model)": a shipped preset's folder is called "model"; issue 43)
    details = ", ".join(f"{k} {v}" for k, v in fields.items() if k != "metric")
    return (f"{output} ({details})" if details else output), fields


def read_metric_bias(store: RunStore, info: RunInfo, by: Sequence[str] | None,
                     metrics: Sequence[str] | None, settings: ReadSettings | None = None) -> RunRows:
    keys, key_select = _key_select("metric-bias", by)
    this_run, params = run_filter(store, info, "run")
    dataset = _request(info).get("dataset") if isinstance(_request(info).get("dataset"), dict) else {}
    params["dataset"] = str(dataset.get("hash") or info.run_id) + SEP
    key_names = "".join(f', "{k}"' for k in keys)
    sql = f"""
        WITH rows AS (SELECT metric, value, side, pair, stereotypical{key_select} FROM metric_bias WHERE {this_run}),
             pairs AS (SELECT metric AS arm{key_names}, pair,
                              max(value) FILTER (WHERE side = '1') AS s1, max(value) FILTER (WHERE side = '2') AS s2,
                              bool_or(stereotypical) FILTER (WHERE side = '1') AS st1,
                              bool_or(stereotypical) FILTER (WHERE side = '2') AS st2,
                              count(*) FILTER (WHERE side = '1') AS c1, count(*) FILTER (WHERE side = '2') AS c2
                       FROM rows GROUP BY ALL),
             used AS (SELECT * FROM pairs WHERE c1 = 1 AND c2 = 1 AND isfinite(s1) AND isfinite(s2)),
             scaled AS (SELECT *, coalesce(100.0 / nullif(max(greatest(s1, s2)) OVER w - min(least(s1, s2)) OVER w, 0),
                                            0) AS scale
                        FROM used WINDOW w AS (PARTITION BY arm{key_names})),
             measured AS (
                SELECT arm, 'bias' AS metric{key_names}, $dataset || pair AS unit, abs(s1 - s2) * scale AS total,
                       1.0 AS n FROM scaled
                UNION ALL
                SELECT arm, 'stereotypical_difference' AS metric{key_names}, $dataset || pair AS unit,
                       (s1 - s2) * scale * CASE WHEN st1 THEN 1.0 ELSE -1.0 END AS total, 1.0 AS n
                FROM scaled WHERE st1 OR st2)
        SELECT * FROM measured {_metric_filter(metrics)}
    """
    if metrics:
        params["metrics"] = list(metrics)
    sums = store.query(sql, params)
    excluded = store.query(
        f"SELECT metric, count(DISTINCT pair) AS n FROM metric_bias WHERE {this_run} AND NOT coalesce(isfinite(value), "
        "false) "
        "GROUP BY ALL", {k: v for k, v in params.items() if k == "run"})
    notes = [f"run {info.run_id}: {int(row.n)} pair(s) of {row.metric} left out because a score is not a finite "
             "number (as on the metric-bias page)" for row in excluded.itertuples(index=False)]
    outputs = sorted(set(sums["arm"])) if not sums.empty else []
    arms = []
    for output in outputs:
        label, fields = metric_label(info, output)
        arms.append(Arm(info.run_id, output, label, fields, primary="." not in output))
    return RunRows(info, arms, sums, keys, "pair", [], notes)


# -- every other kind ------------------------------------------------------------------------------------------
def read_generic(store: RunStore, info: RunInfo, by: Sequence[str] | None, metrics: Sequence[str] | None,
                 settings: ReadSettings | None = None) -> RunRows:
    view = view_of(info.kind)
    if view is None:
        keys = [k for k in by or () if k != "metric"] or ["group"]
        for name in keys:
            if name not in ("item", "grp", "group", "variant", "metric"):
                raise ReadError(f"runs of kind {info.kind!r} have no field {name!r}; choose one of: item, grp, "
                                   "variant")
        key_select = "".join(f', {"grp" if k == "group" else k} AS "{k}"' for k in keys)
    else:
        keys, key_select = _key_select(info.kind, by)
    this_run, params = run_filter(store, info, "run")
    sql = f"""
        SELECT 'run' AS arm, metric{''.join(f', "{k}"' for k in keys)}, unit, sum(value) AS total,
               count(*)::DOUBLE AS n
        FROM (SELECT metric, value, item AS unit{key_select} FROM {view or 'results'}
              WHERE {this_run} AND isfinite(value))
        {_metric_filter(metrics)} GROUP BY ALL
    """
    if metrics:
        params["metrics"] = list(metrics)
    sums = store.query(sql, params)
    units = {"adaptation-measures": "text", "adaptation-ner": "text", "datscore-directions": "segment",
             "datscore-translations": "text"}
    return RunRows(info, [run_arm(info)], sums, keys, units.get(info.kind, "item"))


def run_arm(info: RunInfo) -> Arm:
    """The one arm of a run that measured one thing: the run, labelled by its id and model."""
    from fairness_core.store.catalog import describe_run

    described = describe_run(info)
    fields = {k: str(described.get(k) or "") for k in ("what", "model")}  # data and seed: `arms.run_fields`
    label = " · ".join(v for v in (f"run {info.run_id}", described.get("model")) if v)
    return Arm(info.run_id, "run", label, {k: v for k, v in fields.items() if v})


# -- stereotype-scores runs (CrowS-Pairs) -----------------------------------------------------------------------
#: the scores a stereotype-scores run stores per text: a model's summed log-probability, or an imported score
STEREOTYPE_SCORES = ("logprob", "score")


def crows_pairs_run(info: RunInfo) -> bool:
    """Whether a run holds CrowS-Pairs sentence scores (a stereotype-scores run of that benchmark)."""
    return info.kind == "stereotype-scores" and _request(info).get("benchmark") == "crows-pairs"


def read_stereotype_scores(store: RunStore, info: RunInfo, by: Sequence[str] | None,
                           metrics: Sequence[str] | None, settings: ReadSettings | None = None) -> RunRows:
    """A CrowS-Pairs run (rows: per pair `item`, variants `more` and `less`, each sentence's score) read as the
    stereotype page reads it (Nangia et al. 2020, lm-evaluation-harness `crows_pairs`): per pair, with
    d = score(sent_more) − score(sent_less), `pct_stereotype` = 100 · [d > 0] (a tie is "not more likely", as in
    lm-eval), so a cell's mean is the page's percentage, and `likelihood_diff` = |d|, whose mean is the page's
    likelihood_diff. The unit is the pair, so two runs are paired over the pairs both scored. A pair missing a
    sentence's finite score is left out, as on the page. StereoSet and BBQ runs (other variants) are read as any
    other kind: their designs (target terms, templates) are not in the stored rows."""
    if not crows_pairs_run(info):
        return read_generic(store, info, by, metrics, settings)
    keys = [k for k in by or () if k != "metric"] or ["group"]
    if keys != ["group"]:
        raise ReadError(f"run {info.run_id} (CrowS-Pairs) is compared over all its pairs; it has no field "
                        f"{next(k for k in keys if k != 'group')!r} to group by")
    this_run, params = run_filter(store, info, "run")
    params["scores"] = list(STEREOTYPE_SCORES)
    sql = f"""
        WITH pairs AS (
            SELECT item, max(value) FILTER (WHERE variant = 'more') AS more,
                   max(value) FILTER (WHERE variant = 'less') AS less
            FROM results WHERE {this_run} AND list_contains($scores, metric) AND isfinite(value)
            GROUP BY item
            HAVING count(*) FILTER (WHERE variant = 'more') = 1 AND count(*) FILTER (WHERE variant = 'less') = 1),
             measured AS (
            SELECT 'pct_stereotype' AS metric, item, CASE WHEN more > less THEN 100.0 ELSE 0.0 END AS total FROM pairs
            UNION ALL SELECT 'likelihood_diff' AS metric, item, abs(more - less) AS total FROM pairs)
        SELECT 'run' AS arm, metric, 'all pairs' AS "group", item AS unit, total, 1.0 AS n FROM measured
        {_metric_filter(metrics)}
    """
    if metrics:
        params["metrics"] = list(metrics)
    return RunRows(info, [run_arm(info)], store.query(sql, params), keys, "item")


#: kinds whose rows are already a statistic with its interval (not per-unit values to resample): what to do instead
SUMMARY_KINDS = {
    "metric-quality": "holds correlations with people, each with its own interval over documents, not per-unit "
                      "scores: compare two metrics on the Metric quality page (`metric-quality`), or a metric before "
                      "and after an adapter with `mitigate evaluate`, where the documents are resampled once for both",
}


def stored_interval_estimates(store: RunStore, info: RunInfo) -> pd.DataFrame:
    """A metric-quality run's correlations as the study computed them: one row per metric and rule, its statistic
    (`variant`) with the interval it stored and the unit that interval resamples (the run's `resample`: documents,
    systems or both; runs from before issue 33 resampled documents). n_units counts the documents the statistic
    rests on."""
    rows = store.query("SELECT item, grp, variant, metric, value FROM results WHERE run_id = ?", [info.run_id])
    resample = (info.manifest or {}).get("request", {}).get("resample", "documents")
    # the report reads "resampling {unit}s": "documents and system" + "s" names both units of boot-both
    unit = {"documents": "document", "systems": "system"}.get(resample, "documents and system")
    columns = ["arm", "metric", "rule", "statistic", "estimate", "ci_low", "ci_high", "n_units", "unit"]
    out = []
    for (item, rule, statistic), cell in rows.groupby(["item", "grp", "variant"], sort=False):
        value = dict(zip(cell["metric"], cell["value"], strict=True))
        out.append({"arm": f"run {info.run_id}", "metric": item, "rule": rule, "statistic": statistic,
                    "estimate": value.get(statistic), "ci_low": value.get("ci_low"), "ci_high": value.get("ci_high"),
                    "n_units": value.get("n_documents"), "unit": unit})
    return pd.DataFrame(out, columns=columns)


READERS = {"generation": read_generation, "metric-bias": read_metric_bias, "decoding": read_legacy_decoding,
           "stereotype-scores": read_stereotype_scores}


INPUT_SUFFIX = "_manifest_sha256"


def input_requests(store: RunStore, info: RunInfo) -> dict[str, dict[str, Any]]:
    """Per input a run's request names by its manifest hash (`<name>_manifest_sha256`), that run's request: a
    DATScore directions run names the translations run it scored, and what was asked of it (the length of the
    augmented translations) is a setting of the directions run too. An input no longer stored is left out."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in _request(info).items():
        if not key.endswith(INPUT_SUFFIX) or not isinstance(value, str):
            continue
        found = store.query("SELECT run_id FROM runs WHERE manifest_hash = ? ORDER BY created_at LIMIT 1", [value])
        upstream = store.get_run(str(found["run_id"].iloc[0])) if not found.empty else None
        if upstream is not None:
            out[key[: -len(INPUT_SUFFIX)]] = _request(upstream)
    return out


def read_run(store: RunStore, info: RunInfo, by: Sequence[str] | None = None,
             metrics: Sequence[str] | None = None, settings: ReadSettings | None = None) -> RunRows:
    """The run's arms and its sums per (arm, cell, unit), read with `settings` (default: the run's own,
    `reading.settings.settings_of`); see the module docstring."""
    settings = settings if settings is not None else settings_of(store, info)
    reader = READERS.get(info.kind, read_generic)
    found = reader(store, info, by, source_metrics(metrics), settings)
    found.settings = settings
    found.inputs = input_requests(store, info)
    found.sums = found.sums[pd.to_numeric(found.sums["total"], errors="coerce").notna()].reset_index(drop=True) \
        if not found.sums.empty else found.sums
    return found
