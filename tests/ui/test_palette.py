"""The shared colour-blind-safe palette: Okabe-Ito colours, stable category assignment, Altair scale."""

from __future__ import annotations

from ui import common


def test_the_palette_is_okabe_ito_with_pale_yellow_late() -> None:
    assert len(set(common.PALETTE)) == len(common.PALETTE) == 8
    assert set(common.PALETTE) == {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442",
                                   "#000000"}
    assert common.PALETTE.index(common.OKABE_ITO["yellow"]) >= 6  # hard to see on white: used last but one
    assert common.NEGATIVE_COLOR != common.POSITIVE_COLOR and common.NEGATIVE_COLOR in common.PALETTE


def test_categories_get_colours_in_first_seen_order_and_repeats_keep_theirs() -> None:
    colors = common.category_colors(["woman", "man", "woman", 3])
    assert colors == {"woman": common.PALETTE[0], "man": common.PALETTE[1], "3": common.PALETTE[2]}
    many = common.category_colors(f"group {i}" for i in range(10))
    assert many["group 8"] == common.PALETTE[0]  # beyond 8 the palette repeats (pages add a second channel)


def test_the_altair_scale_carries_the_same_colours() -> None:
    scale = common.altair_scale(["a", "b"])
    assert scale.to_dict() == {"domain": ["a", "b"], "range": [common.PALETTE[0], common.PALETTE[1]]}
