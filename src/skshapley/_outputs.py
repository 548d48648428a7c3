"""Names of a model's outputs, as the parsers of every family give them."""


def regression_output_names(
    n_targets: int, *, as_columns: bool | None = None
) -> tuple[str, ...]:
    """The names of a regressor's outputs.

    Parameters
    ----------
    n_targets : int
        Number of targets the model predicts.
    as_columns : bool or None, default=None
        Whether ``predict`` returns one column per target (a 2-D array)
        rather than one value per row; None means "if there is more than one
        target".

    Returns
    -------
    tuple of str
        ``("target",)`` for a single target predicted as a 1-D array, else
        ``("target 0", "target 1", ...)``, one per column.
    """
    if as_columns is None:
        as_columns = n_targets > 1
    if not as_columns:
        return ("target",)
    return tuple(f"target {k}" for k in range(n_targets))


def class_output_names(classes: list, n_outputs: int) -> tuple:
    """The names of a classifier's raw outputs (log-odds, margins).

    Parameters
    ----------
    classes : list
        The class labels, in the model's order.
    n_outputs : int
        Number of raw outputs: 1 for a binary model (the positive class's
        log-odds or margin), else one per class.

    Returns
    -------
    tuple
        ``(classes[1],)`` for one output, else every class label.
    """
    return tuple(classes[1:] if n_outputs == 1 else classes)
