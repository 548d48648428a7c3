"""What the model-agnostic explainers share: the fitted value function.

The value function is interventional, ``v(S) = mean_z f(x_S, z_rest)``: the
model's response averaged over background rows ``z`` whose features outside
coalition ``S`` are kept and whose features in ``S`` take the explained
row's values. The model is a black box (a whole pipeline included), its
features are its input columns, and it is called on hybrid rows in batches
whose size a memory budget bounds.
"""

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._base import BaseExplainer
from .._contract.features import feature_names
from .._contract.frames import default_index
from .._contract.input import as_pandas
from .._contract.reading import check_shape
from .._errors import unsupported_model
from .._runtime.memory import parse_memory
from .._runtime.progress import progress_callback
from ._hybrid import HybridRows
from ._response import check_response_method, has_response, model_response

# Bytes of hybrid rows handed to the model in one call (8 bytes per value):
# bounds the working memory of explain beyond what the model itself needs.
_CALL_BYTES = 2**26


class Rows:
    """Validated rows: a DataFrame (X's index kept) sliced by position.

    ``start`` is the position of the first row in the rows of the call.
    """

    def __init__(self, frame: pd.DataFrame, start: int = 0):
        self.frame, self.start = frame, start

    def __len__(self) -> int:
        return len(self.frame)

    def __getitem__(self, rows: slice) -> "Rows":
        return Rows(self.frame.iloc[rows], self.start + range(len(self))[rows].start)


class AgnosticExplainer(BaseExplainer):
    """The interventional value function of any model, on hybrid rows.

    Subclasses set ``method_`` and implement ``_explain_rows`` with
    :meth:`_coalition_values`, the values of coalitions of players for one
    explained row.
    """

    _fitted_attribute = "n_background_"

    @classmethod
    def _refusal(cls, model):
        """None for a model with a response method, or a callable."""
        if has_response(model):
            return None
        return unsupported_model(
            cls.__name__,
            model,
            "any model with predict, predict_proba or decision_function, and "
            "any callable f(X)",
        )

    def fit(self, X=None, y=None):
        """Evaluate the model on the background data.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_background, n_features)
            The background data, required: the rows that features outside
            a coalition take their values from. Columns are the model's
            input columns (matched by name for a model fitted on named
            columns), with the dtypes the model reads; every row is used,
            and the cost of ``explain`` grows in proportion to their number.
        y : None
            Unused, for scikit-learn's API.

        Returns
        -------
        self
            The fitted explainer.
        """
        check_response_method(self.response_method)
        self._check_params()
        if X is None:
            raise ValueError(
                f"{type(self).__name__} averages the model over background "
                "data: pass it as fit(X_background), rows with the model's "
                "input columns."
            )
        refusal = self._refusal(self.model)
        if refusal is not None:
            raise refusal
        self._preprocess = None  # a pipeline is a black box: its input is the input
        X = as_pandas(X)
        if np.ndim(X) == 2 and np.shape(X)[1] == 0:
            raise ValueError(
                "The background data X_background has no columns: there are no "
                "features to attribute the model's output to."
            )
        players = self._fit_players(*self._input_names(X))
        self._players = np.arange(self.n_features_in_) if players is None else players
        # Kept from fit, and gathered with each chunk's rows in columns.
        self._check_background_bytes(np.shape(X)[0], 3, "X_background")
        background = self._prepared(X)[0].frame
        if len(background) == 0:
            raise ValueError("The background data X_background has no rows.")
        self._background = background  # its index labels name rows in errors
        # The first row shows the output's shape; every call is checked against it.
        self._response = model_response(
            self.model, self.response_method, self._model_rows(background.iloc[:1])
        )
        self.n_background_ = len(background)
        self.output_names_ = self._response.output_names
        self.raw_output_ = self._response.name
        # Each background row's own output: the value of its hybrids that take
        # nothing from the explained row.
        self._background_output = self._raw_rows(Rows(background), "background row")
        self._expected = self._background_output.mean(axis=0)
        self.expected_value_ = self._per_output(self._expected)
        return self

    def describe(self) -> dict[str, str]:
        """Facts about the fitted explainer, in words, for reports.

        Returns
        -------
        facts : dict of str to str
            Those of every explainer, and the value function, the background
            data, the index computed and the model evaluations per row.
        """
        facts = super().describe()
        facts["value function"] = (
            f"interventional: {self.raw_output_} averaged over "
            f"{self.n_background_} background rows"
        )
        facts["background data"] = f"{self.n_background_} rows"
        facts["index"] = self._index_words()
        facts["model evaluations per row"] = f"{self.n_evaluations_per_row_:,}"
        return facts

    @property
    def n_evaluations_per_row_(self) -> int:
        """Model evaluations per explained row, at most (hybrid rows that
        several coalitions share are evaluated once)."""
        self._check_fitted()
        return self._evaluations_per_row()

    def leave_one_out(self, X, *, output=None, progress=None) -> pd.DataFrame:
        """Leave-one-out attributions ``v(N) - v(N minus {i})``, for comparison.

        Each player gets what the model's output loses, on average over the
        background, when that player alone takes background values: the
        same value function as :meth:`explain`, with ``n_players *
        n_background + 1`` model evaluations per row, for any number of
        players. Unlike Shapley values they do not sum to the output:
        players that act only together are each credited the whole joint
        effect, and players that carry the same information get nothing.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            The rows to explain.
        output : object, default=None
            One of ``output_names_``: that output's values only.
        progress : bool or callable, default=None
            True shows a progress bar on stderr; a callable is called as
            ``progress(n_done, n_total)`` after each chunk of rows (as in
            :meth:`explain`).

        Returns
        -------
        loo : pandas.DataFrame
            In the layout of :meth:`explain`.

        Examples
        --------
        >>> import numpy as np
        >>> from skshapley import ExactExplainer
        >>> both = lambda X: 10.0 * (X[:, 0] * X[:, 1])  # worth 10 together
        >>> explainer = ExactExplainer(both).fit(np.zeros((1, 2)))
        >>> explainer.leave_one_out(np.ones((1, 2)))
             x0    x1
        0  10.0  10.0
        >>> explainer.explain(np.ones((1, 2)))
            x0   x1
        0  5.0  5.0
        """
        progress = progress_callback(progress)
        (loo,) = self._explained(X, output, progress, self._leave_one_out_rows)
        return loo

    def raw_predict(self, X) -> np.ndarray:
        """The model's response: what :meth:`explain` attributes.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            The rows to predict.

        Returns
        -------
        raw : ndarray of float64, of shape (n_samples,) or (n_samples, n_outputs)
            The output of the method named by ``raw_output_``: of shape
            (n_samples,) for one output (a binary classifier's positive
            class's), else one column per output of ``output_names_``, as
            as every explainer returns it.
        """
        return super().raw_predict(X)

    def _check_params(self) -> None:
        """Raise a ValueError for an invalid parameter (subclasses add theirs)."""

    def _index_words(self) -> str:
        raise NotImplementedError

    def _evaluations_per_row(self) -> int:
        raise NotImplementedError

    def _placed(self, rows: Rows, start: int) -> Rows:
        return Rows(rows.frame, start)

    def _n_threads(self, n_rows: int) -> int:
        return 1  # the model's own calls are what run

    def _input_names(self, background) -> tuple[np.ndarray, bool]:
        """The model's input columns and whether they are matched by name.

        The model's ``feature_names_in_`` if it has them; else, for a model
        that does not know them (a callable), the background's columns.
        """
        names = getattr(self.model, "feature_names_in_", None)
        if names is not None:
            return feature_names(names, len(names))
        n_features = getattr(self.model, "n_features_in_", None)
        if n_features is None and isinstance(background, pd.DataFrame):
            return feature_names(background.columns, background.shape[1])
        if n_features is None:
            shape = np.shape(background)
            if len(shape) != 2:
                raise ValueError(
                    "X_background must have shape (n_background, n_features); "
                    f"got shape {shape}."
                )
            n_features = shape[1]
        return feature_names(None, n_features)

    def _prepared(self, X) -> tuple[Rows, pd.Index]:
        """``X``'s rows in the model's column order, and its index.

        Values keep their dtypes (the model reads them); DataFrame columns
        are matched by name as for every explainer.
        """
        X = as_pandas(X)
        if sp.issparse(X):
            raise TypeError(
                f"{type(self).__name__} builds hybrid rows column by column: "
                "pass X as a NumPy array or a DataFrame, not a sparse matrix."
            )
        names = list(self.feature_names_in_)
        if isinstance(X, pd.DataFrame):
            frame = self._reader.columns(X, self._model_features).set_axis(
                names, axis=1
            )
            return Rows(frame), X.index
        array = np.asarray(X)
        if array.dtype.kind in "US":  # lists mixing strings and numbers
            array = np.asarray(X, dtype=object)
        check_shape(array.shape, len(names))
        return Rows(pd.DataFrame(array, columns=names)), default_index(len(array))

    def _model_rows(self, frame: pd.DataFrame):
        """Rows as the model reads them: named if it knows names, else an array."""
        return frame if self.columns_by_name_ else frame.to_numpy()

    def _raw_rows(self, X: Rows, what: str = "X's row") -> np.ndarray:
        """The response to rows ``X``, in calls of at most ``_CALL_BYTES``."""
        frame, step = X.frame, self._rows_per_call()
        out = [
            self._response(
                self._model_rows(frame.iloc[start : start + step]),
                lambda rows, start=start: f"{what} {frame.index[start + rows[0]]!r}",
            )
            for start in range(0, len(frame), step)
        ]
        return np.concatenate(out) if out else np.empty((0, len(self.output_names_)))

    def _row_bytes(self) -> int:
        # Each row is compared with every background row: a boolean per
        # feature with two temporaries (the comparison, the missing values'),
        # and a boolean per player.
        n_players = len(self.player_names_)
        comparison = self.n_background_ * (3 * self.n_features_in_ + n_players)
        return super()._row_bytes() + comparison

    def _rows_per_call(self) -> int:
        """Hybrid rows per model call: ``_CALL_BYTES``, at most max_memory / 4."""
        call_bytes = min(_CALL_BYTES, parse_memory(self.max_memory) // 4)
        return max(1, call_bytes // (8 * self.n_features_in_))

    def _differing_players(self, hybrids: HybridRows, row: int) -> np.ndarray:
        """(n_background, n_players): whether a player's features differ from the row's.

        A player whose features all equal the explained row's in background
        row ``z`` changes nothing in ``z``'s hybrids: coalitions that differ
        only by such players share one evaluation.
        """
        features = hybrids.differs(row)
        differs = np.zeros((len(features), len(self.player_names_)), dtype=bool)
        np.logical_or.at(differs.T, self._players, features.T)
        return differs

    def _hybrid_outputs(
        self,
        hybrids: HybridRows,
        row: int,
        coalitions: np.ndarray,
        pairs: tuple[np.ndarray, np.ndarray],
        label,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The model's output on hybrids of explained ``row``, and on the row.

        Hybrid ``k`` joins coalition ``pairs[0][k]`` of ``coalitions``
        (n_coalitions, n_players, boolean) with background row
        ``pairs[1][k]``. Hybrids go to the model in calls of at most
        ``_CALL_BYTES``, the row itself last in the first call; ``label``
        names the row in errors. Returns shapes (n_hybrids, n_outputs) and
        (n_outputs,).
        """
        coalition, background = pairs
        step = self._rows_per_call()
        outputs = np.empty((len(coalition), len(self.output_names_)))
        out_row = None
        features = coalitions[:, self._players]  # each coalition's features
        for start in range(0, max(len(coalition), 1), step):
            chunk = slice(start, start + step)
            rows = hybrids.hybrids(
                row,
                features,
                (coalition[chunk], background[chunk]),
                with_row=out_row is None,
            )

            def words(positions, chunk=chunk) -> str:
                k = chunk.start + positions[0]
                if k >= min(chunk.stop, len(coalition)):
                    return f"X's row {label!r}"
                kept = self.player_names_[coalitions[coalition[k]]]
                return (
                    f"a hybrid of X's row {label!r} (its values on "
                    f"{[str(name) for name in kept]}) and background row "
                    f"{self._background.index[background[k]]!r}"
                )

            out = self._response(rows, words)
            if out_row is None:
                out, out_row = out[:-1], out[-1]
            outputs[chunk] = out
        return outputs, out_row

    def _hybrids(self, X: Rows) -> HybridRows:
        return HybridRows(self._background, X.frame, self.columns_by_name_)

    def _leave_one_out_rows(self, X: Rows, out: np.ndarray, n_threads: int) -> None:
        """Fill ``out[0]`` with the leave-one-out values of rows ``X``.

        ``v(N minus {i})`` averages, over the background, ``f`` of the row
        with player ``i`` from background row ``z``: ``f(x)`` itself where
        ``z`` agrees with the row on ``i``, which is not evaluated again.
        """
        hybrids = self._hybrids(X)
        n_players = len(self.player_names_)
        without_one = ~np.eye(n_players, dtype=bool)
        for row, label in enumerate(X.frame.index):
            differs = self._differing_players(hybrids, row).T  # (player, z)
            pairs = np.nonzero(differs)
            outputs, full = self._hybrid_outputs(
                hybrids, row, without_one, pairs, label
            )
            sums = grouped_sums(pairs[0], outputs, n_players)
            sums += np.outer((~differs).sum(axis=1), full)
            out[0, row] = full[:, None] - sums.T / self.n_background_


def grouped_sums(groups: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Sums of the rows of ``values`` (n, n_outputs) by group, (n_groups, n_outputs)."""
    sums = np.empty((n_groups, values.shape[1]))
    for k, column in enumerate(values.T):
        sums[:, k] = np.bincount(groups, weights=column, minlength=n_groups)
    return sums
