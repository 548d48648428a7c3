"""What a report shows, computed once: values, checks, timing, chosen rows."""

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._contract.input import as_pandas
from .._contract.outputs import output_position

# Rows drawn in the beeswarm and dependence plots: beyond this, a seeded
# random sample (the tables and the importance bars use every row).
MAX_PLOTTED_ROWS = 5000


@dataclass(frozen=True)
class Explanation:
    """One timed explanation of ``X``, and the output the report is about.

    ``phi`` is what ``explain`` returned (every output); the ``*_out``
    fields and ``base_value`` / ``raw`` are the chosen output's.
    """

    phi: pd.DataFrame  # (n_samples, n_outputs * n_players), as explained
    phi_out: pd.DataFrame  # (n_samples, n_players), the chosen output
    data: pd.DataFrame  # X as a DataFrame (input_frame)
    features: pd.DataFrame  # feature values, columns = phi_out's (NaN if unknown)
    known: tuple  # the players that are columns of X (have values)
    output: object  # the chosen output's name, as in output_names_
    output_position: int
    output_names: tuple
    base_value: float  # the chosen output's
    expected_value: object  # the explainer's expected_value_ (every output)
    raw_output: str | None  # the explainer's raw_output_: what is explained
    raw: np.ndarray  # (n_samples,) raw prediction of the chosen output
    residual: float  # max |Σφ + base − raw| over every row and output
    max_abs_raw: float  # max |raw| over every row and output
    seconds: float  # wall time of explain(X)
    plotted: np.ndarray  # sorted positions of the rows drawn as dots

    @property
    def n_samples(self) -> int:
        return len(self.phi)

    @property
    def relative_residual(self) -> float:
        """The residual over the largest |raw output| (NaN if that is 0)."""
        return self.residual / self.max_abs_raw if self.max_abs_raw else np.nan


def explained(explainer, X, output, progress) -> Explanation:
    """``X`` explained (timed), efficiency checked, ``output`` picked out.

    ``progress`` is passed to the explainer's ``explain``.
    """
    output_names = tuple(explainer.output_names_)
    position = 0 if output is None else output_position(output_names, output)
    start = time.perf_counter()
    phi = explainer.explain(X, progress=progress)
    seconds = time.perf_counter() - start
    if len(phi) == 0:
        raise ValueError("X has no rows: a report needs at least one.")
    raw = np.asarray(explainer.raw_predict(X), dtype=np.float64).reshape(len(phi), -1)
    base = np.atleast_1d(np.asarray(explainer.expected_value_, dtype=np.float64))
    n_outputs = len(output_names)
    values = phi.to_numpy(dtype=np.float64).reshape(len(phi), n_outputs, -1)
    residual = np.abs(values.sum(axis=2) + base - raw)
    n_players = values.shape[2]
    phi_out = phi.iloc[:, position * n_players : (position + 1) * n_players]
    if isinstance(phi_out.columns, pd.MultiIndex):
        phi_out = phi_out.droplevel(0, axis=1)
    data = input_frame(explainer, X)
    features, known = feature_values(explainer, data, phi_out)
    return Explanation(
        phi=phi,
        phi_out=phi_out,
        data=data,
        features=features,
        known=known,
        output=output_names[position],
        output_position=position,
        output_names=output_names,
        base_value=float(base[position]),
        expected_value=explainer.expected_value_,
        raw_output=explainer.raw_output_,
        raw=raw[:, position],
        residual=float(residual.max()),
        max_abs_raw=float(np.abs(raw).max()),
        seconds=seconds,
        plotted=plotted_rows(len(phi)),
    )


def input_frame(explainer, X) -> pd.DataFrame:
    """``X`` as a DataFrame, named as the explainer names it.

    Arrays (dense or sparse) take the model's feature names (``x0, x1,
    ...`` if their width differs). A DataFrame is returned as it is: the
    report only reads it.
    """
    X = as_pandas(X)
    if isinstance(X, pd.DataFrame):
        return X
    array = X.toarray() if sp.issparse(X) else np.asarray(X)
    names = [str(name) for name in explainer.feature_names_in_]
    if array.ndim != 2 or array.shape[1] != len(names):
        names = [f"x{j}" for j in range(array.shape[-1])]
    return pd.DataFrame(array, columns=names)


def feature_values(
    explainer, data: pd.DataFrame, phi_out: pd.DataFrame
) -> tuple[pd.DataFrame, tuple]:
    """``data``'s values of the explained players, aligned with ``phi_out``.

    ``data`` is :func:`input_frame` of X. Its columns are matched by name
    (a pipeline's scaled features keep their names and show their original
    values), or by position if the model knows no names. Players that are
    not columns of ``data`` (groups, one-hot columns of a pipeline) get
    NaN; the players that are columns are returned too.
    """
    frame = data.set_axis([str(column) for column in data.columns], axis=1)
    frame = frame.loc[:, ~frame.columns.duplicated()]
    players = [str(c) for c in phi_out.columns]
    if not explainer.columns_by_name_ and frame.shape[1] == len(players):
        frame = frame.set_axis(players, axis=1)  # the model knows no names
    values = frame.reindex(columns=players)
    values = values.set_axis(phi_out.columns, axis=1).set_axis(phi_out.index, axis=0)
    known = tuple(c for c in phi_out.columns if str(c) in frame.columns)
    return values, known


def plotted_rows(n_samples: int, limit: int = MAX_PLOTTED_ROWS) -> np.ndarray:
    """Every row, or a seeded random sample of ``limit`` rows, in order."""
    if n_samples <= limit:
        return np.arange(n_samples)
    rng = np.random.default_rng(0)
    return np.sort(rng.choice(n_samples, size=limit, replace=False))


def plotted_interactions(explainer, X, ex: Explanation) -> pd.DataFrame:
    """``explain_interactions`` of the plotted rows, for the chosen output.

    The plotted rows are every row up to :data:`MAX_PLOTTED_ROWS`: an
    interaction frame has ``n_players`` times as many values as ``phi``.
    """
    return explainer.explain_interactions(plotted_X(X, ex), output=chosen(ex))


def plotted_X(X, ex: Explanation):
    """The plotted rows of ``X`` (``X`` itself when every row is plotted)."""
    if len(ex.plotted) == ex.n_samples:
        return X
    X = as_pandas(X)
    if isinstance(X, pd.DataFrame):
        return X.iloc[ex.plotted]
    return (X.tocsr() if sp.issparse(X) else np.asarray(X))[ex.plotted]


def chosen(ex: Explanation):
    """The ``output=`` that picks the chosen output (None for one output)."""
    return ex.output if len(ex.output_names) > 1 else None


def strongest_pairs(interactions: pd.DataFrame) -> pd.DataFrame:
    """Pairs of players by the mean |Shapley interaction index| over the rows.

    The index of a pair is twice its off-diagonal entry in shap's
    convention. One row per pair ``feature`` < ``other`` (by position),
    strongest first (ties keep that order); columns ``feature``, ``other``,
    ``mean_abs`` and ``mean`` (the signed mean).
    """
    # Here, not at the top: importing skshapley imports no plotting module.
    from ..plotting._inputs import interaction_values

    values, players, _ = interaction_values(interactions)
    first, second = np.triu_indices(len(players), k=1)
    index = 2.0 * values[:, first, second]
    table = pd.DataFrame(
        {
            "feature": [players[j] for j in first],
            "other": [players[k] for k in second],
            "mean_abs": np.abs(index).mean(axis=0),
            "mean": index.mean(axis=0),
        }
    )
    return table.sort_values("mean_abs", ascending=False, kind="stable")


# The most rows ``show_rows`` may ask for: each is a figure.
MAX_SHOWN_ROWS = 12


def representative_rows(raw: np.ndarray) -> list[tuple[str, int]]:
    """Positions of rows with the highest, a median and the lowest prediction.

    The three predictions differ: when the median row ties with the lowest
    or highest (probabilities of 0, say), the row nearest to it in the sorted
    order whose prediction lies strictly between is taken, and none if no
    prediction does. The median is the lower middle for an even count.
    """
    order = np.argsort(raw, kind="stable")
    highest, lowest = int(order[-1]), int(order[0])
    rows = [("highest", highest)]
    between = np.flatnonzero((raw[order] > raw[lowest]) & (raw[order] < raw[highest]))
    if between.size:
        middle = (len(order) - 1) // 2
        nearest = between[np.argmin(np.abs(between - middle))]
        rows.append(("median", int(order[nearest])))
    if raw[lowest] != raw[highest]:
        rows.append(("lowest", lowest))
    return rows


def chosen_rows(index: pd.Index, labels) -> list[tuple[str, int]]:
    """The positions in ``index`` of the row ``labels``, in their order.

    Duplicates are dropped; a label that is not in ``index`` is an error
    naming it and a few valid labels.
    """
    if isinstance(labels, (str, bytes)) or not hasattr(labels, "__iter__"):
        raise TypeError(
            "show_rows must be a sequence of row labels (a list), got "
            f"{type(labels).__name__}."
        )
    labels = list(dict.fromkeys(labels))
    if not labels or len(labels) > MAX_SHOWN_ROWS:
        raise ValueError(
            f"show_rows must name 1 to {MAX_SHOWN_ROWS} rows, got {len(labels)}."
        )
    positions = []
    for label in labels:
        found = np.flatnonzero(index == label) if label in index else []
        positions.append(int(found[0]) if len(found) else -1)
    unknown = [
        str(label) for label, at in zip(labels, positions, strict=True) if at < 0
    ]
    if unknown:
        examples = ", ".join(str(label) for label in index[:5])
        raise ValueError(
            f"show_rows names rows that are not in X: {', '.join(unknown)}. "
            f"Rows are named by X's index (positions for arrays), e.g. {examples}."
        )
    return [("chosen", position) for position in positions]
