"""Which explainer, the chosen output, the attributions table."""

from sklearn.exceptions import NotFittedError

from .._contract.outputs import chosen_output
from .._contract.pipeline import final_estimator
from .._entry import fitted_explainer
from .._errors import UnsupportedModelError
from ._inputs import CommandError

# The groups of a pipeline explained without --groups: one attribution per
# column of the data file, exact for the game of input columns.
PIPELINE_GROUPS = "input"


def make_explainer(
    model,
    groups: dict | str | None,
    background=None,
    *,
    method: str = "auto",
    n_permutations: int | None = None,
    seed: int | None = None,
):
    """The explainer of ``model`` (``skshapley.Explainer``'s choice), fitted.

    Without ``groups``, a pipeline is explained with :data:`PIPELINE_GROUPS`.
    With ``background`` (a DataFrame), a tree model is explained
    interventionally, against those rows; a kernel model is refused. Any
    other model, or any model with ``method`` "exact" or "permutation",
    is explained model-agnostically against ``background``, which it then
    needs. The permutation explainer samples ``n_permutations`` (its
    default if None) orders per row, seeded by ``seed`` (default 0).

    An explainer's ``UnsupportedModelError`` moves on to the next explainer;
    its other errors are about this model (or a bug) and are raised as they
    are, a ``ValueError`` as a :class:`CommandError`. Each explainer parses
    the model once (its ``fit``), not also in ``supports``.
    """
    if groups is None and _has_preprocessing(model):
        groups = PIPELINE_GROUPS
    permutations = {"random_state": 0 if seed is None else seed}
    if n_permutations is not None:
        permutations["n_permutations"] = n_permutations
    try:
        return fitted_explainer(
            model,
            background,
            {"groups": groups},
            method=method,
            permutation_params=permutations,
            option="--background",
        )
    except (UnsupportedModelError, ValueError) as exc:  # a model not fitted, ...
        raise CommandError(str(exc)) from exc


def output_name(explainer, name: str | None):
    """The explainer's output called ``name`` (``--output``), or None."""
    if name is None:
        return None
    try:
        return chosen_output(explainer.output_names_, name, option="--output")
    except ValueError as exc:
        raise CommandError(str(exc)) from exc


def _has_preprocessing(model) -> bool:
    """Whether ``model`` is a pipeline with preprocessing steps.

    A wrapper or pipeline that cannot be explained is not one: the
    explainers' ``fit`` then reports why.
    """
    try:
        return final_estimator(model)[0] is not None
    except (UnsupportedModelError, NotFittedError, ValueError):
        return False
