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

# Model evaluations beyond which the command suggests a smaller background:
# from about ten seconds (a linear pipeline, a million rows a second) to
# several minutes (forests, networks).
MANY_EVALUATIONS = 10**7


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


def cost_note(explainer, n_rows: int) -> str | None:
    """What a model-agnostic explanation of ``n_rows`` rows costs, in words.

    The explainer's own count of model evaluations per row
    (``n_evaluations_per_row_``), an upper bound (hybrid rows that several
    coalitions share are evaluated once), times the rows. Above
    :data:`MANY_EVALUATIONS`, a ``--background-rows`` that keeps under it
    is suggested (the count grows in proportion to the background rows).
    None for tree and kernel explainers, which do not call the model.
    """
    per_row = getattr(explainer, "n_evaluations_per_row_", None)
    if per_row is None:
        return None
    n_background = explainer.n_background_
    total = n_rows * per_row
    note = (
        f"{explainer.method_} method: up to {total:,} model evaluations "
        f"({per_row:,} per row, against {n_background:,} background rows)"
    )
    if total <= MANY_EVALUATIONS:
        return note
    # The evaluations that each background row adds: the count is linear in them.
    per_background_row = n_rows * (per_row - 1) / n_background
    fitting = int((MANY_EVALUATIONS - n_rows) // max(per_background_row, 1))
    if fitting >= 1:
        return (
            f"{note}; for a faster run, --background-rows {fitting:,} samples "
            f"the background down to about {MANY_EVALUATIONS:,}"
        )
    other = " or --method permutation" if explainer.method_ == "exact" else ""
    return (
        f"{note}; for a faster run, explain fewer rows (--rows), fewer players "
        f"(--groups){other}"
    )


def _has_preprocessing(model) -> bool:
    """Whether ``model`` is a pipeline with preprocessing steps.

    A wrapper or pipeline that cannot be explained is not one: the
    explainers' ``fit`` then reports why.
    """
    try:
        return final_estimator(model)[0] is not None
    except (UnsupportedModelError, NotFittedError, ValueError):
        return False
