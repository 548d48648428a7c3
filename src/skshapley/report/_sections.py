"""The report's sections, each an ``<h2>`` with a stable id, as markup."""

import numpy as np
import pandas as pd

from .._contract.importance import importance as importance_table
from . import _figures
from ._html import (
    Markup,
    bar,
    element,
    format_column,
    format_number,
    join,
    table,
)
from ._quality import SCORES

# (id, title) of every section, in order; the ids are the report's API.
# "model" is there only with y; "interactions" and "leave-one-out" only
# when asked for.
SECTIONS = (
    ("summary", "Summary"),
    ("model", "Model quality"),
    ("data", "The data"),
    ("importance", "Feature importance"),
    ("global", "Global picture"),
    ("dependence", "Dependence"),
    ("interactions", "Interactions"),
    ("leave-one-out", "Leave-one-out beside Shapley"),
    ("waterfalls", "Single predictions"),
    ("about", "About these numbers"),
)
_TITLES = dict(SECTIONS)


def section(key: str, *content) -> Markup:
    """``<section>`` with its ``<h2 id=key>`` and content."""
    return element("section", element("h2", _TITLES[key], id=key), *content)


def importance(table_, ex, max_display: int) -> Markup:
    """The importance table's top rows, with bars and aligned numbers.

    As in the figures, at most ``max_display`` rows: with more features, the
    last row sums the mean |φ| and mean φ of the others.
    """
    n_shown = len(table_) if len(table_) <= max_display else max_display - 1
    top, rest = table_.iloc[:n_shown], table_.iloc[n_shown:]
    mean_abs = list(top["mean_abs"])
    means = list(top["mean"])
    if len(rest):
        mean_abs.append(rest["mean_abs"].sum())
        means.append(rest["mean"].sum())
    mean_abs_text, means_text = format_column(mean_abs), format_column(means)
    stds_text = format_column(top["std"])
    largest = float(top["mean_abs"].max()) or 1.0
    rows = [
        [
            str(int(rank)),
            str(feature),
            mean_abs_text[j],
            bar(mean_abs[j] / largest),
            element("span", means_text[j], class_=_sign_class(means[j])),
            stds_text[j],
        ]
        for j, (feature, rank) in enumerate(top["rank"].items())
    ]
    if len(rest):
        rows.append(
            [
                "",
                f"{len(rest)} other feature{'s' if len(rest) > 1 else ''} (sum)",
                mean_abs_text[-1],
                "",
                element("span", means_text[-1], class_=_sign_class(means[-1])),
                "",
            ]
        )
    lead = element(
        "p",
        f"Mean |φ| over the {len(ex.phi_out):,} explained rows: how far, on "
        "average, each feature moves a prediction away from the base value, in "
        "either direction. Mean φ is its average signed push (",
        element("span", "up", class_="pos"),
        " or ",
        element("span", "down", class_="neg"),
        "), std φ the spread of its pushes.",
        class_="lead",
    )
    header = ["Rank", "Feature", "Mean |φ|", "", "Mean φ", "Std φ"]
    classes = [None] * len(top) + ["rest"] * (len(rows) - len(top))
    columns = {0: "num", 1: "feature", 2: "num", 3: "share", 4: "num", 5: "num"}
    body = table(
        header, rows, columns=columns, row_classes=classes, class_="importance"
    )
    if len(ex.output_names) == 1:
        return section("importance", lead, body)
    overview = element(
        "p",
        f"Every output at once: each bar stacks the mean |φ| of a feature for "
        f"each of the {len(ex.output_names)} outputs, longest total on top.",
        class_="lead",
    )
    figure = _figure(_figures.output_importance(ex, max_display), None)
    return section(
        "importance",
        lead,
        body,
        overview,
        element("div", figure, class_="figures one"),
        _by_output(ex, max_display),
    )


def _by_output(ex, max_display: int) -> Markup:
    """Mean |φ| per feature (rows) and output (columns), largest total first.

    At most ``max_display`` rows: the last one sums the other features.
    """
    by_output = importance_table(ex.phi)["mean_abs"].unstack(level=0)
    by_output = by_output.reindex(index=ex.phi_out.columns, columns=ex.output_names)
    total = by_output.sum(axis=1)
    order = np.argsort(-total.to_numpy(), kind="stable")
    by_output["Total"] = total
    by_output = by_output.iloc[order]
    n_shown = len(by_output) if len(by_output) <= max_display else max_display - 1
    shown = by_output.iloc[:n_shown]
    labels = [str(name) for name in shown.index]
    if n_shown < len(by_output):
        rest = len(by_output) - n_shown
        shown = pd.concat([shown, by_output.iloc[n_shown:].sum().to_frame().T])
        labels.append(f"{rest} other feature{'s' if rest > 1 else ''} (sum)")
    texts = format_column(shown.to_numpy().ravel())
    width = shown.shape[1]
    rows = [
        [label, *texts[j * width : (j + 1) * width]] for j, label in enumerate(labels)
    ]
    header = ["Feature", *(str(name) for name in shown.columns)]
    columns = {0: "feature", **dict.fromkeys(range(1, width + 1), "num")}
    lead = element(
        "p",
        "The same numbers as a table: mean |φ| of each feature for each output, "
        "and their total.",
        class_="lead",
    )
    body = table(header, rows, columns=columns, class_="importance")
    return join([lead, element("div", body, id="importance-by-output")])


def _sign_class(value: float) -> str | None:
    return "pos" if value > 0 else "neg" if value < 0 else None


def global_(ex, max_display: int) -> Markup:
    """The importance bars and the beeswarm, side by side."""
    lead = element(
        "p",
        "The bars: mean |φ| per feature, with the signed mean φ inside. The "
        "beeswarm: one dot per row and feature — its position is the Shapley "
        "value, its colour the feature's value (low to high within each "
        "feature; grey where unknown)." + _sampled(ex),
        class_="lead",
    )
    figures = element(
        "div",
        _figure(_figures.importance(ex, max_display), None),
        _figure(_figures.beeswarm(ex, max_display), None),
        class_="figures two",
    )
    heatmap_lead = element(
        "p",
        "The heatmap: one column per row, one line per feature, coloured by "
        "its Shapley value (red raises the prediction, blue lowers it); rows "
        "whose explanations are alike sit together, and the line above is "
        "each row's f(x). It shows groups of rows explained alike, which "
        "averages hide.",
        class_="lead",
    )
    heatmap = element(
        "div",
        _figure(_figures.rows_heatmap(ex, max_display), None),
        class_="figures one",
    )
    return section("global", lead, figures, heatmap_lead, heatmap)


def dependence(ex, features, top_k: int, interactions=None) -> Markup:
    """A dependence plot for each of ``features``.

    ``interactions`` (of the plotted rows) choose each plot's colours.
    """
    unplotted = [str(name) for name in ex.phi_out.columns if name not in ex.known]
    why_not = (
        " Players that are not columns of X have no values to plot against: "
        + ", ".join(unplotted)
        + "."
        if unplotted
        else ""
    )
    if not features:
        why = (
            "None asked for (top_k=0)."
            if top_k == 0
            else why_not.strip() or "No feature has values in X to plot against."
        )
        return section("dependence", element("p", why, class_="note"))
    lead = element(
        "p",
        f"The {len(features)} feature{'s' if len(features) > 1 else ''} with the "
        "largest mean |φ|. Each dot is a row: across, the feature's value; up, "
        "its Shapley value. Colour shows the feature it interacts with most "
        "strongly ("
        + (
            "estimated from the values themselves"
            if interactions is None
            else "the largest mean |Shapley interaction value|"
        )
        + ")."
        + _sampled(ex)
        + why_not,
        class_="lead",
    )
    figures = (
        _figure(_figures.dependence(ex, name, interactions), None) for name in features
    )
    return section("dependence", lead, element("div", *figures, class_="figures two"))


def interactions(ex, pairs, frame, heatmap_features: list, n_pairs: int) -> Markup:
    """The strongest pairs (``strongest_pairs``) as a table, and a heatmap.

    ``frame`` is ``explain_interactions`` of the plotted rows; the heatmap
    shows ``heatmap_features``.
    """
    if pairs.empty:
        return section(
            "interactions", element("p", "One feature: no pairs.", class_="note")
        )
    n_rows = len(frame) // frame.shape[1]
    lead = element(
        "p",
        "The Shapley interaction index of two features is the part of the "
        "prediction that they make together, beyond what each makes alone; "
        "each feature's Shapley value holds half of each of its interactions. "
        f"The strongest pairs by mean |interaction index| over {n_rows:,} rows"
        + (
            f" (a random sample of the {ex.n_samples:,})"
            if n_rows < ex.n_samples
            else ""
        )
        + ". The heatmap shows the mean |interaction value| of pairs of the "
        "most important features: half the index, as shap writes it (the "
        "diagonal, each feature's main effect, is left blank).",
        class_="lead",
    )
    top = pairs.iloc[:n_pairs]
    mean_abs, means = format_column(top["mean_abs"]), format_column(top["mean"])
    largest = float(top["mean_abs"].max()) or 1.0
    rows = [
        [
            str(rank),
            str(row.feature),
            str(row.other),
            mean_abs[rank - 1],
            bar(row.mean_abs / largest),
            element("span", means[rank - 1], class_=_sign_class(row.mean)),
        ]
        for rank, row in enumerate(top.itertuples(index=False), start=1)
    ]
    header = ["Rank", "Feature", "With", "Mean |index|", "", "Mean index"]
    columns = {0: "num", 1: "feature", 2: "feature", 3: "num", 4: "share", 5: "num"}
    body = element(
        "div", table(header, rows, columns=columns, class_="importance"), id="pairs"
    )
    heatmap = _figure(_figures.interaction_heatmap(ex, frame, heatmap_features), None)
    return section(
        "interactions", lead, body, element("div", heatmap, class_="figures one")
    )


def waterfalls(ex, rows: list, probability=None) -> Markup:
    """A waterfall for each of ``rows``: ``(how chosen, position)`` pairs.

    ``probability`` is, for a classifier whose explained output is a score,
    the model's own probability of the shown class per row (or None).
    """
    how = {
        "chosen": "the rows asked for",
        "highest": "the rows with the highest, median and lowest prediction",
    }
    lead = element(
        "p",
        "How single predictions are built: from the base value, each feature's "
        "Shapley value moves the output up or down until it reaches the model's "
        f"prediction f(x). Shown for {how[rows[0][0]]}.",
        class_="lead",
    )
    columns, width = _figures.waterfall_layout(ex)
    figures = []
    for name, position in rows:
        label = ex.phi.index[position]
        parts = [
            element(
                "strong",
                "Chosen row" if name == "chosen" else f"{name.capitalize()} prediction",
            ),
            " — row ",
            element("code", str(label)),
            f": f(x) = {format_number(ex.raw[position], scale=ex.max_abs_raw)}",
        ]
        if probability is not None:
            parts.append(
                f"; the model's probability of class {ex.output}: "
                f"{format_number(probability[position], scale=1.0)} (predict_proba)"
            )
        figure = _figures.waterfall(ex, position, width)
        figures.append(
            element(
                "figure",
                figure,
                element("figcaption", join(parts)),
                data_row=str(label),
            )
        )
    grid = element("div", *figures, class_=f"figures {columns}")
    scale = (
        " on the probability scale (the log-odds through the sigmoid)"
        if ex.raw_output == "log-odds"
        else ""
    )
    decision_lead = element(
        "p",
        "The decision plot follows the same rows (bold) and up to 100 others "
        "from the base value at the bottom, adding one feature's Shapley value "
        f"per line, to their prediction at the top{scale}. Paths that part "
        "early differ in their most important features.",
        class_="lead",
    )
    decision = element(
        "div",
        _figure(_figures.decision(ex, [position for _, position in rows]), None),
        class_="figures one",
    )
    return section("waterfalls", lead, grid, decision_lead, decision)


def about(explainer, ex, versions: dict, generated: str, notes=()) -> Markup:
    """What the numbers mean, in plain words; versions and date.

    ``notes`` are more ``(term, text)`` items, such as how the background
    data was sampled.
    """
    # The product-game explainers say what their base value is.
    meaning = explainer.base_value_meaning
    base = meaning or "the model's expected raw output when no feature is known, v(∅)."
    which = f" (output {ex.output})" if len(ex.output_names) > 1 else ""
    items = [
        (
            "Shapley values",
            "Each number φ is one feature's share of one prediction. They are "
            "the Shapley values of cooperative game theory: a feature's "
            "contribution averaged over every order in which the features could "
            "be revealed. It is the only way of sharing a prediction that adds "
            "up, treats interchangeable features alike, gives nothing to a "
            "feature the model ignores and splits a sum of models as the sum "
            "of their shares.",
        ),
        (
            "They add up",
            "For every row, the base value plus the Shapley values of all "
            "features equals the model's output: f(x) = base value + Σφ. The "
            "summary's efficiency residual is how far from exact that is, "
            "after floating-point rounding.",
        ),
        (
            "Signs",
            "A positive value pushes this prediction above the base value, a "
            "negative one below it. Mean |φ| ranks features by how much they "
            "matter, mean φ says in which direction they push on average.",
        ),
        (
            "The base value",
            f"The base value {format_number(ex.base_value)}{which} is {base}",
        ),
        ("Units", _units(ex.raw_output)),
        *notes,
    ]
    if meaning:
        items.append(
            (
                "How they were computed",
                "Without sampling: skshapley writes the model as a sum of "
                "product games, whose Shapley values are one-dimensional "
                "integrals of polynomials; Gauss–Legendre quadrature evaluates "
                "them exactly with enough points (the summary says how many "
                "were used).",
            )
        )
    notes = element(
        "dl",
        *(join([element("dt", term), element("dd", text)]) for term, text in items),
        class_="notes",
    )
    version_rows = [[name, version] for name, version in versions.items()]
    software = element(
        "aside",
        element("h3", "Software"),
        table(["Package", "Version"], version_rows, class_="versions"),
        element("p", f"Generated {generated}.", class_="note"),
    )
    return section("about", element("div", notes, software, class_="columns about"))


def _sampled(ex) -> str:
    """A sentence saying that dots are a sample of the rows, if they are."""
    if len(ex.plotted) == ex.n_samples:
        return ""
    return (
        f" Dots are drawn for a random sample of {len(ex.plotted):,} of the "
        f"{ex.n_samples:,} rows."
    )


def _units(raw_output) -> str:
    """What the values are measured in, for the explained output."""
    if raw_output in (None, "value"):
        return (
            "Shapley values and the base value are in the units of the model's "
            "prediction."
        )
    text = (
        f"Everything is in the units of what is explained: the model's raw "
        f"output, here its {raw_output}."
    )
    if raw_output in (*SCORES, "latent mean"):
        text += (
            " The values add up to that score, not to a probability: a "
            "probability is a non-linear function of it."
        )
    return text


def _figure(image: Markup, caption) -> Markup:
    if caption is None:
        return element("figure", image)
    return element("figure", image, element("figcaption", caption))
