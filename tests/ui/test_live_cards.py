"""The live decoding cards: text shown while it is written, and a newer slider move cutting a generation short."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from fairness_core.data.prompts import parse_custom
from fairness_core.decoding.request import build_request
from fairness_core.decoding.task import plan_decoding, run_decoding
from ui.live_cards import LiveCards, ScriptControlException


class RerunRequested(ScriptControlException):
    """Stands in for Streamlit's RerunException, which a drawing call raises when the user moved a slider."""


class Slot:
    def __init__(self, interrupt_after: int | None = None) -> None:
        self.draws = 0
        self.interrupt_after = interrupt_after

    def container(self, border: bool = False):
        self.draws += 1
        if self.interrupt_after is not None and self.draws > self.interrupt_after:
            raise RerunRequested()
        return contextlib.nullcontext()


def event(group: str, text: str, done: bool, generation_id: str = "g1") -> dict:
    return {"kind": "generation", "id": generation_id, "group": group, "prompt": f"The {group} was", "text": text,
            "shown": f"The {group} was {text}", "done": done, "system": "s", "prompt_id": "p", "sample": 0}


@pytest.mark.parametrize("uptime_s", [5.0, 1e6], ids=["just-booted", "up-for-days"])
def test_cards_keep_each_generations_latest_text_and_redraw_finished_rows_at_once(monkeypatch, uptime_s) -> None:
    # time.monotonic() counts from boot: on a freshly booted machine it is smaller than the redraw interval
    monkeypatch.setattr("ui.live_cards.time.monotonic", lambda: uptime_s)
    monkeypatch.setattr(LiveCards, "REDRAW_EVERY_S", 3600.0)  # only the first update and finished rows draw
    slots = {"man": Slot(), "woman": Slot()}
    cards = LiveCards(["man", "woman"], slots)
    cards.update(event("man", "a", False))
    cards.update(event("man", "a nurse", False))  # within the redraw interval: kept, drawn later
    cards.update(event("man", "a nurse.", True))  # a finished row is drawn at once
    cards.update(event("nobody", "x", True))  # a group the page does not show
    cards.update({"kind": "something else"})
    assert cards.rows["man"]["g1"] == {"shown": "The man was a nurse.", "state": "scoring"}
    assert slots["man"].draws == 2 and slots["woman"].draws == 0


def test_a_newer_slider_move_cancels_the_generation_and_is_handed_back() -> None:
    cards = LiveCards(["man"], {"man": Slot(interrupt_after=0)})
    cards.update(event("man", "a", True))
    assert cards.cancel.cancelled and isinstance(cards.interruption, RerunRequested)
    cards.update(event("man", "a b", True))  # nothing more is drawn once interrupted
    with pytest.raises(RerunRequested):
        cards.resume_interruption()


def test_an_interrupted_live_generation_is_stored_as_cancelled_by_the_user(tiny_gpt2: Path, store) -> None:
    prompts = parse_custom("man: The man worked as\nwoman: The woman worked as")
    request = build_request(str(tiny_gpt2), prompts, "top_p=0.9", samples=1, max_new_tokens=6,
                            scorers=(("vader", {}),), batch_size=8)
    cards = LiveCards(["man", "woman"], {"man": Slot(interrupt_after=0), "woman": Slot(interrupt_after=0)})
    outcome = run_decoding(plan_decoding(request, store), store, cancel=cards.cancel, on_partial=cards.update)
    assert outcome.status == "cancelled" and outcome.generations.empty  # the shard in flight wrote nothing
    assert store.get_run(outcome.run_ids[0]).error == "cancelled by the user"
    with pytest.raises(RerunRequested):
        cards.resume_interruption()
    fresh = run_decoding(plan_decoding(request, store), store)  # the next rerun generates it whole
    assert fresh.status == "complete" and len(fresh.generations) == 2
