"""A model's outputs: the names parsers give them, and choosing one by name.

Every parser names outputs with the functions here. Displays, reports and the
command choose an output by name: names are compared as they are, then as
text, so that ``"1"`` typed on a command line finds class ``1``; the error
names what the caller passed (``output`` in Python, ``--output`` on the
command line) and the outputs there are. Names are Python's own scalars
(``1``, not ``np.int64(1)``), so that printed they read as the labels.
"""

import numpy as np

# NumPy scalars that have a Python twin: bool, int, float, complex, str, bytes.
_NUMPY_SCALARS = (np.bool_, np.number, np.str_, np.bytes_)


def plain_names(names) -> tuple:
    """``names`` with each NumPy scalar as Python's own (``np.int64(1)`` as ``1``).

    Parameters
    ----------
    names : iterable
        Output names: class labels as a model holds them, say.

    Returns
    -------
    tuple
        The names, NumPy booleans, numbers and text as ``bool``, ``int``,
        ``float`` and ``str``; other objects as they are.
    """
    return tuple(
        name.item() if isinstance(name, _NUMPY_SCALARS) else name for name in names
    )


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


def class_output_names(classes, n_outputs: int) -> tuple:
    """The names of a classifier's raw outputs (probabilities, log-odds, margins).

    A binary classifier has one output, the positive class's
    (``classes[1]``, as in scikit-learn's displays): its probability,
    log-odds or margin. Every explainer names a binary classifier's output
    so, and what shows one output by default shows it.

    Parameters
    ----------
    classes : sequence
        The class labels, in the model's order.
    n_outputs : int
        Number of raw outputs: 1 for a binary model, else one per class.

    Returns
    -------
    tuple
        ``(classes[1],)`` for one output, else every class label, as
        :func:`plain_names`. (One output with more than two classes gives
        their ``classes[1:]``: the readers then refuse the mismatch.)
    """
    return plain_names(list(classes)[1:] if n_outputs == 1 else classes)


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
