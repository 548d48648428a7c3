"""Checking what the displays are given: Shapley values, feature values, outputs.

Every check raises an error that names the input and what was expected.
"""

from numbers import Integral, Real

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._contract.outputs import chosen_output


def shapley_frame(phi, feature_names=None, X=None) -> pd.DataFrame:
    """``phi`` as a DataFrame of finite floats.

    ``phi`` is a DataFrame from an explainer's ``explain``, or a 2-D array
    whose columns are named by ``feature_names`` (by default ``X``'s
    columns, else ``x0, x1, ...``) and whose rows take ``X``'s index.
    """
    if isinstance(phi, pd.DataFrame):
        if feature_names is not None:
            raise ValueError(
                "feature_names is for an array phi; a DataFrame's columns "
                "already name its features."
            )
        frame = phi
    else:
        if isinstance(phi, pd.Series) or np.ndim(phi) != 2:
            raise ValueError(
                "phi must be the DataFrame an explainer's explain returns, or a "
                f"2-D array with feature_names; got {type(phi).__name__} of "
                f"shape {np.shape(phi)}."
            )
        array = np.asarray(phi)
        names = _default_names(feature_names, X, array.shape[1])
        index = (
            X.index if isinstance(X, pd.DataFrame) and len(X) == len(array) else None
        )
        frame = pd.DataFrame(array, columns=names, index=index)
    if frame.shape[0] == 0 or frame.shape[1] == 0:
        raise ValueError(f"phi is empty: shape {frame.shape}.")
    try:
        values = frame.to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError("phi must hold numbers (Shapley values).") from exc
    if not np.isfinite(values).all():
        raise ValueError("phi contains NaN or infinity.")
    return frame


def _default_names(feature_names, X, n_features: int) -> list[str]:
    """Names of an array's columns: given, ``X``'s, or ``x0, x1, ...``."""
    if feature_names is None:
        if isinstance(X, pd.DataFrame) and X.shape[1] == n_features:
            return [str(name) for name in X.columns]
        return [f"x{j}" for j in range(n_features)]
    names = [str(name) for name in feature_names]
    if len(names) != n_features:
        raise ValueError(
            f"feature_names has {len(names)} names for {n_features} columns of phi."
        )
    return names


def outputs_of(columns: pd.Index) -> list | None:
    """The outputs of ``(output, feature)`` columns; ``None`` for plain columns."""
    if not isinstance(columns, pd.MultiIndex):
        return None
    if columns.nlevels != 2:
        raise ValueError(
            "phi's columns must be features, or (output, feature) pairs; got "
            f"{columns.nlevels} column levels."
        )
    return list(columns.get_level_values(0).unique())


def select_output(phi: pd.DataFrame, output=None) -> tuple[pd.DataFrame, object]:
    """One output's columns of ``phi`` and its name (``None`` for one output).

    The default is the first output.
    """
    outputs = outputs_of(phi.columns)
    if outputs is None:
        if output is not None:
            raise ValueError(
                "phi has a single output (its columns are features); output must "
                f"be None, got {output!r}."
            )
        return _unique_columns(phi), None
    name = (
        outputs[0] if output is None else chosen_output(outputs, output, whose="phi's")
    )
    return _unique_columns(phi.xs(name, axis=1, level=0)), name


def _unique_columns(phi: pd.DataFrame) -> pd.DataFrame:
    """``phi`` with string feature names, each once."""
    names = pd.Index([str(name) for name in phi.columns])
    if names.has_duplicates:
        raise ValueError(
            f"phi names a feature twice: {list(names[names.duplicated()].unique())}."
        )
    return phi.set_axis(names, axis=1)


def about_output(explainer, output) -> dict:
    """What ``from_values`` is told of the explainer's output: which, and its kind.

    ``output`` becomes ``None`` for a single output (once checked to name it):
    the explainer's frames then have plain feature columns.
    """
    names = list(getattr(explainer, "output_names_", ()))
    if output is not None and len(names) == 1:
        chosen_output(names, output, whose="the explainer's")
        output = None
    return {"output": output, "raw_output": getattr(explainer, "raw_output_", None)}


def first_output(explainer, output):
    """The output a display of one output shows: ``output``, else the first.

    ``None`` for a single-output explainer (once ``output`` is checked to
    name it): its frames have plain feature columns.
    """
    output = about_output(explainer, output)["output"]
    names = list(getattr(explainer, "output_names_", ()))
    return names[0] if output is None and len(names) > 1 else output


def feature_frame(X, phi: pd.DataFrame) -> pd.DataFrame:
    """The explained rows ``X`` as a DataFrame with string column names.

    ``X`` must have ``phi``'s rows: as many, and the same index if both are
    DataFrames. Array columns are named as ``phi``'s features by position;
    so are a DataFrame's when the model had no names (``x0, x1, ...``) and
    none of them matches.
    """
    if sp.issparse(X):
        X = X.toarray()
    if isinstance(X, pd.DataFrame):
        if len(X) != len(phi):
            raise ValueError(
                f"X has {len(X)} rows and phi has {len(phi)}: X must hold the "
                "rows that were explained."
            )
        if not X.index.equals(phi.index):
            raise ValueError(
                "X's index differs from phi's: X must hold the rows that were "
                "explained, in the same order."
            )
        frame = X.set_axis([str(name) for name in X.columns], axis=1)
        if frame.columns.has_duplicates:
            raise ValueError("X names a column twice.")
        unnamed = [f"x{j}" for j in range(phi.shape[1])]  # a model without names
        if (
            list(phi.columns) == unnamed
            and X.shape[1] == phi.shape[1]
            and not frame.columns.isin(phi.columns).any()
        ):
            frame = frame.set_axis(phi.columns, axis=1)
        return frame
    if isinstance(X, pd.Series) or np.ndim(X) != 2:
        raise ValueError(
            "X must be a DataFrame or a 2-D array of the explained rows; got "
            f"{type(X).__name__} of shape {np.shape(X)}."
        )
    array = np.asarray(X)
    if array.shape != phi.shape:
        raise ValueError(
            f"X has shape {array.shape} and phi (one output) {phi.shape}: an "
            "array X must hold the explained rows, one column per feature."
        )
    return pd.DataFrame(array, index=phi.index, columns=phi.columns)


def check_names(names, available, what: str) -> None:
    """Raise a ValueError naming the ``names`` not in ``available``."""
    unknown = [name for name in names if name not in set(available)]
    if unknown:
        raise ValueError(f"Unknown {what} {unknown}; known: {list(available)}.")


def check_max_display(max_display) -> int:
    """``max_display`` as an int >= 1."""
    if not isinstance(max_display, Integral) or isinstance(max_display, bool):
        raise TypeError(
            f"max_display must be an int, got {type(max_display).__name__}."
        )
    if max_display < 1:
        raise ValueError(f"max_display must be >= 1, got {max_display}.")
    return int(max_display)


def split_top(names: list, max_display: int) -> tuple[list, list]:
    """The rows shown one by one, and those folded into one "other" row.

    At most ``max_display`` rows in all: when there are more names, the
    first ``max_display - 1`` are shown and the rest folded.
    """
    max_display = check_max_display(max_display)
    if len(names) <= max_display:
        return list(names), []
    return list(names[: max_display - 1]), list(names[max_display - 1 :])


def numeric_values(column: pd.Series) -> np.ndarray | None:
    """A column as floats (NaN where missing), or ``None`` if not numeric."""
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype) or not (
        pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
    ):
        return None
    return column.to_numpy(dtype=np.float64, na_value=np.nan)


def codes(column: pd.Series) -> tuple[np.ndarray, list]:
    """A non-numeric column as category codes (NaN where missing) and categories."""
    categorical = column.astype("category")
    values = categorical.cat.codes.to_numpy(dtype=np.float64)
    values[values < 0] = np.nan
    return values, [str(category) for category in categorical.cat.categories]


def interaction_values(interactions, output=None) -> tuple[np.ndarray, list, object]:
    """An ``explain_interactions`` frame as one output's matrices per row.

    Returns the array of shape (n_samples, n_players, n_players), the
    players' names (strings) and the output's name (``None`` for one
    output). ``output`` chooses among ``(output, player)`` columns (the
    first by default); it is ignored when the columns are players.
    """
    if not isinstance(interactions, pd.DataFrame) or interactions.index.nlevels != 2:
        raise ValueError(
            "interactions must be the DataFrame an explainer's "
            "explain_interactions returns: rows (row, feature), one column per "
            f"feature; got {type(interactions).__name__}."
        )
    if outputs_of(interactions.columns) is None:
        output = None
    frame, name = select_output(interactions, output)
    players = list(frame.columns)
    n_players = len(players)
    features = [str(f) for f in interactions.index.get_level_values(1)[:n_players]]
    if n_players == 0 or len(frame) % n_players or features != players:
        raise ValueError(
            "interactions must have one row per (row, feature) pair, features in "
            f"the order of its columns; got {len(frame)} rows for {n_players} "
            "features."
        )
    try:
        values = frame.to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError("interactions must hold numbers.") from exc
    if not np.isfinite(values).all():
        raise ValueError("interactions contains NaN or infinity.")
    return values.reshape(-1, n_players, n_players), players, name


def base_value_of(base_value, output, outputs) -> float:
    """The shown output's base value, as a finite float."""
    if isinstance(base_value, pd.Series):
        if outputs is None:
            if len(base_value) != 1:
                raise ValueError(
                    "base_value has "
                    f"{len(base_value)} outputs and the Shapley values one."
                )
            base_value = base_value.iloc[0]
        else:
            key = chosen_output(base_value.index, output, whose="base_value's")
            base_value = base_value[key]
    elif not isinstance(base_value, Real | np.ndarray) or np.ndim(base_value) != 0:
        raise ValueError(
            "base_value must be a number, or a Series by output (an explainer's "
            f"expected_value_); got {type(base_value).__name__}."
        )
    value = float(base_value)
    if not np.isfinite(value):
        raise ValueError(f"base_value must be finite, got {value}.")
    return value
