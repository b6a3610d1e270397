"""Colour science against published figures: CIEDE2000 pairs from Sharma,
Wu and Dalal (2005), and WCAG 2 contrast ratios of known colour pairs."""

from __future__ import annotations

import pytest

from ansi2048.render.color import BASIC_RGB, contrast_ratio, delta_e, lab, relative_luminance, shown_rgb
from ansi2048.render.style import Color, ColorDepth, xterm_rgb


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
        ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
        ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
        ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
        ((50.0, 2.5, 0.0), (50.0, 3.1736, 0.5854), 1.0),
        ((2.0776, 0.0795, -1.135), (0.9033, -0.0636, -0.5514), 0.9082),
    ],
)
def test_ciede2000_matches_the_published_test_data(
    first: tuple[float, float, float], second: tuple[float, float, float], expected: float
) -> None:
    assert delta_e(first, second) == pytest.approx(expected, abs=1e-4)
    assert delta_e(second, first) == pytest.approx(expected, abs=1e-4)


def test_lab_of_white_black_and_a_primary() -> None:
    assert lab((255, 255, 255)) == pytest.approx((100.0, 0.0, 0.0), abs=0.01)
    assert lab((0, 0, 0)) == pytest.approx((0.0, 0.0, 0.0), abs=0.01)
    assert lab((255, 0, 0)) == pytest.approx((53.24, 80.09, 67.20), abs=0.05)


def test_wcag_contrast_ratios() -> None:
    assert contrast_ratio((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast_ratio((255, 255, 255), (255, 255, 255)) == pytest.approx(1.0)
    # #767676 on white is the classic lightest grey that passes 4.5:1.
    assert contrast_ratio((0x76, 0x76, 0x76), (255, 255, 255)) == pytest.approx(4.54, abs=0.01)
    assert relative_luminance((255, 255, 255)) == pytest.approx(1.0)


def test_shown_rgb_is_what_each_depth_puts_on_screen() -> None:
    color = Color.of(0xEDC22E, 92, 178)
    assert shown_rgb(color, ColorDepth.TRUE) == (0xED, 0xC2, 0x2E)
    assert shown_rgb(color, ColorDepth.EXTENDED) == xterm_rgb(178)
    assert shown_rgb(color, ColorDepth.BASIC) == BASIC_RGB[92]
    assert shown_rgb(color, ColorDepth.NONE) is None
