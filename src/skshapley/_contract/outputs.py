"""A model's outputs: the names parsers give them, and choosing one by name.

Every parser names outputs with the functions here. Displays, reports and the
command choose an output by name: names are compared as they are, then as
text, so that ``"1"`` typed on a command line finds class ``1``; the error
names what the caller passed (``output`` in Python, ``--output`` on the
command line) and the outputs there are.
"""


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


def output_position(
    outputs, output, *, whose: str = "the model's", option: str = "output"
) -> int:
    """The position in ``outputs`` of the output named ``output``.

    Parameters
    ----------
    outputs : sequence
        The outputs' names, in order.
    output : object
        The name asked for; it matches an equal name first, else the first
        name whose text is ``str(output)``.
    whose : str, default="the model's"
        Whose outputs these are, for the error (``"phi's"``).
    option : str, default="output"
        How the caller passed ``output``, for the error (``"--output"``).

    Returns
    -------
    position : int
        The position of the first matching name.

    Raises
    ------
    ValueError
        If no name matches.
    """
    outputs = list(outputs)
    for same in (lambda name: name == output, lambda name: str(name) == str(output)):
        for position, name in enumerate(outputs):
            if same(name):
                return position
    names = ", ".join(str(name) for name in outputs)  # np.int64(1) reads 1
    raise ValueError(f"{option} {output!r} is not one of {whose} outputs: [{names}].")


def chosen_output(
    outputs, output, *, whose: str = "the model's", option: str = "output"
):
    """The name in ``outputs`` that ``output`` matches; see :func:`output_position`."""
    outputs = list(outputs)
    return outputs[output_position(outputs, output, whose=whose, option=option)]
