"""The ``progress`` argument of ``explain``: a callback, or a text bar.

``progress=True`` shows :class:`ProgressBar` on stderr; a callable is
called as ``progress(n_done, n_total)``; None and False show nothing. The
bar is plain text rewritten in place with a carriage return, which
terminals and Jupyter both render, so that no progress-bar package is
needed.
"""

import sys
import time
from collections.abc import Callable
from typing import TextIO

# Shortest time between two redraws of the bar: at most 10 a second, so
# that drawing never costs more than the rows it reports.
_MIN_INTERVAL = 0.1

_BAR_WIDTH = 20


def progress_callback(progress) -> Callable[[int, int], None] | None:
    """The callback that ``explain(..., progress=progress)`` calls, or None.

    Parameters
    ----------
    progress : bool, callable or None
        True for a :class:`ProgressBar` on stderr; None or False for none; a
        callable is returned as it is.

    Returns
    -------
    callback : callable or None
        Called as ``callback(n_done, n_total)`` after each chunk of rows.

    Raises
    ------
    TypeError
        If ``progress`` is none of these.

    Examples
    --------
    >>> from skshapley._runtime.progress import ProgressBar, progress_callback
    >>> progress_callback(None) is None, progress_callback(False) is None
    (True, True)
    >>> isinstance(progress_callback(True), ProgressBar)
    True
    >>> progress_callback(print) is print
    True
    """
    if progress is None or progress is False:
        return None
    if progress is True:
        return ProgressBar()
    if callable(progress):
        return progress
    raise TypeError(
        "progress must be True, False, None or a callable "
        f"progress(n_done, n_total); got {type(progress).__name__}."
    )


class ProgressBar:
    """A progress bar on a text stream, rewritten in place; ``explain``'s callback.

    Called as ``bar(n_done, n_total)`` after each chunk of rows, it reads
    ``explaining [#####...............] 2,500/10,000 rows 25% 1,250 rows/s,
    6 s left``, then ``explained 10,000 rows in 8.0 s (1,250 rows/s)`` and a
    newline. It is redrawn at most every ``min_interval`` seconds (the last
    call always draws); nothing is shown when one chunk holds every row.
    Times count from the bar's creation: make it just before explaining.

    Parameters
    ----------
    stream : file-like, default=None
        Where the bar is written; ``sys.stderr`` (at creation) if None.
    enabled : bool, default=True
        If False, nothing is written (the rows are still explained in
        chunks, as with any callback, so that Ctrl-C stops between them).
    clock : callable, default=time.perf_counter
        The seconds elapsed, as a float; tests inject their own.
    min_interval : float, default=0.1
        The shortest time in seconds between two redraws.

    Examples
    --------
    >>> import io
    >>> from skshapley._runtime.progress import ProgressBar
    >>> ticks = iter([0.0, 1.0, 2.0])
    >>> stream = io.StringIO()
    >>> bar = ProgressBar(stream, clock=lambda: next(ticks))
    >>> bar(100, 200)
    >>> bar(200, 200)
    >>> for line in stream.getvalue().split("\\r")[1:]:
    ...     print(line.rstrip())
    explaining [##########..........] 100/200 rows 50% 100 rows/s, 1 s left
    explained 200 rows in 2.0 s (100 rows/s)
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        enabled: bool = True,
        clock: Callable[[], float] = time.perf_counter,
        min_interval: float = _MIN_INTERVAL,
    ):
        self.stream = sys.stderr if stream is None else stream
        self.enabled = enabled
        self.clock = clock
        self.min_interval = min_interval
        self._start = clock()
        self._shown_at = None  # when the bar was last drawn; None before
        self._width = 0  # of the line shown; 0 while none is

    def __call__(self, done: int, total: int) -> None:
        """Show that ``done`` of ``total`` rows are explained."""
        if not self.enabled:
            return
        now = self.clock()
        seconds = now - self._start
        rate = done / seconds if seconds > 0 else float("inf")
        if done < total:
            if self._shown_at is not None and now - self._shown_at < self.min_interval:
                return
            self._shown_at = now
            left = (total - done) / rate if rate > 0 else float("inf")
            filled = _BAR_WIDTH * done // total
            bar = "#" * filled + "." * (_BAR_WIDTH - filled)
            self._show(
                f"explaining [{bar}] {done:,}/{total:,} rows "
                f"{100 * done // total}% {rate:,.0f} rows/s, {left:.0f} s left"
            )
        elif self._width:  # the last of several chunks: end the line
            self._show(
                f"explained {total:,} rows in {seconds:.1f} s ({rate:,.0f} rows/s)"
            )
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0

    def _show(self, line: str) -> None:
        # Padded to the longest line shown, so that nothing of it is left.
        self.stream.write(f"\r{line:<{self._width}}")
        self.stream.flush()
        self._width = max(self._width, len(line))
