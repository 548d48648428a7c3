"""The attributions as a CSV embedded in the report, so it stays one file."""

import base64

import pandas as pd

from .._contract.tables import attributions_table
from ._html import Markup, element

# The largest CSV embedded, in bytes: as base64 it grows by a third, and a
# page of tens of megabytes is slow to open and to send.
DOWNLOAD_LIMIT = 5_000_000


def attributions_csv(explainer, phi: pd.DataFrame) -> str:
    """The CSV that ``skshapley explain`` writes for ``phi``: every output."""
    return attributions_table(phi, explainer).to_csv()


def download(csv: str, name: str) -> Markup:
    """A link that saves ``csv`` as ``<name>-attributions.csv``, or a note.

    Above :data:`DOWNLOAD_LIMIT` bytes the note says how to get the table.
    """
    data = csv.encode("utf-8")
    filename = f"{name}-attributions.csv"
    if len(data) > DOWNLOAD_LIMIT:
        return element(
            "p",
            f"The attributions table ({len(data) / 1e6:.1f} MB as CSV) is too "
            f"large to embed (the limit is {DOWNLOAD_LIMIT / 1e6:g} MB): write "
            "it with skshapley explain, or in Python with "
            "explainer.explain(X).to_csv(...).",
            class_="note",
            id="download",
        )
    href = "data:text/csv;base64," + base64.b64encode(data).decode("ascii")
    return element(
        "p",
        element(
            "a",
            f"Download the attributions ({filename})",
            href=href,
            download=filename,
            id="download",
        ),
        " — one row per explained row, one column per output and feature, "
        "and the base value: each row's values add up to f(x).",
        class_="note",
    )
