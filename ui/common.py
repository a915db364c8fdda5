"""Widgets and cached resources every page uses: the store, models, manifests, exports."""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import streamlit as st

from fairness_core import config
from fairness_core.store import RunStore, StoreError, signature

#: Okabe & Ito's colour-blind-safe palette ("Color Universal Design", 2008): distinguishable with every common
#: colour-vision deficiency and in greyscale print. Every chart colours categories with `PALETTE`.
OKABE_ITO = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "bluish green": "#009E73",
    "vermillion": "#D55E00",
    "sky blue": "#56B4E9",
    "reddish purple": "#CC79A7",
    "yellow": "#F0E442",
    "black": "#000000",
}
#: Category colours in order: the strong ones first, pale yellow (hard to see on white) last but one.
PALETTE = tuple(OKABE_ITO.values())
#: Fixed meanings, the same on every page: a bad/negative outcome and a good/neutral one.
NEGATIVE_COLOR = OKABE_ITO["vermillion"]
POSITIVE_COLOR = OKABE_ITO["blue"]
NEUTRAL_COLOR = "#7F7F7F"

#: A keyboard focus ring that reads on every background: Streamlit's own is a 3 px half-transparent halo in the
#: primary colour, faint around a primary (dark red) button. Dark blue, outside the element, keyboard focus only.
FOCUS_RING_CSS = """<style>
button:focus-visible, a:focus-visible, summary:focus-visible, [role="tab"]:focus-visible,
[role="slider"]:focus-visible, [role="checkbox"]:focus-visible, [role="radio"]:focus-visible {
  outline: 3px solid #0B3D91 !important; outline-offset: 2px !important; }
</style>"""

STORE_KEY = "store_path"
EXECUTOR_KEY = "executor"
EXECUTOR_LABELS = {
    "local": "This process (local)",
    "ray": "Ray (cluster in RAY_ADDRESS, else a local Ray instance)",
}


def store_choice() -> tuple[Path, str | None]:
    """(store path to use, the sentence saying why the sidebar's choice was refused, or None).

    The choice is confined to the store root (`fairness_core.store.paths`); when the app is served for
    others (`FAIRNESS_LAB_SERVED=1`) the sidebar choice is ignored and the configured store is used. A refused
    or unreadable choice falls back to the configured store, so every page keeps working.
    """
    from fairness_core.store.paths import resolve_store_choice

    default = config.store_path()
    chosen = st.session_state.get(STORE_KEY)
    if config.served() or not isinstance(chosen, str) or not chosen.strip():
        return default, None
    try:
        path = resolve_store_choice(chosen)
        if path != default:
            _store_for(str(path)).check()
    except StoreError as error:
        return default, f"{error}. Using the configured store {default} instead."
    return path, None


def served() -> bool:
    """True when the app is served for others: the sidebar shows the store but offers no choice."""
    return config.served()


def store_path() -> Path:
    """The store chosen in the sidebar for this session (default: env var or data/runs.duckdb)."""
    return store_choice()[0]


def get_store() -> RunStore:
    return _store_for(str(store_path()))


def store_for_server() -> RunStore:
    """The server's configured store (no session's sidebar choice): for work the server starts on its own."""
    return _store_for(str(config.store_path()))


@st.cache_resource(show_spinner=False, max_entries=8)
def _store_for(path: str) -> RunStore:
    return RunStore(path, warm=True)  # reads share a warm connection, given back after 2 s idle or before a write


def run_catalogue_or_stop(store: RunStore) -> Any:
    """The store's run catalogue (fairness_core.store.catalogue); a damaged or busy store ends the page in one
    sentence."""
    from fairness_core.store import store_catalogue

    try:
        return store_catalogue(store)
    except StoreError as error:
        st.error(escape_markdown(str(error)))
        st.stop()


def ray_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


def executor_name() -> str:
    """Where this session's batch jobs run, as chosen in the sidebar (default: local)."""
    chosen = st.session_state.get(EXECUTOR_KEY, "local")
    return chosen if chosen in EXECUTOR_LABELS and (chosen != "ray" or ray_installed()) else "local"


def get_executor() -> Any:
    """The chosen executor for `run_task` & co. Ray starts (or is joined) on the first job that uses it."""
    from fairness_core.jobs import get_executor as executor_named

    return executor_named(executor_name())


@st.cache_resource(show_spinner="Loading model (once per process)…", max_entries=config.max_models())
def load_preset_cached(key: str, dtype: str = "auto", quantization: str = "none") -> Any:
    """Heavy model objects live in st.cache_resource on top of the core's own process cache."""
    from fairness_core.models import load_preset

    return load_preset(key, dtype=dtype, quantization=quantization)


@st.cache_resource(show_spinner="Loading model (once per process)…", max_entries=config.max_models())
def load_spec_cached(source: str, task: str, dtype: str = "auto", quantization: str = "none") -> Any:
    from fairness_core.models import load_model, resolve_model

    return load_model(resolve_model(source, task, dtype=dtype, quantization=quantization))


@st.cache_data(ttl=300, show_spinner=False, max_entries=1)
def registry_table() -> list[dict[str, str]]:
    from fairness_core.models.presets import PRESETS, availability

    rows = []
    for preset in PRESETS:
        available = availability(preset)
        rows.append({"model": preset.label, "key": preset.key, "task": preset.task, "status": available.status,
                     "why": available.reason, "licence": preset.licence})
    return rows


MAX_MODEL_ID_CHARS = 512
#: owner/name (or a bare name): letters, digits, `-`, `_`, `.`; Hugging Face's own rule (no `--` or `..`, 96 each)
_HUB_ID = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?/)?[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}"
                     r"[A-Za-z0-9])?")


def model_id_problem(typed: str) -> str | None:
    """One sentence when a typed model is neither a Hugging Face id nor a model on this machine; None if usable.

    Usable: a Hugging Face id (`gpt2`, `owner/name`), a folder holding a `config.json`, or a `.gguf` file. Whether
    the model then loads (offline, wrong task) is the model layer's sentence; this only stops strings that cannot
    name a model (`<script>`, `/etc/passwd`, a 300-character name) before anything tries to load them.
    """
    if not typed:
        return None
    if typed.startswith("endpoint:"):  # a visitor never names a URL the server would send requests to
        return "An endpoint is picked from the list (those configured in endpoints.toml), never typed here."
    shown = inline_code(typed[:80] + ("…" if len(typed) > 80 else ""))
    if len(typed) > MAX_MODEL_ID_CHARS:
        return f"{shown} is too long for a model id or path (at most {MAX_MODEL_ID_CHARS} characters)."
    path = Path(typed).expanduser()
    looks_like_path = typed.startswith(("/", "~", ".")) or "\\" in typed or typed.count("/") > 1
    try:
        if path.is_dir():
            if (path / "config.json").is_file() or any(path.glob("*.gguf")):
                return None
            return f"{shown} is a folder without a model in it (no config.json or .gguf file)."
        if path.is_file():
            if path.suffix.lower() == ".gguf":
                return None
            return f"{shown} is a file but not a model: give a model folder or a .gguf file."
        if path.exists():
            return f"{shown} is not a regular file or folder (a device or pipe): give a model folder or a .gguf file."
    except OSError as error:  # e.g. a name longer than the file system allows
        if looks_like_path:
            return f"{shown} cannot be read as a model path: {os.strerror(error.errno) if error.errno else error}."
    if looks_like_path:
        return f"{shown} does not exist on this machine: give a model folder, a .gguf file or a Hugging Face id."
    if ".." in typed or "--" in typed or not _HUB_ID.fullmatch(typed):
        return (f"{shown} is not a Hugging Face model id (name or owner/name: letters, digits, -, _ and .) nor a "
                "model folder or .gguf file on this machine.")
    return None


def model_presence_problem(typed: str) -> str | None:
    """One sentence when a typed Hugging Face id (already past `model_id_problem`) names no model that can be had:
    offline, one not on this machine; online, one not on the hub. None for local models, cached ids, ids the hub
    has, and whenever the hub's answer is unclear (the loader then says what went wrong).

    Asked before anything loads: the loader's own failure was a grey line quoting a failed connection, after a
    minute of retries."""
    if not typed or Path(typed).expanduser().exists():
        return None
    from fairness_core.models import presets, spec

    if spec.hub_cached_revision(typed) is not None:
        return None
    shown = inline_code(typed)
    if not presets.hub_reachable():
        return (f"{shown} is not on this machine (not in the local Hugging Face cache), and this machine cannot "
                "reach the hub to download it: pick a model from the list or give a local model folder.")
    if _hub_has(typed) is False:
        return f"{shown} is not on the Hugging Face hub (no model with that id): check the spelling."
    return None


@functools.lru_cache(maxsize=256)
def _hub_has(repo_id: str) -> bool | None:
    """Does the hub have this model? None when it cannot say (network trouble, rate limit)."""
    try:
        from huggingface_hub import HfApi

        return bool(HfApi().repo_exists(repo_id, repo_type="model"))
    except Exception:  # any hub trouble: no verdict, the loader reports what happens
        return None


def configured_endpoints() -> dict[str, str]:
    """{model source: label} of the endpoints in endpoints.toml (docs/endpoints.md). Only these are offered,
    served or not: the page has no URL field. A bad file is one sentence in place and offers none."""
    from fairness_core.models.endpoint import load_endpoints

    try:
        found = load_endpoints()
    except ValueError as error:
        st.warning(escape_markdown(str(error)))
        return {}
    return {endpoint.source(): f"{name}: {endpoint.label()} (OpenAI-compatible endpoint)"
            for name, endpoint in found.items()}


def model_picker(task: str, label: str, key: str, default: str | None = None) -> str:
    """Select a preset for `task` or type any Hugging Face id / local path; unavailable ones say why.

    A typed value that cannot name a model gets one sentence in place (`model_id_problem`) and "" is
    returned, as when nothing is typed yet.
    """
    rows = [row for row in registry_table() if row["task"] == task]
    endpoints = configured_endpoints() if task == "causal-lm" else {}
    options = ([row["key"] for row in rows] + list(endpoints) + ["(other Hugging Face id or local path)"])
    by_key = {row["key"]: row for row in rows}

    def describe(option: str) -> str:
        if option in endpoints:
            return endpoints[option]
        row = by_key.get(option)
        if row is None:
            return option
        # Words, not emoji: headless Chromium and many Linux desktops have no emoji font.
        note = {"available": "", "downloadable": " — downloads on first use"}.get(row["status"], " — unavailable here")
        return f"{row['model']}{note}"

    index = options.index(default) if default in options else 0
    choice = st.selectbox(label, options, index=index, format_func=describe, key=key)
    if choice in endpoints:
        return choice
    if choice not in by_key:
        typed = st.text_input("Model id or path", key=f"{key}_custom", max_chars=MAX_MODEL_ID_CHARS,
                              placeholder="e.g. gpt2 or /models/my-model").strip()
        problem = model_id_problem(typed) or model_presence_problem(typed)
        if problem:
            st.error(problem)  # markdown: developer text (model_id_problem quotes the typed value as inline code)
            return ""  # as when nothing is typed yet: the page asks for a model instead of loading this
        return typed
    if by_key[choice]["status"] == "unavailable":
        st.warning(escape_markdown(f"{by_key[choice]['model']} is unavailable here: {by_key[choice]['why']}."))
    return choice


def category_colors(categories: Iterable[Any]) -> dict[str, str]:
    """{category: colour} from `PALETTE` in first-seen order (same input, same colours on every page).

    Beyond 8 categories the palette repeats: show the category in a second channel too (facets, markers,
    labels). Use it as Plotly's `color_discrete_map=` or through `altair_scale`.
    """
    names = list(dict.fromkeys(str(category) for category in categories))
    return {name: PALETTE[index % len(PALETTE)] for index, name in enumerate(names)}


def altair_scale(categories: Iterable[Any]) -> Any:
    """An Altair colour scale with `category_colors` (pass as `alt.Color(..., scale=altair_scale(groups))`)."""
    import altair as alt

    colors = category_colors(categories)
    return alt.Scale(domain=list(colors), range=list(colors.values()))


def how_to_read(text: str) -> None:
    """The plain-language note beside a chart, for classroom use."""
    with st.expander("How to read this", expanded=False):
        st.markdown(text)  # markdown: developer text (the page's own note)


@dataclass(frozen=True)
class UrlParam:
    """A widget whose value lives in the URL too: `key` in session state, `name` in the query string.

    `parse` turns the URL's text into a value the widget accepts and raises ValueError for anything else (a
    hand-edited link may hold anything); `default` is left out of the URL."""

    key: str
    name: str
    parse: Callable[[str], Any]
    default: Any

    def render(self, value: Any) -> str:
        return f"{value:g}" if isinstance(value, float) else str(value)


def number_in(low: float, high: float, kind: type = float) -> Callable[[str], Any]:
    """A parser for `UrlParam`: a number of `kind` within [low, high]."""
    def parse(text: str) -> Any:
        value = kind(float(text)) if kind is int and float(text).is_integer() else kind(text)
        if not low <= value <= high:
            raise ValueError(f"{value} is outside [{low}, {high}]")
        return value
    return parse


def one_of(options: Sequence[Any]) -> Callable[[str], Any]:
    """A parser for `UrlParam`: the option whose text is the URL's text."""
    by_text = {str(option): option for option in options}

    def parse(text: str) -> Any:
        if text not in by_text:
            raise ValueError(f"{text!r} is not an option")
        return by_text[text]
    return parse


def restore_from_url(params: Sequence[UrlParam], flag: str) -> None:
    """Once per session (`flag` marks it), seed the widgets' state from the URL; bad values are ignored."""
    if st.session_state.get(flag):
        return
    st.session_state[flag] = True
    for param in params:
        text = st.query_params.get(param.name)
        if text is None:
            continue
        try:
            st.session_state[param.key] = param.parse(text)
        except (ValueError, TypeError, OverflowError):
            continue


def sync_url(params: Sequence[UrlParam]) -> None:
    """Write these widgets' current values to the URL (defaults left out; other parameters kept)."""
    names = {param.name for param in params}
    current = dict(st.query_params)
    wanted = {key: value for key, value in current.items() if key not in names}
    for param in params:
        if param.key in st.session_state and st.session_state[param.key] != param.default:
            wanted[param.name] = param.render(st.session_state[param.key])
    if wanted != current:
        st.query_params.clear()
        st.query_params.update(wanted)
    from ui import presenter

    presenter.refresh_link()  # the teacher's share link follows this run's state


def interval_text(low: float, high: float, digits: int = 3) -> str:
    """"[low, high]", or "(no interval)" where there is none (NaN: e.g. a single template, nothing to resample)."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return "(no interval)"
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def escape_markdown(text: str) -> str:
    """`text` shown literally inside st.markdown/st.error/st.caption (stored strings are data, not markup).

    Backslashes stop markdown syntax; bare URLs are turned into links after escapes are resolved, so a zero-width
    space goes into `://`, `www.` and `@` (it breaks the auto-link and is invisible).
    """
    escaped = re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$])", r"\\\1", " ".join(str(text).split()))
    for pattern, replacement in ((r":/", ":\u200b/"), (r"(www)(\\\.)", "\\1\u200b\\2"), (r"@", "@\u200b")):
        escaped = re.sub(pattern, replacement, escaped, flags=re.IGNORECASE)
    return escaped


def inline_code(text: str) -> str:
    """`text` as one inline code span (literal: no markup, no links), whatever backticks it contains."""
    text = " ".join(str(text).split())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def manifest_box(manifest: dict[str, Any], run_id: str, from_cache: bool) -> None:
    """The run's reproducibility signature and full manifest, like sacrebleu prints its signature."""
    st.caption(f"Run {inline_code(run_id)} — "
               + ("served from the run store (no recomputation)" if from_cache else "computed now and stored")
               + f". Signature: {inline_code(signature(manifest))}")
    with st.expander("Run manifest (everything that determines these numbers)"):
        st.code(json.dumps(manifest, indent=2, ensure_ascii=False), language="json")


@st.cache_data(show_spinner=False, max_entries=32)
def _export_files(store_path: str, run_id: str, fmt: str, n_rows: int) -> tuple[str, bytes, str | None]:
    """(file name, bytes, sidecar manifest JSON or None); `n_rows` in the key re-exports a growing run.

    The file name comes from `export_file_name` (a stored run id is never used as a path as it is) and
    the export is confined to a fresh temporary folder.
    """
    import tempfile

    from fairness_core.store.export import export_into

    with tempfile.TemporaryDirectory() as tmp:
        path = export_into(RunStore(store_path), run_id, tmp, fmt)
        sidecar = Path(str(path) + ".manifest.json")  # CSV and Parquet carry the manifest beside them
        return path.name, path.read_bytes(), sidecar.read_text() if sidecar.exists() else None


def export_buttons(run_id: str, key: str) -> None:
    """Download the run's rows with its manifest as CSV, Parquet or JSON (exported once, then cached)."""
    from fairness_core.store.export import export_file_name

    store = get_store()
    info = store.get_run(run_id)
    if info is None:
        return
    columns = st.columns(4)
    for column, fmt in zip(columns, ("csv", "parquet", "json"), strict=False):
        name, data, manifest_json = _export_files(str(store.path), run_id, fmt, info.n_rows)
        column.download_button(f"Export {fmt.upper()}", data, file_name=name, key=f"{key}_{fmt}")
        if manifest_json is not None and fmt == "csv":
            columns[3].download_button("Manifest JSON", manifest_json, file_name=export_file_name(run_id, "json",
                                       ".manifest"), key=f"{key}_manifest")
