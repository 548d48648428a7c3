"""Choosing one of a model's outputs by name, for displays, reports and the command.

Names are compared as they are, then as text, so that ``"1"`` typed on a
command line finds class ``1``. The error names what the caller passed
(``output`` in Python, ``--output`` on the command line) and the outputs
there are.
"""


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
