"""``report``: explain a data set and write one self-contained HTML page."""

import datetime
import numbers
import os
import platform
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from sklearn.utils.validation import check_is_fitted

from .._contract.importance import importance
from .._runtime.files import atomic_write
from .._runtime.optional import require_matplotlib
from . import _download, _leave_one_out, _sections, _summary
from ._data import (
    chosen_rows,
    explained,
    plotted_interactions,
    representative_rows,
    strongest_pairs,
)
from ._dataset import data_section
from ._html import Markup, element, join, void
from ._quality import (
    checked_targets,
    model_quality,
    probability_view,
    quality_section,
)
from ._style import CSS

# Rows of the table of strongest interaction pairs.
_PAIRS_SHOWN = 10

_VERSIONED = ("skshapley", "numpy", "scipy", "pandas", "scikit-learn", "matplotlib")


def report(
    explainer,
    X,
    path: str | os.PathLike,
    *,
    y=None,
    title: str | None = None,
    top_k: int = 4,
    max_display: int = 20,
    output=None,
    show_rows=None,
    interactions: bool = False,
    leave_one_out: bool = False,
    download: bool = False,
    progress=None,
) -> Path:
    """Explain ``X`` and write a self-contained HTML report of the attributions.

    The report is one HTML file, with its figures embedded as PNG images and
    its style inline: it needs no network, no JavaScript and no other file,
    so it can be sent as it is. Its sections (each an ``<h2>`` whose ``id``
    is given here) are:

    * ``summary``: the model and explainer, what is explained, the number of
      rows, the efficiency residual ``max |Σφ + base value − f(x)|``
      (absolute and relative to ``max |f(x)|``), the time ``explain``
      took, the quadrature points used (product-game explainers) and, with
      ``download=True``, the attributions as a CSV link;
    * ``model`` (only with ``y``): scikit-learn's metrics of the model's own
      predictions on ``X`` (R², MAE, RMSE; or accuracy, balanced accuracy,
      log-loss and ROC AUC), each in a cell with ``data-metric`` and
      ``data-value`` attributes;
    * ``data``: rows, columns, and per column its type, missing values,
      minimum / median / maximum or number of distinct values;
    * ``importance``: :func:`skshapley.importance`'s table, top rows; for
      several outputs also every output's mean ``|φ|`` in one chart and in
      a table;
    * ``global``: the importance bars and the beeswarm;
    * ``dependence``: dependence plots of the ``top_k`` most important
      features;
    * ``interactions`` (only with ``interactions=True``): the pairs of
      features with the largest mean absolute Shapley interaction index, as
      a table, and a heatmap of mean absolute interaction values;
    * ``leave-one-out`` (only with ``leave_one_out=True``): each feature's
      mean absolute leave-one-out value beside its mean absolute Shapley
      value, as a table and grouped bars; whether they add up to
      ``f(x) − base value``; and a reading naming the features where they
      differ most (redundant features, interacting ones);
    * ``waterfalls``: one waterfall per row of ``show_rows``, or for the rows
      with the highest, median and lowest raw prediction (each a
      ``<figure>`` whose ``data-row`` is the row's label); for a classifier
      explained as a score, the caption adds the model's probability;
    * ``about``: what the numbers mean, package versions and the date.

    Parameters
    ----------
    explainer : fitted explainer
        A fitted explainer, such as :class:`skshapley.TreeExplainer`; it is
        used as it is, not refitted.
    X : array-like or pandas.DataFrame of shape (n_samples, n_features)
        The rows to explain (the report times ``explainer.explain(X)``).
        Never modified.
    path : str or os.PathLike
        Where to write the HTML file (UTF-8), a name ending in ``.html`` or
        ``.htm``. An existing file is replaced only once the new one is
        complete: an error or an interruption leaves it as it was. For a
        PDF, print the page from a browser (the report has a print
        stylesheet).
    y : array-like of shape (n_samples,), default=None
        The true targets of ``X``'s rows, by position (a Series must have
        ``X``'s index). Given, the ``model`` section shows scikit-learn's
        metrics of the model's own predictions on ``X``.
    title : str, default=None
        The page's title; ``None`` names the model.
    top_k : int, default=4
        The number of dependence plots: the features with the largest mean
        absolute Shapley value.
    max_display : int, default=20
        The number of features in the importance table and in the global
        figures; the others are folded into one row.
    output : str, int or None, default=None
        For models with several outputs (classes, targets): the output the
        tables and figures are about, by name; ``None`` is the first. The
        efficiency residual covers every output.
    show_rows : sequence or None, default=None
        The rows that get a waterfall, in this order, by their labels in
        ``explain``'s result (``X.index`` for a DataFrame, positions for an
        array); at most 12, duplicates dropped. ``None`` shows the rows with
        the highest, median and lowest prediction (distinct values).
    interactions : bool, default=False
        Add the ``interactions`` section, from the explainer's
        ``explain_interactions`` on the rows the plots draw (every row up to
        5,000, else a seeded sample of 5,000); the dependence plots are then
        coloured by each feature's strongest interaction. Needs an explainer
        whose ``supports_interactions`` is true.
    leave_one_out : bool, default=False
        Add the ``leave-one-out`` section, from the explainer's
        ``leave_one_out`` on the rows the plots draw (every row up to
        5,000, else a seeded sample of 5,000). Needs a model-agnostic
        explainer (:class:`~skshapley.ExactExplainer` or
        :class:`~skshapley.PermutationExplainer`).
    download : bool, default=False
        Embed the attributions as a CSV link (a data URL), as
        ``skshapley explain`` writes them, if the CSV is at most
        :data:`DOWNLOAD_LIMIT` bytes; otherwise a note says how to get them.
    progress : bool or callable, default=None
        Passed to ``explainer.explain(X, progress=progress)``: True shows a
        progress bar on stderr; a callable is called as
        ``progress(n_done, n_total)`` after each chunk of rows (the
        ``skshapley`` command shows a progress bar with it).

    Returns
    -------
    path : pathlib.Path
        The path of the written file.

    Raises
    ------
    ImportError
        If matplotlib (the ``plot`` extra) is not installed.
    NotImplementedError
        If ``interactions=True`` and the explainer has no interaction values.
    ValueError
        If ``path`` does not end in ``.html`` or ``.htm``; if ``y`` or
        ``show_rows`` do not fit ``X``; if ``leave_one_out=True`` and the
        explainer has no ``leave_one_out``.

    See Also
    --------
    skshapley.importance : The importance table alone.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from skshapley import TreeExplainer
    >>> from skshapley.report import report
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> model = GradientBoostingRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> explainer = TreeExplainer(model).fit()
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = report(explainer, X.iloc[:50], pathlib.Path(folder) / "r.html")
    ...     path.read_text(encoding="utf-8").startswith("<!doctype html>")
    True

    With the true targets, a section on the model's quality (scikit-learn's
    metrics); chosen rows' waterfalls; the attributions as a download:

    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = report(
    ...         explainer, X.iloc[:50], pathlib.Path(folder) / "r.html",
    ...         y=y.iloc[:50], show_rows=[3, 7], download=True,
    ...     )
    ...     'data-metric="r2"' in path.read_text(encoding="utf-8")
    True
    """
    _check_count("top_k", top_k, minimum=0)
    _check_count("max_display", max_display, minimum=1)
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a str or None, got {type(title).__name__}.")
    for name, flag in (
        ("interactions", interactions),
        ("leave_one_out", leave_one_out),
        ("download", download),
    ):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be a bool, got {type(flag).__name__}.")
    check_is_fitted(explainer)
    require_matplotlib("skshapley.report")
    return write_report(
        explainer, X, path, y=y, title=title, top_k=top_k,
        max_display=max_display, output=output, progress=progress,
        show_rows=show_rows, download=download, interactions=interactions,
        leave_one_out=leave_one_out,
    )  # fmt: skip


def write_report(
    explainer,
    X,
    path: str | os.PathLike,
    *,
    y=None,
    title: str | None,
    top_k: int,
    max_display: int,
    output,
    progress,
    show_rows=None,
    download: bool = False,
    interactions: bool = False,
    option: str = "output=",
    notes=(),
    leave_one_out: bool = False,
) -> Path:
    """:func:`report`, its arguments checked; ``option`` chooses an output.

    The report tells readers of a model with several outputs to choose one
    with ``option`` (the command passes its ``--output NAME``). ``notes``
    are more ``(term, text)`` items for the ``about`` section.
    """
    path = Path(path)
    check_suffix(path)
    if interactions and not getattr(explainer, "supports_interactions", False):
        raise NotImplementedError(
            f"{type(explainer).__name__} has no interaction values: a report "
            "with interactions=True needs an explainer whose "
            "supports_interactions is true."
        )
    if leave_one_out and not hasattr(explainer, "leave_one_out"):
        raise ValueError(
            f"{type(explainer).__name__} has no leave-one-out values: a report "
            "with leave_one_out=True needs ExactExplainer or PermutationExplainer "
            "(fitted on background data)."
        )
    # y before explaining: a wrong y should not cost an explanation.
    targets = None if y is None else checked_targets(y, X, explainer)
    ex = explained(explainer, X, output, progress)
    rows = (
        representative_rows(ex.raw)
        if show_rows is None
        else chosen_rows(ex.phi.index, show_rows)
    )
    table = importance(ex.phi_out)
    facts = explainer.describe()
    versions = _versions()
    generated = datetime.datetime.now().astimezone()
    if title is None:
        title = f"Shapley values of {facts['model']}"
    # Dependence plots need the feature's values: players that are columns of X.
    plottable = [
        name
        for name in table.index
        if name in ex.known and ex.features[name].notna().any()
    ]
    probability, base_probability = probability_view(explainer, X, ex)
    link = (
        _download.download(_download.attributions_csv(explainer, ex.phi), path.stem)
        if download
        else None
    )
    frame = plotted_interactions(explainer, X, ex) if interactions else None
    sections = {
        "summary": _summary.summary(
            facts,
            ex,
            _summary.run_facts(explainer, ex, base_probability),
            output_note=_summary.output_note(ex, output is not None, option),
            download=link,
        )
    }
    if targets is not None:
        sections["model"] = quality_section(
            model_quality(explainer, X, targets), _sections.section
        )
    sections["data"] = data_section(
        ex.data, table.index, max_display, _sections.section
    )
    sections["importance"] = _sections.importance(table, ex, max_display)
    sections["global"] = _sections.global_(ex, max_display)
    sections["dependence"] = _sections.dependence(ex, plottable[:top_k], top_k, frame)
    if frame is not None:
        sections["interactions"] = _sections.interactions(
            ex,
            strongest_pairs(frame),
            frame,
            [str(name) for name in table.index[:max_display]],
            n_pairs=_PAIRS_SHOWN,
        )
    if leave_one_out:
        sections["leave-one-out"] = _leave_one_out.leave_one_out(
            _leave_one_out.compared(explainer, X, ex), ex, max_display
        )
    sections["waterfalls"] = _sections.waterfalls(ex, rows, probability)
    sections["about"] = _sections.about(
        explainer, ex, versions, generated.strftime("%Y-%m-%d %H:%M %Z"), notes
    )
    subtitle = [
        facts["explainer"],
        f"{ex.n_samples:,} rows",
        f"{ex.phi_out.shape[1]} features",
        generated.strftime("%d %B %Y"),
    ]
    if len(ex.output_names) > 1:
        subtitle.insert(1, f"output {ex.output}")
    page = _page(title, subtitle, sections, versions["skshapley"])
    with atomic_write(path) as temporary:
        temporary.write_text(page, encoding="utf-8")
    return path


def _page(title: str, subtitle: list, sections: dict, skshapley_version: str) -> str:
    """The whole document; ``sections`` maps the ids of those shown to markup."""
    toc = element(
        "nav",
        *(
            element("a", name, href=f"#{key}")
            for key, name in _sections.SECTIONS
            if key in sections
        ),
        class_="toc",
        aria_label="Sections",
    )
    header = element(
        "header",
        element(
            "div",
            element("p", "skshapley report", class_="eyebrow"),
            element("h1", title),
            element("p", " · ".join(str(part) for part in subtitle), class_="meta"),
            toc,
            class_="wrap",
        ),
        class_="page",
    )
    head = element(
        "head",
        void("meta", charset="utf-8"),
        void("meta", name="viewport", content="width=device-width, initial-scale=1"),
        void("meta", name="generator", content=f"skshapley {skshapley_version}"),
        element("title", title),
        element("style", Markup(CSS)),
    )
    footer = element(
        "footer",
        element(
            "div",
            f"Generated by skshapley {skshapley_version}. Self-contained: "
            "no scripts, no external resources.",
            class_="wrap",
        ),
    )
    main = element("main", *sections.values(), class_="wrap")
    body = element("body", header, main, footer)
    return "<!doctype html>\n" + element("html", join([head, body]), lang="en") + "\n"


def _versions() -> dict[str, str]:
    """The versions of skshapley, its dependencies and Python."""
    versions = {}
    for name in _VERSIONED:
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = "not installed"
    versions["Python"] = platform.python_version()
    return versions


def check_suffix(path: Path) -> None:
    """Refuse a ``path`` that does not end in ``.html`` or ``.htm``.

    The report is HTML: written into a ``.pdf`` or ``.png`` name it would
    open as a broken file.
    """
    if path.suffix.lower() not in (".html", ".htm"):
        raise ValueError(
            f"The report is an HTML page: its path must end in .html or .htm, "
            f"got {path.name!r}. For a PDF, open the HTML report in a browser "
            "and print it to PDF (the report has a print stylesheet)."
        )


def _check_count(name: str, value, *, minimum: int) -> None:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}.")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}.")
