"""The report laid out by a real browser, from a phone's width to a wide screen.

Headless Chromium opens a regression's report (diabetes data), a binary
classifier's (breast cancer data) and one with a 50-character feature name
at 390, 800 and 1400 pixels: nothing may reach beyond the window (a wide
table scrolls inside its box), no card may be empty and no figure's card
wider than its image. The reports are written by the developer command
``tools/report_screenshots.py``, which also measures them and takes the
screenshots left in the test's ``tmp_path`` for a person to look at.

Without Chromium on PATH the tests are skipped, unless the environment sets
``SKSHAPLEY_REQUIRE_BROWSER=1`` (CI does): then they fail.
"""

import os

import pytest

# A phone, a narrow laptop window, a wide screen.
WIDTHS = [390, 800, 1400]

# A PNG of one white pixel.
PIXEL = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8"
    "/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg=="
)


@pytest.fixture(scope="module")
def browser(tool):
    command = tool.browser()
    if command is None:
        reason = (
            "Chromium (chromium, chromium-browser or google-chrome) is not on "
            "PATH: apt install chromium"
        )
        if os.environ.get("SKSHAPLEY_REQUIRE_BROWSER") == "1":
            pytest.fail(f"SKSHAPLEY_REQUIRE_BROWSER=1 needs a browser, but {reason}")
        pytest.skip(f"the report's layout is checked in a browser, but {reason}")
    return command


@pytest.mark.parametrize("case", ["regression", "binary", "grouped"])
def test_the_report_fits_every_width(tool, browser, tmp_path, case):
    pytest.importorskip("matplotlib")
    page = tool.render_case(case, tmp_path)
    assert "<script" not in page.read_text(encoding="utf-8")
    problems = tool.layout_problems(browser, page, WIDTHS)
    for width in WIDTHS:  # for a person to look at
        assert tool.screenshot(browser, page, width).stat().st_size > 0
    assert problems == {width: [] for width in WIDTHS}


def test_the_check_sees_each_problem(tool, browser, tmp_path):
    page = tmp_path / "bad.html"
    page.write_text(
        "<!doctype html><body>"
        '<div class="scroll" style="overflow-x: auto">'
        '<div style="width: 600px">a wide table, scrolled</div></div>'
        '<div id="wide" style="width: 600px">wider than a phone</div>'
        '<div class="card"></div>'
        f'<figure style="margin: 0; width: 300px"><img src="{PIXEL}" width="100">'
        "</figure></body>",
        encoding="utf-8",
    )
    problems = tool.layout_problems(browser, page, [390, 800])
    narrow_figure = "figure has 200 px of white beside its image"
    assert problems[800] == ["div.card is empty", narrow_figure]
    assert problems[390] == [
        "the page is 608 px wide",  # 600 and the body's margin of 8
        "div#wide reaches 608 px",
        "div.card is empty",
        narrow_figure,
    ]
