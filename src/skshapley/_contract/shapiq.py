"""One row of interaction indices as shapiq's ``InteractionValues``."""

import numpy as np
import pandas as pd

from .._runtime.optional import optional_import


def to_shapiq(interactions: pd.DataFrame, row=None, *, output=None):
    """One row of ``explain_interactions(X, index=...)`` as shapiq's
    ``InteractionValues``.

    Parameters
    ----------
    interactions : pandas.DataFrame
        The result of ``explain_interactions`` with an ``index`` (not with
        ``top_k``): one column per coalition.
    row : object, default=None
        The row's label in ``interactions.index``; None for a result of one
        row.
    output : object, default=None
        For several outputs, the one to convert (one of ``output_names_``).

    Returns
    -------
    shapiq.InteractionValues
        The row's values, with shapiq's index name, order, number of
        players and lookup of coalitions (by player position), marked exact
        (``estimated=False``), and ``baseline_value`` the base value
        ``v(∅)`` of that output.

    Raises
    ------
    ValueError
        If ``interactions`` is not such a result, or ``row`` or ``output``
        is missing where it is needed.
    MissingDependencyError
        If shapiq is not installed.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from skshapley import TreeExplainer, to_shapiq
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)
    >>> explainer = TreeExplainer(model).fit()
    >>> k_sii = explainer.explain_interactions(X.iloc[:1], index="k-SII", order=2)
    >>> values = to_shapiq(k_sii)
    >>> values.index, values.max_order
    ('k-SII', 2)
    """
    facts = interactions.attrs.get("interaction_index")
    if facts is None:
        raise ValueError(
            "to_shapiq converts the result of explain_interactions(X, index=...), "
            "one column per coalition (not a top_k table)."
        )
    frame = interactions
    if isinstance(frame.columns, pd.MultiIndex):
        if output is None:
            raise ValueError(
                "The interactions have several outputs: pass output= one of "
                f"{list(frame.columns.levels[0])}."
            )
        frame = frame[output]
    if row is None:
        if len(frame) != 1:
            raise ValueError(
                f"The interactions have {len(frame)} rows: pass row= one of "
                "their index's labels."
            )
        series = frame.iloc[0]
    else:
        series = frame.loc[row]
    shapiq = optional_import("shapiq", "to_shapiq")
    position = {name: p for p, name in enumerate(facts["players"])}
    lookup = {
        tuple(position[name] for name in label): i
        for i, label in enumerate(series.index)
    }
    baselines = facts["baseline"]
    baseline = baselines[output] if isinstance(baselines, dict) else baselines
    return shapiq.InteractionValues(
        np.asarray(series, dtype=float),
        index=facts["index"],
        max_order=facts["order"],
        n_players=len(facts["players"]),
        min_order=0 if () in lookup else 1,
        interaction_lookup=lookup,
        estimated=False,
        baseline_value=float(baseline),
    )
