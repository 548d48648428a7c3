"""Trace a fitted preprocessing's output columns back to its raw input columns.

``groups="input"`` makes each raw input column one player: the group of the
transformed columns computed from it alone. The tracing follows each
transformed column's *sources*, the set of raw input columns it is computed
from, through the preprocessing's structure (pipelines, column transformers,
feature unions) down to single transformers, whose column layout is read from
their fitted attributes. A transformer this module does not know is assumed to
mix all its inputs into each of its outputs: that is exact when it sees one
input column and an error naming it otherwise, never a wrong group.
"""

import functools
from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.feature_selection import SelectorMixin
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import (
    Binarizer,
    FunctionTransformer,
    KBinsDiscretizer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    PowerTransformer,
    QuantileTransformer,
    RobustScaler,
    SplineTransformer,
    StandardScaler,
    TargetEncoder,
)

from .malformed import malformed_model_errors

# Sources of each column of a table: the raw input columns it is computed from.
Sources = list[frozenset[str]]

# Transformers whose output column j is computed from their input column j
# alone. Explicit, not scikit-learn's OneToOneFeatureMixin: ``Normalizer``
# has that mixin but scales each row by a norm of all its columns.
_COLUMNWISE = (
    Binarizer,
    MaxAbsScaler,
    MinMaxScaler,
    OrdinalEncoder,
    PowerTransformer,
    QuantileTransformer,
    RobustScaler,
    StandardScaler,
)

# Transformers that turn each input column into the same number of adjacent
# output columns (splines: one per basis function; multiclass target
# encoding: one per class).
_BLOCKWISE = (SplineTransformer, TargetEncoder)


def input_groups(preprocess, input_names: Sequence[str]) -> dict[str, list[str]]:
    """The transformed columns computed from each raw input column alone.

    Parameters
    ----------
    preprocess : fitted transformer
        A pipeline's preprocessing steps (a ``Pipeline``), or one fitted
        transformer: ``ColumnTransformer``, ``FeatureUnion`` and the
        scikit-learn transformers, nested in any way.
    input_names : sequence of str
        The raw input columns, as ``preprocess`` saw them in fit (any order:
        the result follows this one).

    Returns
    -------
    groups : dict of str to list of str
        For each raw input column, in ``input_names`` order, the names of the
        transformed columns (as ``preprocess.get_feature_names_out()`` gives
        them) computed from it alone; an empty list for a column the
        preprocessing drops.

    Raises
    ------
    ValueError
        If a transformed column is computed from several input columns
        (``PolynomialFeatures`` interactions, ``PCA``, ...), naming the
        transformer and its columns; if a transformer has no
        ``get_feature_names_out``, naming it; if ``input_names`` are not the
        columns ``preprocess`` was fitted on.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.compose import make_column_transformer
    >>> from sklearn.preprocessing import OneHotEncoder
    >>> X = pd.DataFrame({"age": [30.0, 40.0, 50.0], "sex": ["f", "m", "f"]})
    >>> preprocess = make_column_transformer(
    ...     (OneHotEncoder(), ["sex"]), remainder="passthrough"
    ... ).fit(X)
    >>> input_groups(preprocess, ["age", "sex"])
    {'age': ['remainder__age'], 'sex': ['onehotencoder__sex_f', 'onehotencoder__sex_m']}
    """
    input_names = [str(name) for name in input_names]
    # A preprocessing read from a file may hold attributes of any type; what
    # the tracing does not check by name becomes one ValueError.
    traced = malformed_model_errors(functools.partial(_traced, names=input_names))
    return traced(preprocess)


def _traced(preprocess, names: list[str]) -> dict[str, list[str]]:
    """:func:`input_groups`, on a preprocessing whose attributes may be malformed."""
    sources = _sources(_fitted_names_in(preprocess, names), preprocess, "")
    names_out = _names_out(preprocess, _label(preprocess, ""))
    groups: dict[str, list[str]] = {name: [] for name in names}
    # The leaves checked their column counts, so the names and sources pair up.
    for name, source in zip(names_out, sources, strict=True):
        (origin,) = source  # _leaf made sure every column has one source
        groups[origin].append(str(name))
    return groups


def _fitted_names_in(preprocess, input_names: list[str]) -> Sources:
    """The sources of the preprocessing's input columns, in its fit order."""
    fitted = getattr(preprocess, "feature_names_in_", None)
    if fitted is None:
        # Fitted on an array: its columns are the input's, by position.
        n_features = getattr(preprocess, "n_features_in_", len(input_names))
        if n_features != len(input_names):
            raise ValueError(
                f"The preprocessing was fitted on {n_features} columns; got "
                f"{len(input_names)} input names."
            )
        fitted = input_names
    fitted = [str(name) for name in fitted]
    if sorted(fitted) != sorted(input_names):
        raise ValueError(
            "The input names must be the columns the preprocessing was fitted "
            f"on: missing {sorted(set(fitted) - set(input_names))}, unknown "
            f"{sorted(set(input_names) - set(fitted))}."
        )
    return [frozenset([name]) for name in fitted]


def _sources(sources: Sources, step, path: str) -> Sources:
    """The sources of ``step``'s output columns, given its input columns'."""
    if step is None or (isinstance(step, str) and step == "passthrough"):
        return sources
    if isinstance(step, Pipeline):
        for name, inner in step.steps:
            sources = _sources(sources, inner, _join(path, name))
        return sources
    if isinstance(step, ColumnTransformer):
        return _column_transformer(sources, step, path)
    if isinstance(step, FeatureUnion):
        return [
            source
            for name, inner in step.transformer_list
            if not (isinstance(inner, str) and inner == "drop")
            for source in _sources(sources, inner, _join(path, name))
        ]
    return _leaf(sources, step, _label(step, path))


def _column_transformer(sources: Sources, step: ColumnTransformer, path: str):
    """Each transformer's outputs, placed where ``output_indices_`` puts them."""
    names_in = getattr(step, "feature_names_in_", None)
    n_out = max((s.stop for s in step.output_indices_.values()), default=0)
    out: list[frozenset[str] | None] = [None] * n_out
    for name, transformer, columns in step.transformers_:
        where = step.output_indices_.get(name, slice(0, 0))
        if where.stop == where.start:  # dropped, or given no columns
            continue
        positions = _column_positions(columns, names_in, len(sources))
        traced = _sources(
            [sources[p] for p in positions], transformer, _join(path, name)
        )
        out[where] = traced
    return out


def _column_positions(columns, names_in, n_features: int) -> list[int]:
    """A fitted ``ColumnTransformer``'s column selection as positions.

    Callables (``make_column_selector``) are already resolved in
    ``transformers_``; what is left is a name or position, a list of them,
    a slice of either (of names: both ends included) or a boolean mask.
    """
    index = pd.Index(range(n_features) if names_in is None else names_in)
    if isinstance(columns, slice):
        if isinstance(columns.start, str) or isinstance(columns.stop, str):
            columns = index.slice_indexer(columns.start, columns.stop, columns.step)
        return list(range(n_features)[columns])
    columns = np.atleast_1d(np.asarray(columns))
    if columns.dtype == bool:
        return np.flatnonzero(columns).tolist()
    if columns.dtype.kind in "iu":
        return columns.tolist()  # negative positions count back, as in lists
    return index.get_indexer(columns).tolist()


def _leaf(sources: Sources, step, label: str) -> Sources:
    """The sources of a single transformer's outputs, checked one apiece."""
    names = _names_out(step, label)
    out = _leaf_sources(sources, step, len(names))
    if len(out) != len(names):
        raise ValueError(
            f"groups='input' cannot trace {label}: it names {len(names)} output "
            f"columns, its fitted attributes give {len(out)}."
        )
    for column, source in enumerate(out):
        if not source:
            # A constant column (a polynomial's bias): its inputs' own.
            out[column] = frozenset().union(*sources)
    mixed = [
        str(name) for name, source in zip(names, out, strict=True) if len(source) > 1
    ]
    if mixed:
        inputs = sorted(frozenset().union(*sources))
        hint = (
            " (a FunctionTransformer counts as column-wise only with func=None "
            "or a NumPy ufunc such as np.log1p: its output names do not show "
            "what its function computes)"
            if isinstance(step, FunctionTransformer)
            else ""
        )
        raise ValueError(
            f"groups='input' cannot split {label}: its output columns {mixed} "
            f"are computed from several input columns {inputs}{hint}; pass "
            "explicit groups= instead."
        )
    return out


def _leaf_sources(sources: Sources, step, n_out: int) -> Sources:
    """Each output column's sources, from the transformer's fitted layout."""
    if isinstance(step, OneHotEncoder):
        return _repeat(sources, _one_hot_widths(step))
    if isinstance(step, KBinsDiscretizer) and step.encode != "ordinal":
        return _repeat(sources, step.n_bins_)
    if isinstance(step, _BLOCKWISE) and sources:
        return _repeat(sources, [n_out // len(sources)] * len(sources))
    if isinstance(step, SimpleImputer):
        # All-missing columns are dropped unless keep_empty_features, and
        # their statistic is NaN; the indicator's columns follow.
        kept = [
            s
            for s, stat in zip(sources, step.statistics_, strict=True)
            if not pd.isna(stat)
        ]
        indicator = step.indicator_
        return kept + (
            [] if indicator is None else _leaf_sources(sources, indicator, 0)
        )
    if isinstance(step, MissingIndicator):
        return [sources[j] for j in step.features_]
    if isinstance(step, SelectorMixin):
        return [sources[j] for j in step.get_support(indices=True)]
    if isinstance(step, PolynomialFeatures):
        return [
            frozenset().union(*(sources[j] for j in np.flatnonzero(powers)))
            for powers in step.powers_
        ]
    if isinstance(step, (*_COLUMNWISE, KBinsDiscretizer)) or _elementwise(step):
        return list(sources)
    return [frozenset().union(*sources)] * n_out


def _elementwise(step) -> bool:
    """Whether ``step`` is a FunctionTransformer proven to act value by value.

    Its output names (``feature_names_out="one-to-one"``) say nothing about
    what ``func`` computes (it may divide each value by its row's total):
    only the identity (``func=None``) and NumPy ufuncs, which act on each
    value alone, are traced column by column; any other function mixes.
    """
    return isinstance(step, FunctionTransformer) and (
        step.func is None or isinstance(step.func, np.ufunc)
    )


def _one_hot_widths(encoder: OneHotEncoder) -> list[int]:
    """How many columns each input of a fitted ``OneHotEncoder`` becomes."""
    widths = [len(categories) for categories in encoder.categories_]
    # The property raises AttributeError when no category can be infrequent.
    infrequent = getattr(encoder, "infrequent_categories_", None)
    dropped = encoder.drop_idx_
    for j in range(len(widths)):
        if infrequent is not None and infrequent[j] is not None:
            widths[j] -= len(infrequent[j]) - 1  # they share one column
        if dropped is not None and dropped[j] is not None:
            widths[j] -= 1
    return widths


def _repeat(sources: Sources, widths) -> Sources:
    """Each input's sources repeated over its block of ``widths`` columns."""
    return [
        source
        for source, width in zip(sources, widths, strict=True)
        for _ in range(width)
    ]


def _names_out(step, label: str) -> np.ndarray:
    """``step.get_feature_names_out()``, or an error naming the step."""
    if not hasattr(step, "get_feature_names_out"):
        raise ValueError(
            f"groups='input' needs get_feature_names_out() on every "
            f"preprocessing step; {label} has none. Pass explicit groups= instead."
        )
    return step.get_feature_names_out()


def _label(step, path: str) -> str:
    """How messages name a transformer: its path in the pipeline, its class."""
    name = type(step).__name__
    return f"{path!r} ({name})" if path else name


def _join(path: str, name: str) -> str:
    """A nested step's path, in scikit-learn's ``set_params`` spelling."""
    return f"{path}__{name}" if path else name
