"""The model's response: the method called, its outputs, and checked calls.

scikit-learn's ``response_method`` convention: a method name, or a list of
names tried in order; ``"auto"`` is ``predict_proba`` then
``decision_function`` for classifiers and ``predict`` for other models. A
plain callable ``f(X) -> array`` is its own response. A binary classifier
has one output, the positive class's (``classes_[1]``): its decision
function, or the second column of its probabilities, as scikit-learn's
displays read it. Every call is checked:
one value (or one row of values) per row given, of the shape the first call
had, and finite, else an error naming the rows they came from.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sklearn.base import is_classifier

from .._contract.input import real_values
from .._contract.naming import model_name
from .._contract.outputs import class_output_names, regression_output_names

_METHODS = ("predict", "predict_proba", "decision_function")

# What a callable's output is called where a method's name would be.
_CALLABLE = "the callable's output"


def check_response_method(response_method) -> None:
    """Raise a ValueError unless ``response_method`` is a valid value."""
    names = [response_method] if isinstance(response_method, str) else response_method
    valid = isinstance(names, list | tuple) and len(names) > 0
    if not valid or not all(
        name in _METHODS or (name == "auto" and len(names) == 1) for name in names
    ):
        raise ValueError(
            'response_method must be "auto", one of '
            f"{', '.join(map(repr, _METHODS))} or a list of them; got "
            f"{response_method!r}."
        )


def has_response(model) -> bool:
    """Whether ``model`` has some response method, or is a callable."""
    return callable(model) or any(hasattr(model, name) for name in _METHODS)


@dataclass(frozen=True)
class Response:
    """A model's response method, checked on every call.

    Attributes
    ----------
    function : callable
        ``function(X)`` returns one value, or one row of values, per row.
    name : str
        The method's name, or "the callable's output".
    output_names : tuple
        The outputs' names: classes, or targets.
    columns : bool
        Whether ``function`` returns a 2-D array (one column per output).
    positive : bool, default=False
        Whether ``function`` returns a binary classifier's two
        probabilities, of which the response is the second column's (the
        positive class, the one output).
    """

    function: Callable
    name: str
    output_names: tuple
    columns: bool
    positive: bool = False

    @property
    def caller(self) -> str:
        """What returned the values, for errors: "The model's predict", say."""
        return _caller(self.name)

    def __call__(self, X, rows: Callable[[np.ndarray], str]) -> np.ndarray:
        """The response to ``X`` as float64 of shape (n_rows, n_outputs).

        ``rows(positions)`` describes the rows of ``X`` at ``positions`` (of
        a non-finite output) for the error.
        """
        out = self._checked(self.function(X), len(X))
        bad = ~np.isfinite(out)
        if bad.any():
            position = np.flatnonzero(bad.any(axis=1))
            value = out[position[0]][bad[position[0]]][0]
            raise ValueError(
                f"{self.caller} returned {value} for {rows(position)}; "
                "the model's outputs must be finite to be explained."
            )
        return out

    def _checked(self, out, n_rows: int) -> np.ndarray:
        """``out`` as (n_rows, n_outputs) floats, or a ValueError naming its shape."""
        width = 2 if self.positive else len(self.output_names)
        expected = (n_rows, width) if self.columns else (n_rows,)
        try:
            array = np.asarray(out)
        except (TypeError, ValueError) as exc:  # ragged
            raise ValueError(
                f"{self.caller} must return real numbers; got "
                f"{type(out).__name__} ({exc})."
            ) from exc
        # Complex numbers, strings and dates are refused, never cast (a cast
        # drops an imaginary part silently).
        array = real_values(array, f"The output of {self.caller.lower()}")
        if array.shape != expected:
            raise ValueError(
                f"{self.caller} returned shape {array.shape} for "
                f"{n_rows} rows; expected {expected}, as it returned on the "
                "background data."
            )
        array = array.reshape(n_rows, -1)
        return array[:, 1:] if self.positive else array


def model_response(model, response_method, X) -> Response:
    """The response of ``model`` that ``response_method`` names, shaped on ``X``.

    ``response_method`` has passed :func:`check_response_method`. ``X``
    (background rows, as the model reads them) is called once to learn the
    output's shape; a method that the model lacks, or an output that is
    not one value or one row of values per row, is a ValueError.
    """
    name, function = _method(model, response_method)
    out = np.asarray(function(X))
    if out.ndim not in (1, 2) or len(out) != len(X) or out.size == 0:
        raise ValueError(
            f"{_caller(name)} must return an array of shape (n_rows,) or "
            f"(n_rows, n_outputs); it returned shape {out.shape} for {len(X)} rows."
        )
    columns = out.ndim == 2
    n_outputs = out.shape[1] if columns else 1
    positive = (
        name == "predict_proba" and columns and n_outputs == _n_classes(model) == 2
    )
    if positive:
        n_outputs = 1
    return Response(
        function,
        name,
        _output_names(model, name, n_outputs, columns),
        columns,
        positive,
    )


def _caller(name: str) -> str:
    return "The callable" if name == _CALLABLE else f"The model's {name}"


def _method(model, response_method) -> tuple[str, Callable]:
    """The name and bound function of the response method ``model`` has."""
    if response_method == "auto":
        if not any(hasattr(model, name) for name in _METHODS) and callable(model):
            return _CALLABLE, model
        response_method = (
            ["predict_proba", "decision_function"]
            if is_classifier(model)
            else ["predict"]
        )
    names = [response_method] if isinstance(response_method, str) else response_method
    for name in names:
        if hasattr(model, name):
            return name, getattr(model, name)
    raise ValueError(
        f"{model_name(model)} has no {' or '.join(names)} method "
        f"(response_method={response_method!r}); choose a method it has "
        f"({', '.join(n for n in _METHODS if hasattr(model, n)) or 'none'})."
    )


def _output_names(model, name: str, n_outputs: int, columns: bool) -> tuple:
    """Class labels for class outputs, else ``target`` names.

    A binary classifier's one output (its decision function, or its
    positive class's probability) is named by the positive class.
    """
    n_classes = _n_classes(model)
    if name in ("predict_proba", "decision_function") and (
        n_outputs == n_classes or (n_outputs == 1 and n_classes == 2)
    ):
        return class_output_names(model.classes_, n_outputs)
    return regression_output_names(n_outputs, as_columns=columns)


def _n_classes(model) -> int | None:
    """The number of ``model.classes_``, or None for a model without them."""
    classes = getattr(model, "classes_", None)
    return None if classes is None else len(classes)
