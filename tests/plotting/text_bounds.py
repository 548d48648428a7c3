"""Where a figure's texts are drawn: outside the figure, or over each other.

Both checks draw the figure with its own renderer (constrained layout runs
first, as when it is saved) and record every text that is actually drawn
-- titles, axis labels, tick labels inside the view limits, annotations,
legend texts, colour bar labels, offset texts -- with its window extent in
pixels, measured by the renderer that drew it.
"""

from itertools import combinations
from unittest import mock

# Pixels a text may reach past the figure's edge, or into another text:
# extents are rounded to whole pixels and glyphs are anti-aliased.
TOLERANCE = 1.0


def drawn_texts(figure) -> list:
    """``(text, window extent)`` of every non-empty text drawn in ``figure``.

    Tick labels outside the view limits are artists of the figure too but
    are not drawn, so the texts are recorded while drawing, not looked up.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    # Figures made without pyplot (the report's) have no renderer of their
    # own; Agg's is the one that writes their PNG.
    if not isinstance(figure.canvas, FigureCanvasAgg):
        FigureCanvasAgg(figure)
    drawn = []
    draw = Text.draw

    def recording_draw(text, renderer):
        draw(text, renderer)
        if text.get_visible() and text.get_text().strip():
            drawn.append((text, text.get_window_extent(renderer)))

    renderer = figure.canvas.get_renderer()
    with mock.patch.object(Text, "draw", recording_draw):
        figure.draw(renderer)
    return drawn


def outside_texts(figure) -> list[str]:
    """The drawn texts of ``figure`` that reach outside it by more than 1 px.

    Parameters
    ----------
    figure : matplotlib.figure.Figure
        The figure to draw.

    Returns
    -------
    texts : list of str
        The strings of the texts that cross the figure's edge.
    """
    bounds = figure.bbox
    return [
        text.get_text()
        for text, box in drawn_texts(figure)
        if box.x0 < bounds.x0 - TOLERANCE
        or box.y0 < bounds.y0 - TOLERANCE
        or box.x1 > bounds.x1 + TOLERANCE
        or box.y1 > bounds.y1 + TOLERANCE
    ]


def overlapping_texts(ax_or_figure) -> list[tuple[str, str]]:
    """Pairs of drawn texts that overlap by more than 1 px each way.

    Parameters
    ----------
    ax_or_figure : matplotlib.axes.Axes or matplotlib.figure.Figure
        With an Axes, only its own texts (tick labels, axis labels, title,
        annotations, legend) are compared; with a figure, all of them
        (colour bars' texts included).

    Returns
    -------
    pairs : list of tuple of str
        The strings of each overlapping pair. Slanted texts (neither
        horizontal nor vertical) are left out: the upright boxes around
        neighbouring slanted labels overlap even where their letters do not.
    """
    from matplotlib.axes import Axes

    if isinstance(ax_or_figure, Axes):
        figure, ax = ax_or_figure.figure, ax_or_figure
    else:
        figure, ax = ax_or_figure, None
    boxes = [
        (text, box)
        for text, box in drawn_texts(figure)
        if (ax is None or text.axes is ax) and not text.get_rotation() % 90
    ]
    pairs = []
    for (first, a), (second, b) in combinations(boxes, 2):
        width = min(a.x1, b.x1) - max(a.x0, b.x0)
        height = min(a.y1, b.y1) - max(a.y0, b.y0)
        if width > TOLERANCE and height > TOLERANCE:
            pairs.append((first.get_text(), second.get_text()))
    return pairs
