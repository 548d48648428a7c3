"""The report's summary: cards, the explainer's facts and this run's."""

import numpy as np

from ._html import Markup, element, facts, format_count, format_duration, format_number
from ._quality import SCORES
from ._sections import section


def summary(
    explainer_facts: dict, ex, run: list, *, output_note: Markup | None, download=None
) -> Markup:
    """Headline numbers as cards; the explainer's facts and this run's.

    ``run`` are the ``(name, text)`` facts of this explanation that the
    cards do not show (see :func:`run_facts`); ``download`` the link to the
    attributions, if asked for.
    """
    n, d = ex.phi_out.shape
    relative = ex.relative_residual
    residual = element(
        "span",
        format_number(ex.residual, 2),
        id="efficiency-residual",
        data_value=repr(ex.residual),
        data_relative=repr(relative),
    )
    relative_text = (
        f"relative: {format_number(relative, 2)}" if np.isfinite(relative) else ""
    )
    speed = f"{format_count(n / ex.seconds)} rows/s" if ex.seconds > 0 else ""
    cards = element(
        "div",
        _card("Rows explained", f"{n:,}", f"{d} features"),
        _card(
            "Base value",
            format_number(ex.base_value, scale=ex.max_abs_raw),
            "f(x) with no feature known",
        ),
        _card("Efficiency residual", residual, relative_text),
        _card("Explain time", format_duration(ex.seconds), speed),
        class_="cards",
    )
    model = [
        (name[:1].upper() + name[1:], value) for name, value in explainer_facts.items()
    ]
    lead = element(
        "p",
        f"{explainer_facts.get('explainer', 'The explainer')} attributed the "
        f"predictions of {n:,} rows to their {d} features. Throughout, f(x) is "
        f"the model's raw output that is explained ({ex.raw_output or 'value'}), "
        "and the Shapley values of a row add up to f(x) minus the base value.",
        class_="lead",
    )
    blocks = [element("div", element("h3", "Model and explainer"), facts(model))]
    if run:
        blocks.append(element("div", element("h3", "This explanation"), facts(run)))
    columns = element("div", *blocks, class_="columns")
    return section("summary", lead, output_note or "", cards, columns, download or "")


def run_facts(explainer, ex, base_probability: float | None) -> list:
    """This explanation's facts that the cards do not show.

    The outputs, the quadrature the product-game explainers actually used
    (read after ``explain``) and, for a binary model explained in log-odds,
    the probability at the base value (``base_probability``).
    """
    run = []
    if len(ex.output_names) > 1:
        names = ", ".join(str(name) for name in ex.output_names)
        run.append(("Outputs", f"{len(ex.output_names)}: {names}"))
        run.append(("Output shown", str(ex.output)))
    points = getattr(explainer, "n_quadrature_points_", None)
    if points is not None:
        run.append(("Quadrature used", _quadrature(explainer, points)))
    if ex.raw_output in SCORES:
        text = (
            f"The values add up on the {ex.raw_output} scale, not in "
            "probabilities (a non-linear function of it)"
        )
        if base_probability is not None:
            text += (
                "; the probability at the base value, sigmoid(base value), is "
                + format_number(base_probability)
            )
        run.append(("Scale", text + "."))
    return run


def _quadrature(explainer, points) -> str:
    """``N points per game`` (kernels) or ``N–M points per tree`` (trees)."""
    unit = "game" if np.ndim(points) == 0 else "tree"  # kernels: one int
    points = np.atleast_1d(points)
    low, high = int(points.min()), int(points.max())
    counted = f"{low}–{high}" if low != high else f"{high}"
    counted += " point" if high == 1 else " points"
    bound = explainer.quadrature_error_bound_
    if bound == 0:
        return f"{counted} per {unit}, exact"
    if bound is None:
        return (
            f"{counted} per {unit} (fixed), fewer than the exact rule "
            "of some: approximate, no error bound computed"
        )
    return f"{counted} per {unit}, error ≤ {format_number(bound, 2)}"


def _card(label, value, detail) -> Markup:
    return element(
        "div",
        element("div", label, class_="label"),
        element("div", value, class_="value"),
        element("div", detail, class_="detail"),
        class_="card",
    )


def output_note(ex, chosen: bool, option: str = "output=") -> Markup | None:
    """For several outputs: which one the report shows, and how to pick.

    ``option`` is how the reader chooses an output: ``report``'s parameter,
    or the command's option.
    """
    if len(ex.output_names) == 1:
        return None
    if chosen:
        how = f"chosen with {option}"
    else:
        example = "report(..., output=...)" if option == "output=" else option
        how = f"the first; choose another with {example}"
    return element(
        "p",
        "This model has ",
        element("strong", f"{len(ex.output_names)} outputs"),
        " (",
        ", ".join(str(name) for name in ex.output_names),
        "). Every table and figure below is about output ",
        element("strong", str(ex.output)),
        f" ({how}).",
        class_="note",
        id="output-note",
    )
