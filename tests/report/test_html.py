"""The report's HTML building blocks: escaping, numbers, tables."""

import pytest

from skshapley.report._data import representative_rows
from skshapley.report._html import (
    Markup,
    element,
    escape,
    facts,
    format_column,
    format_duration,
    format_number,
    table,
    void,
)


def test_text_and_attributes_are_escaped():
    cell = element("td", "<b>&x", title='say "hi" & <go>', class_="a")
    assert cell == (
        '<td title="say &quot;hi&quot; &amp; &lt;go&gt;" class="a">&lt;b&gt;&amp;x</td>'
    )
    assert escape("&amp;") == "&amp;amp;"  # an entity-like name stays text


def test_markup_is_not_escaped_twice():
    inner = element("em", "a<b")
    assert element("p", inner, "&") == "<p><em>a&lt;b</em>&amp;</p>"
    assert escape(inner) is inner
    assert isinstance(element("p"), Markup)


def test_attributes_true_false_none_and_names():
    assert void("img", src="s", hidden=True, alt=None, draggable=False) == (
        '<img src="s" hidden>'
    )
    assert element("span", data_value="1") == '<span data-value="1"></span>'


def test_table_classes():
    html = table(["a", "b"], [["x", "1"], ["y", "2"]], columns={1: "num"},
                 row_classes=[None, "rest"])  # fmt: skip
    assert '<th class="num">b</th>' in html
    assert '<tr class="rest"><td>y</td><td class="num">2</td></tr>' in html


def test_tables_scroll_inside_their_box():
    # A table wider than a phone scrolls in its box, not the whole page.
    assert table(["a"], [["x"]]).startswith('<div class="scroll"><table>')
    assert facts([("a", "x")]).startswith('<div class="scroll"><table class="facts">')


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0"),
        (152.13345, "152.1"),
        (-0.5, "−0.5"),
        (12345.678, "12,346"),
        (3.7e-13, "3.70e−13"),
        (2.5e7, "2.50e+07"),
        (float("nan"), "NaN"),
    ],
)
def test_format_number(value, text):
    assert format_number(value) == text


def test_columns_share_their_decimals():
    assert format_column([27.84, 5.0, 0.1234, -0.001]) == [
        "27.84", "5.00", "0.12", "0.00",
    ]  # fmt: skip
    assert format_column([1234.5, -2.0]) == ["1,234", "−2"]
    assert format_column([2e-5, 1e-6]) == ["2.000e−05", "1.000e−06"]
    assert format_column([0.0, 0.0]) == ["0", "0"]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(4.2e-4, "0.42 ms"), (0.1234, "123 ms"), (4.567, "4.57 s"), (123.4, "2 min 3 s")],
)
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


@pytest.mark.parametrize(
    ("raw", "rows"),
    [
        ([3.0, 1.0, 2.0, 5.0], [("highest", 3), ("median", 2), ("lowest", 1)]),
        ([2.0, 1.0], [("highest", 0), ("lowest", 1)]),
        ([7.0], [("highest", 0)]),
    ],
)
def test_representative_rows(raw, rows):
    import numpy as np

    assert representative_rows(np.array(raw)) == rows
