"""A live setting's neighbours sampled ahead, while the machine is idle, so the next slider move finds its rows done.

A slider move's time is mostly the model's (15 decoding steps of 11 rows, each step bound by reading 0.5 GB of
weights: docs/decoding.md), and no kernel makes that step much cheaper without changing the samples. What can
change is *when* the rows are sampled: after a move, the settings a few notches either side along the knob that
moved are generated in the background, nearest first, and the model keeps the rows (`models.hf.SampledRows`). A
row's text depends only on (prompt, setting, seed, limit, stop rule), so when the user moves there the run's rows
are answered from that record: the same texts and log-probabilities a fresh sampling gives, and the run is scored
and stored as any other. Nothing is written to the run store ahead: a setting nobody moves to leaves no run.

The background work gives way: it runs only while `should_stop()` is False (the caller's rule: nothing queued or
running, the machine not busy, no newer move) and checks it before every decoding step, so real work waits at
most one step (~50 ms).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from fairness_core.models.interfaces import DecodingConfig

#: the live sliders' notches, in order (app_pages/decoding.py: the same ranges and steps; its top-k options are these)
TOP_P_VALUES = tuple(round(0.05 * i, 2) for i in range(1, 21))  # 0.05 … 1.0; 1.0 switches top-p off
TOP_K_VALUES: tuple[int | str, ...] = ("off", 10, 25, 50, 75, 100, 250, 500, 1000, 1500, 2000)
TEMPERATURE_VALUES = tuple(round(0.1 + 0.05 * i, 2) for i in range(29))  # 0.1 … 1.5
KNOBS = ("top_p", "top_k", "temperature")
#: how often a submission waiting for the model workers and the machine to go quiet looks again
WAIT_STEP_S = 0.1


@dataclass(frozen=True)
class SliderPosition:
    """Where the three live sliders stand, in the sliders' own values ("off" for top-k off, 1.0 for top-p off)."""

    top_p: float = 0.9
    top_k: int | str = "off"
    temperature: float = 1.0

    def config(self, max_new_tokens: int) -> DecodingConfig:
        return DecodingConfig(temperature=self.temperature, top_k=None if self.top_k == "off" else int(self.top_k),
                              top_p=None if self.top_p >= 1.0 else self.top_p, max_new_tokens=max_new_tokens)


def _values(knob: str) -> tuple[Any, ...]:
    return {"top_p": TOP_P_VALUES, "top_k": TOP_K_VALUES, "temperature": TEMPERATURE_VALUES}[knob]


def moved_knob(position: SliderPosition, previous: SliderPosition | None) -> str:
    """The knob that moved from `previous` to `position` (top-p when none did, or several: the page's first slider)."""
    moved = [knob for knob in KNOBS if previous is not None and getattr(previous, knob) != getattr(position, knob)]
    return moved[0] if len(moved) == 1 else "top_p"


def notch_rings(position: SliderPosition, previous: SliderPosition | None = None,
                reach: int = 1) -> list[list[SliderPosition]]:
    """The positions 1, 2, … `reach` notches either side of `position` along the knob that moved last, one list per
    distance (nearest first; a slider's end leaves a list of one, or none): at each distance the notch in the
    direction of the move first (a user dragging a slider tends to go on), then the other one."""
    knob = moved_knob(position, previous)
    values = _values(knob)
    index = _notch(values, getattr(position, knob))
    if index is None:  # a value set by a link or by hand, between the notches: none to go to
        return []
    before = _notch(values, getattr(previous, knob)) if previous is not None else None
    way = -1 if before is not None and before > index else 1
    rings = [[replace(position, **{knob: values[i]}) for i in (index + way * distance, index - way * distance)
              if 0 <= i < len(values)] for distance in range(1, reach + 1)]
    return [ring for ring in rings if ring]


#: a notch along a knob that did not move counts as this many notches further than one along the knob that moved:
#: a drag goes on along its slider, and a jump to another slider comes later, when the user reads and thinks
OTHER_KNOB_DISTANCE = 2


def ahead_rings(position: SliderPosition, previous: SliderPosition | None = None) -> list[list[SliderPosition]]:
    """Every notch of all three sliders from `position` (one knob moved at a time, the others where they stand), one
    list per ring, nearest first: the knob that moved ring by ring (`notch_rings`), and each other knob's notches
    `OTHER_KNOB_DISTANCE` further than their own distance (issue 45 §3: a jump of several notches, or to another
    slider, finds its rows sampled once the user has read the result for a while). At the page's defaults that is
    19 + 10 + 28 = 57 settings."""
    moved = moved_knob(position, previous)
    ranked: list[tuple[int, int, list[SliderPosition]]] = []
    for order, knob in enumerate([moved, *[k for k in KNOBS if k != moved]]):
        extra = 0 if knob == moved else OTHER_KNOB_DISTANCE
        reference = previous if knob == moved else None  # only the moved knob has a direction to go on in
        rings = notch_rings(position, _as_moved(reference, position, knob), reach=len(_values(knob)))
        ranked += [(distance + extra, order, ring) for distance, ring in enumerate(rings, start=1)]
    return [ring for _, _, ring in sorted(ranked, key=lambda item: (item[0], item[1]))]


def _as_moved(previous: SliderPosition | None, position: SliderPosition, knob: str) -> SliderPosition:
    """A previous position from which `knob` moved to `position` (so `notch_rings` walks that knob): the real
    previous one when `knob` is the one that moved, else `position` one notch off along `knob`."""
    if previous is not None and moved_knob(position, previous) == knob:
        return previous
    values = _values(knob)
    index = _notch(values, getattr(position, knob))
    if index is None:
        return position
    other = index - 1 if index > 0 else index + 1
    return replace(position, **{knob: values[other]})


def neighbours(position: SliderPosition, previous: SliderPosition | None = None,
               reach: int = 1) -> list[SliderPosition]:
    """`notch_rings` in one list, nearest first."""
    return [spot for ring in notch_rings(position, previous, reach) for spot in ring]


def on_notch(knob: str, value: Any) -> Any:
    """`value` as the slider's notch it is within float rounding of (a browser's slider arithmetic gives
    0.8500000000000001 for 0.85, which is another setting and another run); any other value as it is."""
    index = _notch(_values(knob), value)
    return value if index is None else _values(knob)[index]


def _notch(values: tuple[Any, ...], value: Any) -> int | None:
    for index, candidate in enumerate(values):
        if isinstance(candidate, str) or isinstance(value, str):
            if candidate == value:
                return index
        elif abs(float(candidate) - float(value)) < 1e-9:
            return index
    return None


def cores_busy() -> bool:
    """Another program (or another thread of this one) keeps a core busy now (`models.threads.other_runnable`):
    work nobody has asked for yet waits."""
    from fairness_core.models.threads import other_runnable

    return other_runnable() >= 1


class Stopped(Exception):
    """Raised inside the sampler when `should_stop()` turned True: the rows sampled so far are dropped."""


Row = tuple[str, DecodingConfig, int, int, bool]  # prompt, setting, seed, token limit, stop rule


def _rows_to_sample(task: Any) -> dict[str, tuple[dict[str, Any], list[Row]]]:
    """The rows a planned generation task would sample in-process, by model: (model record, rows)."""
    from fairness_core.generation.task import decoding_from_record

    by_model: dict[str, tuple[dict[str, Any], list[Row]]] = {}
    if task is None or task.request.get("mode") != "continue":
        return by_model
    request = task.request
    max_new = int(request["max_new_tokens"])
    stops = request.get("stops") == "first sentence settled"
    for shard in task.shards:
        model = shard.get("model")
        if not model or model.get("task") != "causal-lm":
            continue
        rows = [(row["prompt"], decoding_from_record(request["systems"][row["system"]]["decoding"], max_new),
                 int(row["row_seed"]), max_new, stops) for row in shard["rows"] if row["raw"] is None]
        by_model.setdefault(repr(sorted(model.items())), (model, []))[1].extend(rows)
    return by_model


def _loaded(model: dict[str, Any]) -> Any:
    """The model of this record if this process has it loaded, else None: work nobody asked for never loads one
    (a load outside the queue cannot be cancelled and may push another model out of the cache)."""
    from fairness_core.models import ModelSpec, load_model
    from fairness_core.models.memo import loaded_keys

    spec = ModelSpec(**model)
    return load_model(spec) if spec.cache_key() in loaded_keys() else None


def rows_sampled_ahead(plan: Any) -> tuple[int, int]:
    """(rows of a planned live run that were sampled ahead, rows it will sample): what the page says of a move."""
    ahead = total = 0
    for model, rows in _rows_to_sample(plan.plan.task).values():
        total += len(rows)
        try:
            record = getattr(_loaded(model), "rows", None)
        except Exception:  # a model record that does not make a spec says so when the move runs, not here
            record = None
        if record is not None:
            ahead += sum(record.get(record.key(*row)) is not None for row in rows)
    return ahead, total


def sample_ahead(requests: Sequence[Any], store: Any, should_stop: Callable[[], bool],
                 threads: int | None = None) -> int:
    """Sample the rows `requests` (live `DecodingRequest`s) would generate and the store lacks, in one sampler call per
    model, into the model's record of sampled rows; nothing is stored. Returns the rows sampled (0 when stopped,
    or when every row is stored or recorded already). Only in-process models in continue mode: an endpoint or chat
    request is left alone (its rows are not the model layer's to keep)."""
    from fairness_core.decoding.task import plan_decoding, torch_threads

    by_model: dict[str, tuple[dict[str, Any], list[Row]]] = {}
    for live in requests:
        if should_stop():
            return 0
        for key, (model, rows) in _rows_to_sample(plan_decoding(live, store).plan.task).items():
            by_model.setdefault(key, (model, []))[1].extend(rows)
    sampled = 0
    for model, rows in by_model.values():
        lm = _loaded(model)
        if lm is None or getattr(lm, "remote", False) or not hasattr(lm, "sample_ahead"):
            continue
        for max_new, stops in sorted({(row[3], row[4]) for row in rows}):
            part = [row for row in rows if (row[3], row[4]) == (max_new, stops)]

            def check(done: int, total: int) -> None:
                if should_stop():
                    raise Stopped

            try:
                with torch_threads(threads):
                    sampled += lm.sample_ahead([r[0] for r in part], [r[1] for r in part], [r[2] for r in part],
                                               max_new, stop_at_sentence_end=stops, on_progress=check)
            except Stopped:
                return sampled
    return sampled


def sample_ahead_here(requests: Sequence[Any], store: Any, should_stop: Callable[[], bool],
                      threads: int | None = None) -> int:
    """`sample_ahead` on the calling thread (the server's warm-up samples the first visit's rows so), giving way as
    `AheadSampler` does: a model call that decides its threads meanwhile stops it before its next decoding step and
    waits for that (up to a second), so the call does not count this work as another program's and take fewer
    threads."""
    from fairness_core.models.threads import make_way_with

    stop, done, me = threading.Event(), threading.Event(), threading.get_ident()

    def make_way(timeout_s: float = 1.0) -> None:
        if threading.get_ident() != me and not done.is_set():
            stop.set()
            done.wait(timeout_s)

    make_way_with(make_way)  # a no-op once `done` is set
    try:
        return sample_ahead(requests, store, lambda: stop.is_set() or should_stop(), threads)
    finally:
        done.set()


class AheadSampler:
    """One background sampler per process, on one long-lived thread (model work on a new thread each time would
    leave the C heap an arena per thread): each `submit` replaces the work not yet done (the newest move's
    neighbours are the ones worth having); `busy` is checked before every decoding step."""

    def __init__(self) -> None:
        from fairness_core.models.threads import make_way_with

        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._generation = 0
        self._pending: tuple[int, Callable[[Callable[[], bool]], int]] | None = None
        self._thread: threading.Thread | None = None
        self._resting = threading.Event()  # clear while the thread samples
        self._resting.set()
        self.last_sampled = 0  # rows the last finished submission sampled (tests, the bench)
        self.finished = threading.Event()
        make_way_with(self.make_way)  # any model call deciding its threads stops this work first

    def make_way(self, timeout_s: float = 1.0) -> None:
        """Stop the work in hand (and any not started) and wait until it is off the model, at most `timeout_s`:
        what a model call about to choose its thread count calls first (`models.threads.decide`), so it does
        not count this work's threads as other programs' for its whole length. Returns at once on this
        sampler's own thread, and at once when it is not sampling."""
        if threading.current_thread() is self._thread:
            return
        self.cancel()
        self._resting.wait(timeout_s)

    def submit(self, rings: Sequence[Sequence[Any]], store: Any, busy: Callable[[], bool],
               threads: Callable[[], int | None] = lambda: None, delay_s: float = 0.0,
               quiet: Callable[[], bool] = lambda: True, patience_s: float = 5.0) -> None:
        """Sample `rings` (lists of live requests, nearest first) ahead in the background, `delay_s` from now, once
        `busy()` is False and `quiet()` True (given up after `patience_s` of waiting for that, or when a newer
        submission comes); one sampler call per ring, so the rings done are kept when it stops at the next decoding
        step once `busy()` turns True."""

        def work(superseded: Callable[[], bool]) -> int:
            def stale() -> bool:
                return superseded() or busy()

            if delay_s > 0:
                time.sleep(delay_s)
            deadline = time.monotonic() + patience_s
            while not superseded() and (busy() or not quiet()) and time.monotonic() < deadline:
                time.sleep(WAIT_STEP_S)
            if stale() or not quiet():
                return 0
            self._resting.clear()
            sampled = 0
            try:
                for ring in rings:
                    if stale():
                        break
                    sampled += sample_ahead(ring, store, stale, threads())
                return sampled
            finally:
                self._resting.set()

        with self._lock:
            self._generation += 1
            self._pending = (self._generation, work)
            self.finished.clear()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="fairness-lab-sample-ahead", daemon=True)
                self._thread.start()
            self._wake.notify()

    def cancel(self) -> None:
        with self._lock:
            self._generation += 1
            self._pending = None

    def _serve(self) -> None:
        while True:
            with self._lock:
                while self._pending is None:
                    self._wake.wait()
                mine, work = self._pending
                self._pending = None
            sampled = 0
            try:
                sampled = work(lambda mine=mine: self._generation != mine)
            except Exception:  # ahead-of-time work never fails a page; the real move reports its own errors
                sampled = 0
            with self._lock:
                if self._generation == mine:
                    self.last_sampled = sampled
                    self.finished.set()
