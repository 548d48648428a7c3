"""The report's leave-one-out section: each feature's LOO value beside its φ.

Leave-one-out credits feature ``i`` of row ``x`` with ``v(N) - v(N ∖ {i})``,
the change in the prediction when ``i`` alone is removed, with the
explainer's own value function. It equals the Shapley value on additive
models, and departs from it where features work together, in two ways that
the section reads off the two mean absolute values.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import _figures
from ._data import Explanation, chosen, plotted_X
from ._html import Markup, element, facts, format_column, format_number, table
from ._sections import section

# The reading's thresholds on mean |LOO| / mean |φ|: at most _REDUNDANT, a
# feature looks redundant (removing it alone changes little: another feature
# carries the same information); at least _INTERACTING, it takes part in an
# interaction (leave-one-out credits it with a whole joint effect, which
# Shapley shares). An AND of two features with a background where both are
# off gives exactly 2; two copies read through a max give 0.
_REDUNDANT = 0.5
_INTERACTING = 1.5

# Features whose larger mean |value| is below this fraction of the largest
# mean |φ| are not read: their ratio is noise.
_NEGLIGIBLE = 0.05


@dataclass(frozen=True)
class Comparison:
    """Leave-one-out and Shapley values of the plotted rows, per feature.

    ``table`` has one row per player, largest mean |φ| first, and columns
    ``mean_abs_loo``, ``mean_abs_shapley``, ``mean_loo`` and
    ``mean_shapley``. The sums are means over the rows: of Σ LOO, of
    ``f(x) - base value`` (which Σ φ equals), and of the absolute gap
    between those two.
    """

    table: pd.DataFrame
    n_rows: int
    loo_sum: float
    prediction_gap: float
    loo_gap: float


def compared(explainer, X, ex: Explanation) -> Comparison:
    """``explainer.leave_one_out`` of the plotted rows, beside their φ."""
    loo = explainer.leave_one_out(plotted_X(X, ex), output=chosen(ex))
    phi = ex.phi_out.to_numpy(dtype=np.float64)[ex.plotted]
    loo = loo.to_numpy(dtype=np.float64)
    gap = ex.raw[ex.plotted] - ex.base_value
    frame = pd.DataFrame(
        {
            "mean_abs_loo": np.abs(loo).mean(axis=0),
            "mean_abs_shapley": np.abs(phi).mean(axis=0),
            "mean_loo": loo.mean(axis=0),
            "mean_shapley": phi.mean(axis=0),
        },
        index=ex.phi_out.columns,
    )
    return Comparison(
        table=frame.sort_values("mean_abs_shapley", ascending=False, kind="stable"),
        n_rows=len(gap),
        loo_sum=float(loo.sum(axis=1).mean()),
        prediction_gap=float(gap.mean()),
        loo_gap=float(np.abs(loo.sum(axis=1) - gap).mean()),
    )


def reading(frame: pd.DataFrame) -> tuple[list, list]:
    """The features that look redundant, and those that look interacting.

    By the thresholds above, in the table's order; features whose values
    are negligible next to the largest mean |φ| are in neither.
    """
    loo, shapley = frame["mean_abs_loo"], frame["mean_abs_shapley"]
    read = np.maximum(loo, shapley) >= _NEGLIGIBLE * shapley.max()
    redundant = read & (loo <= _REDUNDANT * shapley)
    interacting = read & (loo >= _INTERACTING * shapley)
    return list(frame.index[redundant]), list(frame.index[interacting])


def leave_one_out(comparison: Comparison, ex: Explanation, max_display: int) -> Markup:
    """The section: lead, table, grouped bars, sum check and reading."""
    shown = comparison.table.iloc[:max_display]
    sample = (
        f" (a random sample of the {ex.n_samples:,})"
        if comparison.n_rows < ex.n_samples
        else ""
    )
    lead = element(
        "p",
        "Leave-one-out credits a feature with the change in f(x) when that "
        "feature alone is removed (it takes the background's values, as for "
        "the Shapley values): LOO = v(all features) − v(all but this one). "
        "On an additive model it equals the Shapley value. Where features "
        "work together it does not: a feature whose information another one "
        "also carries gets less (removing it alone changes little), and each "
        "member of an interaction gets the whole joint effect, so the "
        "leave-one-out values of a row need not add up to f(x) − base value. "
        f"Means over {comparison.n_rows:,} rows{sample}"
        + (
            f"; the {len(shown)} features with the largest mean |φ|"
            if len(shown) < len(comparison.table)
            else ""
        )
        + ".",
        class_="lead",
    )
    figure = element("figure", _figures.leave_one_out(shown, raw_output=ex.raw_output))
    return section(
        "leave-one-out",
        lead,
        element("div", _table(shown), id="leave-one-out-table"),
        element("div", figure, class_="figures one"),
        element(
            "div", _sums(comparison), _reading(comparison.table), class_="columns loo"
        ),
    )


def _table(shown: pd.DataFrame) -> Markup:
    """Mean |LOO|, mean |φ|, their ratio and the signed means, per feature."""
    n = len(shown)
    # One format per kind of value, so that LOO and φ line up digit by digit.
    absolute = format_column([*shown["mean_abs_loo"], *shown["mean_abs_shapley"]])
    signed = format_column([*shown["mean_loo"], *shown["mean_shapley"]])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = shown["mean_abs_loo"] / shown["mean_abs_shapley"]
    rows = [
        [
            str(feature),
            absolute[j],
            absolute[n + j],
            f"{ratio:.2f}×" if np.isfinite(ratio) else "–",
            signed[j],
            signed[n + j],
        ]
        for j, (feature, ratio) in enumerate(ratios.items())
    ]
    header = ["Feature", "Mean |LOO|", "Mean |φ|", "LOO / φ", "Mean LOO", "Mean φ"]
    columns = {0: "feature", 1: "num", 2: "num", 3: "num", 4: "num", 5: "num"}
    return table(header, rows, columns=columns, class_="importance")


def _sums(comparison: Comparison) -> Markup:
    """Σ LOO against f(x) − base value, which Σ φ equals in every row."""

    def number(key: str, value: float) -> Markup:
        return element("span", format_number(value, 4), id=key, data_value=repr(value))

    items = [
        (
            "f(x) − base value",
            number("leave-one-out-prediction", comparison.prediction_gap),
        ),
        ("Σ φ", "the same, in every row (see the summary's efficiency residual)"),
        ("Σ LOO", number("leave-one-out-sum", comparison.loo_sum)),
        (
            "|Σ LOO − (f(x) − base value)|",
            number("leave-one-out-gap", comparison.loo_gap),
        ),
    ]
    return element(
        "div",
        element("h3", "Do they add up? Means over the rows"),
        facts(items),
    )


def _reading(frame: pd.DataFrame) -> Markup:
    """The features where the two differ most, in words, thresholds stated."""
    redundant, interacting = reading(frame)
    items = []
    if redundant:
        items.append(
            element(
                "li",
                element("strong", "Redundant: "),
                _names(redundant),
                f" — mean |LOO| at most {_REDUNDANT:g} × mean |φ|. Another "
                "feature carries the same information: removing one alone "
                "changes little, and leave-one-out makes a real signal look "
                "weak; Shapley shares it between them.",
            )
        )
    if interacting:
        items.append(
            element(
                "li",
                element("strong", "Interacting: "),
                _names(interacting),
                f" — mean |LOO| at least {_INTERACTING:g} × mean |φ|. Each "
                "takes part in an effect made together with other features: "
                "leave-one-out credits every member with all of it, Shapley "
                "shares it.",
            )
        )
    if not items:
        items.append(
            element(
                "li",
                f"No feature's mean |LOO| is below {_REDUNDANT:g} × or above "
                f"{_INTERACTING:g} × its mean |φ|: on these rows the model "
                "acts nearly additively, and the two agree.",
            )
        )
    return element(
        "div",
        element("h3", "Reading"),
        element("ul", *items, id="leave-one-out-reading", class_="reading"),
        element(
            "p",
            "Features whose mean |LOO| and mean |φ| are both below "
            f"{100 * _NEGLIGIBLE:g}% of the largest mean |φ| are not read.",
            class_="note",
        ),
    )


def _names(names: list) -> Markup:
    """Feature names in code type, separated by commas."""
    parts = []
    for j, name in enumerate(names):
        if j:
            parts.append(", ")
        parts.append(element("code", str(name)))
    return element("span", *parts)
