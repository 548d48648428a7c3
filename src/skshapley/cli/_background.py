"""The background data of ``--background``: read, trimmed, maybe subsampled.

Interventional Shapley values compare each explained row with a background
population; ``--background-rows N --seed S`` keeps a seeded random sample
of N of its rows, which the report states.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ._inputs import CommandError, read_data


@dataclass(frozen=True)
class Background:
    """The background rows, and how they were drawn from the file.

    ``n_file`` is the file's number of rows; ``seed`` is ``None`` when every
    row is kept.
    """

    data: pd.DataFrame
    name: str
    n_file: int
    seed: int | None

    def describe(self) -> str:
        """``background: N of M rows, sampled with seed S`` (or ``M rows``)."""
        if self.seed is None:
            return f"background: {self.n_file:,} rows"
        return (
            f"background: {len(self.data):,} of {self.n_file:,} rows, sampled "
            f"with seed {self.seed}"
        )

    def note(self) -> tuple[str, str]:
        """The report's ``about`` item on the background data."""
        return (
            "Background data",
            f"Interventional Shapley values against the rows of {self.name} "
            f"({self.describe()}): a feature left out of a coalition takes "
            "these rows' values, and the base value is the model's mean output "
            "over them.",
        )


def background_of(args) -> Background | None:
    """The command's ``--background`` rows, or None without that option."""
    if args.background is None:
        return None
    return read_background(
        args.background,
        max_bytes=args.max_data_bytes,
        rows=args.background_rows,
        seed=0 if args.seed is None else args.seed,
        drop=(args.target, args.index),
    )


def read_background(
    path: Path, *, max_bytes: int, rows: int | None, seed: int, drop=()
) -> Background:
    """The background data in ``path``, without the columns in ``drop``.

    ``drop`` holds the data's ``--target`` and ``--index`` columns, left out
    where the background has them. With fewer than ``rows`` rows, all are
    kept; else ``rows`` are drawn without replacement by
    ``numpy.random.default_rng(seed)`` and kept in the file's order.
    """
    data = read_data(path, max_bytes=max_bytes, what="background")
    data = data.drop(columns=[column for column in drop if column in data.columns])
    if len(data) == 0:
        raise CommandError(f"background file {path} has no rows.")
    n_file = len(data)
    if rows is None or rows >= n_file:
        return Background(data, path.name, n_file, None)
    chosen = np.random.default_rng(seed).choice(n_file, rows, replace=False)
    return Background(data.iloc[np.sort(chosen)], path.name, n_file, seed)
