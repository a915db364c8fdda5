"""The settings next to a live move, sampled ahead: the next move there gets exactly its rows without sampling them,
nothing is stored ahead, and the background work gives way to real work."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest

from fairness_core import decoding as dec
from fairness_core.decoding import SliderPosition, neighbours
from fairness_core.models import ModelSpec, load_model
from fairness_core.store import RunStore

PROMPTS = dec.parse_custom("man: The man worked as\nwoman: The woman worked as\nman: The man was\n"
                           "woman: The woman was")
SCORERS = (("vader", {}),)


def test_the_neighbours_are_one_notch_either_side_along_the_knob_that_moved_next_notch_first() -> None:
    start = SliderPosition(top_p=0.9)
    assert neighbours(start) == [SliderPosition(top_p=0.95), SliderPosition(top_p=0.85)]  # first move: top-p
    down = SliderPosition(top_p=0.85)
    assert neighbours(down, start) == [SliderPosition(top_p=0.8), SliderPosition(top_p=0.9)]  # on downwards first
    warmer = SliderPosition(top_p=0.9, temperature=1.05)
    assert neighbours(warmer, start) == [replace(warmer, temperature=1.1), replace(warmer, temperature=1.0)]
    assert neighbours(SliderPosition(top_p=0.9, top_k=10), start) == [SliderPosition(top_p=0.9, top_k=25),
                                                                     SliderPosition(top_p=0.9, top_k="off")]
    assert neighbours(SliderPosition(top_p=1.0)) == [SliderPosition(top_p=0.95)]  # the slider's end
    assert neighbours(SliderPosition(top_p=0.8500000000000001), start)[0] == SliderPosition(top_p=0.8)
    assert neighbours(SliderPosition(top_p=0.87)) == []  # between the notches (a hand-made link): none
    assert SliderPosition(top_p=1.0, top_k="off").config(15) == dec.DecodingConfig(max_new_tokens=15)  # both off


def test_further_notches_come_ring_by_ring_nearest_first() -> None:
    def at(*values: float) -> list[SliderPosition]:
        return [SliderPosition(top_p=value) for value in values]

    down = SliderPosition(top_p=0.85)
    assert dec.notch_rings(down, SliderPosition(top_p=0.9), reach=3) == [at(0.8, 0.9), at(0.75, 0.95), at(0.7, 1.0)]
    assert dec.notch_rings(SliderPosition(top_p=0.95), reach=3) == [at(1.0, 0.9), at(0.85), at(0.8)]  # the end
    assert neighbours(down, SliderPosition(top_p=0.9), reach=2) == at(0.8, 0.9, 0.75, 0.95)


def test_every_notch_of_the_three_sliders_is_sampled_ahead_the_moved_knob_first() -> None:
    """Issue 45 §3: a jump of several notches, or to another slider, finds its rows sampled once the user has read
    for a while: all 57 settings, each once, the moved knob's three nearest rings before any other knob."""
    start, down = SliderPosition(top_p=0.9), SliderPosition(top_p=0.85)
    rings = dec.ahead_rings(down, start)
    spots = [spot for ring in rings for spot in ring]
    assert len(spots) == len(set(spots)) == 19 + 10 + 28 and down not in spots
    assert rings[:3] == dec.notch_rings(down, start, reach=3)  # on along the drag first
    assert rings[3] == [replace(down, top_k=10)] and rings[4] == [replace(down, temperature=1.05),
                                                                  replace(down, temperature=0.95)]
    for spot in spots:  # one knob off the position at a time
        assert sum(getattr(spot, knob) != getattr(down, knob) for knob in dec.prefetch.KNOBS) == 1
    warmer = replace(start, temperature=1.05)
    assert dec.ahead_rings(warmer, start)[0] == [replace(warmer, temperature=1.1), replace(warmer, temperature=1.0)]


def _live(model: Path, top_p: float):
    """The request the page builds for one live setting (its sliders' config, one sampler call)."""
    config = SliderPosition(top_p=top_p).config(8)
    return dec.build_request(str(model), PROMPTS, (config,), samples=2, max_new_tokens=8, seed=3, batch_size=512,
                             scorers=SCORERS)


def _texts(outcome) -> list[tuple[str, int, str]]:
    frame = outcome.generations.sort_values(["prompt", "sample"])
    return list(zip(frame["prompt"], frame["sample"], frame["continuation"], strict=True))


def _sampler_rows(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from fairness_core.models import sampling

    calls: list[int] = []
    real = sampling.sample_rows_detailed
    monkeypatch.setattr(sampling, "sample_rows_detailed", lambda model, tokenizer, prompts, *args, **kwargs:
                        calls.append(len(prompts)) or real(model, tokenizer, prompts, *args, **kwargs))
    return calls


def test_a_move_to_a_setting_sampled_ahead_gets_its_rows_without_sampling_and_the_same_run(
        tiny_gpt2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lm = load_model(ModelSpec(str(tiny_gpt2), "causal-lm"))
    lm.rows.clear()
    fresh = RunStore(tmp_path / "fresh.duckdb")
    expected = dec.run_decoding(dec.plan_decoding(_live(tiny_gpt2, 0.55), fresh), fresh)  # sampled as ever

    store = RunStore(tmp_path / "runs.duckdb")
    dec.run_decoding(dec.plan_decoding(_live(tiny_gpt2, 0.5), store), store)  # the move the user made
    ahead = [replace(_live(tiny_gpt2, 0.5), configs=(spot.config(8),))
             for spot in neighbours(SliderPosition(top_p=0.5))]
    assert dec.sample_ahead(ahead, store, should_stop=lambda: False) == 2 * 8  # two settings x 4 prompts x 2 samples
    assert len(store.list_runs()) == 1  # nothing stored ahead
    assert dec.sample_ahead(ahead, store, should_stop=lambda: False) == 0  # kept already

    calls = _sampler_rows(monkeypatch)
    moved = dec.run_decoding(dec.plan_decoding(_live(tiny_gpt2, 0.55), store), store)  # the next move
    assert calls == []  # no row sampled
    assert _texts(moved) == _texts(expected)  # word for word what sampling gives
    assert moved.generations["vader_compound"].tolist() == pytest.approx(
        expected.generations["vader_compound"].tolist())
    assert store.get_run(moved.run_ids[0]).manifest == fresh.get_run(expected.run_ids[0]).manifest  # the same run


def test_sampling_ahead_stops_for_real_work_and_keeps_nothing(tiny_gpt2: Path, tmp_path: Path) -> None:
    lm = load_model(ModelSpec(str(tiny_gpt2), "causal-lm"))
    lm.rows.clear()
    store = RunStore(tmp_path / "runs.duckdb")
    steps = []

    def busy_after_two_steps() -> bool:
        steps.append(1)
        return len(steps) > 2

    assert dec.sample_ahead([_live(tiny_gpt2, 0.6)], store, should_stop=busy_after_two_steps) == 0
    assert len(lm.rows) == 0 and len(steps) == 3  # one check before planning, two steps, stopped at the third


def test_the_background_sampler_runs_the_newest_request_only_and_never_while_busy(tiny_gpt2: Path,
                                                                                  tmp_path: Path) -> None:
    lm = load_model(ModelSpec(str(tiny_gpt2), "causal-lm"))
    lm.rows.clear()
    store = RunStore(tmp_path / "runs.duckdb")
    sampler = dec.AheadSampler()
    sampler.submit([[_live(tiny_gpt2, 0.7)]], store, busy=lambda: True, patience_s=0.3)
    assert sampler.finished.wait(60) and sampler.last_sampled == 0 and len(lm.rows) == 0  # busy: nothing

    hold = threading.Event()
    sampler.submit([[_live(tiny_gpt2, 0.7)]], store, busy=lambda: not hold.wait(60))  # waits until released
    sampler.submit([[_live(tiny_gpt2, 0.75)]], store, busy=lambda: False)  # a newer move replaces it
    hold.set()
    assert sampler.finished.wait(60) and sampler.last_sampled == 8
    kept = {key[1].top_p for key in lm.rows._rows}
    assert kept == {0.75}


def test_a_stop_during_a_further_ring_keeps_the_rings_done(tiny_gpt2: Path, tmp_path: Path) -> None:
    lm = load_model(ModelSpec(str(tiny_gpt2), "causal-lm"))
    lm.rows.clear()
    store = RunStore(tmp_path / "runs.duckdb")
    sampler = dec.AheadSampler()
    after_first = []

    def busy() -> bool:  # real work arrives while the second ring is being sampled
        if len(lm.rows) >= 8:
            after_first.append(1)
        return len(after_first) > 2

    sampler.submit([[_live(tiny_gpt2, 0.7)], [_live(tiny_gpt2, 0.75)]], store, busy=busy)
    assert sampler.finished.wait(60) and sampler.last_sampled == 8  # the first ring: 4 prompts x 2 samples
    assert {key[1].top_p for key in lm.rows._rows} == {0.7}  # kept; the second ring stopped and kept nothing


def test_a_model_call_choosing_its_threads_stops_the_background_first(tiny_gpt2: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A move that starts while the background samples would otherwise count its threads as other programs' and take
    one thread for its whole length (found in review: 4 of 5 trials on two cores)."""
    import time

    from fairness_core.models import threads

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)  # the policy decides (the test workers fix one thread)
    monkeypatch.delenv(threads.FIXED_ENV, raising=False)
    lm = load_model(ModelSpec(str(tiny_gpt2), "causal-lm"))
    lm.rows.clear()
    store = RunStore(tmp_path / "runs.duckdb")
    long = dec.build_request(str(tiny_gpt2), PROMPTS, (SliderPosition(top_p=0.8).config(40),), samples=4,
                             max_new_tokens=40, seed=5, batch_size=512, scorers=SCORERS, full_length=True)
    sampler = dec.AheadSampler()
    sampler.submit([[long]], store, busy=lambda: time.sleep(0.05) or False)  # a slow step: it is mid-way below
    try:
        deadline = time.monotonic() + 60
        while sampler._resting.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not sampler._resting.is_set()  # sampling now

        chosen = []
        caller = threading.Thread(target=lambda: chosen.append(threads.decide()))  # fresh: no earlier choice
        caller.start()
        caller.join(60)
        assert chosen and sampler._resting.is_set()  # it chose after the background had left the model
        assert len(lm.rows) == 0  # stopped part-way: nothing kept
    finally:
        sampler.cancel()
        sampler._resting.wait(60)  # never leave a thread inside torch behind


def test_sampling_on_the_callers_thread_gives_way_to_a_model_call_choosing_its_threads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's warm-up samples the first visit's rows on its own thread (`sample_ahead_here`, issue 45 §2): a
    visitor's model call that decides its threads meanwhile stops it first, as it stops the background sampler."""
    import time

    from fairness_core.decoding import prefetch
    from fairness_core.models import threads

    steps: list[int] = []

    def sampling(requests, store, should_stop, threads_now=None) -> int:  # a decoding step every 10 ms
        while not should_stop() and len(steps) < 3000:
            steps.append(1)
            time.sleep(0.01)
        return len(steps)

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)  # the policy decides (the test workers fix one thread)
    monkeypatch.delenv(threads.FIXED_ENV, raising=False)
    monkeypatch.setattr(prefetch, "sample_ahead", sampling)
    result: list[int] = []
    sampler = threading.Thread(target=lambda: result.append(prefetch.sample_ahead_here([], None, lambda: False)))
    sampler.start()
    while not steps:
        time.sleep(0.01)
    caller = threading.Thread(target=threads.decide)  # a fresh thread: it has made no earlier choice
    caller.start()
    caller.join(30)
    sampler.join(30)
    assert not caller.is_alive() and result and result[0] < 3000  # stopped part-way, before the call went on
    hook = threads._MAKE_WAY[-1]
    waited: list[float] = []
    monkeypatch.setattr(threading.Event, "wait", lambda self, timeout=None: waited.append(timeout) or True)
    hook()  # once the sampling is done, the hook it left waits for nothing
    assert waited == []
