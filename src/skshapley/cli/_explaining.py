"""Which explainer, explanations with a progress line, the attributions table."""

import time

import numpy as np
import pandas as pd

from .._errors import UnsupportedModelError
from .._output_choice import chosen_output
from ..kernels import ProductKernelExplainer
from ..trees import TreeExplainer
from ._inputs import CommandError

# Tried in this order; the first that supports the model explains it.
EXPLAINERS = (TreeExplainer, ProductKernelExplainer)

# Rows in the first chunk of an explanation; later chunks are sized to take
# about _CHUNK_SECONDS each, so that Ctrl-C is handled within about that
# time and the progress line moves steadily.
_FIRST_CHUNK = 64
_CHUNK_SECONDS = 0.5


def make_explainer(model, groups: dict | None):
    """The first explainer in :data:`EXPLAINERS` that supports ``model``, fitted.

    Only an explainer's :class:`UnsupportedModelError` moves on to the next
    explainer; its other errors are about this model (or a bug) and are
    raised as they are, a ``ValueError`` as a :class:`CommandError`.
    """
    refusals = []
    for cls in EXPLAINERS:
        try:
            return cls(model, groups=groups).fit()
        except UnsupportedModelError as exc:
            refusals.append(str(exc))
        except ValueError as exc:  # a model not fitted, a bad group, ...
            raise CommandError(str(exc)) from exc
    raise CommandError(" ".join(refusals))


def output_name(explainer, name: str | None):
    """The explainer's output called ``name`` (``--output``), or None."""
    if name is None:
        return None
    try:
        return chosen_output(explainer.output_names_, name, option="--output")
    except ValueError as exc:
        raise CommandError(str(exc)) from exc


class Progress:
    """A line on ``stream``, rewritten in place.

    It reads "explaining 4,500/10,000 rows (45%, 6 s left)", then
    "explained 10,000 rows in 11.0 s".
    """

    def __init__(self, stream, *, enabled: bool):
        self.stream = stream
        self.enabled = enabled
        self._width = 0  # of the line shown; 0 while none is

    def update(self, done: int, total: int, seconds: float) -> None:
        """Show that ``done`` of ``total`` rows are explained, in ``seconds``."""
        if not self.enabled:
            return
        left = f", {seconds / done * (total - done):.0f} s left" if done < total else ""
        self._show(f"explaining {done:,}/{total:,} rows ({100 * done // total}%{left})")

    def finish(self, total: int, seconds: float) -> None:
        """Replace the line by a final one, if one was shown."""
        if self._width:
            self._show(f"explained {total:,} rows in {seconds:.1f} s")
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0

    def _show(self, line: str) -> None:
        self.stream.write(f"\r{line:<{self._width}}")
        self.stream.flush()
        self._width = max(self._width, len(line))


def explain_in_chunks(explain_rows, X: pd.DataFrame, progress: Progress):
    """``explain_rows(X)``, in chunks of rows that take about half a second.

    Python handles Ctrl-C (SIGINT) only between calls into compiled code,
    which run for a whole chunk: chunks keep the command responsive to it,
    whether or not progress is shown. Rows are explained independently, so
    the chunks' values are the values of one call; ``phi.attrs`` numbers
    (quadrature points, error bounds) are the largest over the chunks.
    """
    n_samples = len(X)
    start = time.perf_counter()
    chunks = []
    done, size = 0, _FIRST_CHUNK
    while done < n_samples:
        began = time.perf_counter()
        chunks.append(explain_rows(X.iloc[done : done + size]))
        seconds = time.perf_counter() - began
        done += len(chunks[-1])
        if done < n_samples or len(chunks) > 1:
            progress.update(done, n_samples, time.perf_counter() - start)
        rate = size / max(seconds, 1e-3)
        size = max(1, int(np.clip(rate * _CHUNK_SECONDS, size // 4, size * 4)))
    progress.finish(n_samples, time.perf_counter() - start)
    if len(chunks) == 1:
        return chunks[0]
    phi = pd.concat(chunks)
    phi.attrs = _merged_attrs([chunk.attrs for chunk in chunks])
    return phi


def attributions_table(phi: pd.DataFrame, explainer, output=None) -> pd.DataFrame:
    """The attributions with the base value as a last column.

    Each row's values and ``base_value`` sum to the model's raw output. For
    several outputs the columns are ``<output>__<feature>`` and
    ``<output>__base_value``, unless ``output`` picks one. An unnamed index
    is called ``row``.
    """
    base = explainer.expected_value_
    if isinstance(phi.columns, pd.MultiIndex) and output is not None:
        phi, base = phi[output], base[output]
    if isinstance(phi.columns, pd.MultiIndex):
        parts = []
        for name in phi.columns.unique(level=0):
            part = phi[name].assign(**{_base_column(phi[name]): base[name]})
            parts.append(part.add_prefix(f"{name}__"))
        table = pd.concat(parts, axis=1)
    else:
        table = phi.assign(**{_base_column(phi): float(base)})
    if table.index.name is None and not isinstance(table.index, pd.MultiIndex):
        table.index.name = "row"
    return table


def _base_column(phi: pd.DataFrame) -> str:
    """``base_value``, with leading underscores while a feature has that name."""
    name = "base_value"
    while name in phi.columns:
        name = f"_{name}"
    return name


def _merged_attrs(attrs: list[dict]) -> dict:
    """One ``attrs`` dict: numbers' largest value, else the first chunk's."""
    merged = dict(attrs[0])
    for key in merged:
        values = [chunk.get(key) for chunk in attrs]
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            merged[key] = max(values)
    return merged
