"""``progress=``: None, False, True (a text bar on stderr) or a callable.

The bar's text and throttling are checked with an injected clock; the
explainers are checked against their own values without progress (the
oracle: a bar changes how rows are chunked, never the values).
"""

import io

import pandas as pd
import pytest
from sklearn.datasets import make_regression
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.linear_model import LinearRegression

from skshapley import (
    ExactExplainer,
    PermutationExplainer,
    TreeExplainer,
    report,
)
from skshapley._runtime.progress import ProgressBar, progress_callback


class Clock:
    """A clock that reads ``now``, set by the test."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def lines_of(stream: io.StringIO) -> list[str]:
    """The lines the bar drew, in order (each begins with a carriage return)."""
    text = stream.getvalue()
    assert text == "" or text.startswith("\r")
    return text.split("\r")[1:]


# --- progress_callback ---------------------------------------------------------


@pytest.mark.parametrize("progress", [None, False])
def test_none_and_false_give_no_callback(progress):
    assert progress_callback(progress) is None


def test_true_gives_a_bar_on_stderr(capsys):
    bar = progress_callback(True)
    assert isinstance(bar, ProgressBar)
    bar(1, 2)
    bar(2, 2)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("\rexplaining [")
    assert captured.err.endswith("\n")


def test_a_callable_passes_through():
    def callback(done, total):
        pass

    assert progress_callback(callback) is callback


@pytest.mark.parametrize("progress", ["yes", 1, 0])
def test_other_values_are_refused(progress):
    with pytest.raises(TypeError, match="progress must be True, False, None or a"):
        progress_callback(progress)


# --- the bar's text ------------------------------------------------------------


def shown(calls, **params) -> io.StringIO:
    """What a bar made with ``params`` writes, called at (time, done, total)."""
    clock, stream = Clock(), io.StringIO()
    bar = ProgressBar(stream, clock=clock, **params)
    for now, done, total in calls:
        clock.now = now
        bar(done, total)
    return stream


def test_bar_text_counts_rows_rate_and_time_left():
    stream = shown([(2.0, 1_000, 4_000), (4.0, 2_000, 4_000)])
    assert "\n" not in stream.getvalue()
    stream = shown([(2.0, 1_000, 4_000), (4.0, 2_000, 4_000), (8.0, 4_000, 4_000)])
    first, second, last = lines_of(stream)
    assert first == (
        "explaining [#####...............] 1,000/4,000 rows 25% 500 rows/s, 6 s left"
    )
    assert second == (
        "explaining [##########..........] 2,000/4,000 rows 50% 500 rows/s, 4 s left"
    )
    assert last.rstrip() == "explained 4,000 rows in 8.0 s (500 rows/s)"
    # Padded to the longest line before it, so that nothing of it is left.
    assert last == f"{last.rstrip():<{len(first)}}\n"


def test_bar_ends_its_line_once():
    stream = shown([(1.0, 1, 4), (2.0, 4, 4), (3.0, 4, 4)])
    assert stream.getvalue().count("\n") == 1
    assert len(lines_of(stream)) == 2  # nothing after the line has ended


def test_nothing_is_shown_when_one_chunk_holds_every_row():
    assert shown([(1.0, 10, 10)]).getvalue() == ""


def test_disabled_bar_shows_nothing():
    assert shown([(1.0, 1, 2), (2.0, 2, 2)], enabled=False).getvalue() == ""


def test_redraws_are_throttled_but_the_last_line_is_drawn():
    # Whole seconds, exact in floating point: a chunk every second.
    calls = [(float(step), step, 100) for step in range(1, 101)]
    lines = lines_of(shown(calls, min_interval=10.0))
    drawn = [int(line.split()[2].split("/")[0]) for line in lines[:-1]]
    # Drawn at the first call, then every 10 s: 10 lines for 100 calls.
    assert drawn == [1, 11, 21, 31, 41, 51, 61, 71, 81, 91]
    assert lines[-1].startswith("explained 100 rows in 100.0 s")


def test_throttling_counts_from_the_last_line_drawn():
    calls = [(0.5, 1, 10), (1.0, 2, 10), (1.5, 3, 10), (2.0, 4, 10)]
    drawn = [line.split()[2] for line in lines_of(shown(calls, min_interval=1.0))]
    assert drawn == ["1/10", "3/10"]  # 1.0 is 0.5 s after 0.5; 2.0 is 0.5 s after 1.5


# --- the explainers ------------------------------------------------------------


@pytest.fixture(scope="module")
def tree():
    X, y = make_regression(n_samples=600, n_features=6, random_state=0)
    X = pd.DataFrame(X, columns=[f"f{j}" for j in range(6)])
    model = GradientBoostingRegressor(n_estimators=20, random_state=0).fit(X, y)
    return TreeExplainer(model).fit(), X


@pytest.fixture(scope="module")
def agnostic():
    X, y = make_regression(n_samples=200, n_features=4, random_state=1)
    model = LinearRegression().fit(X, y)
    return model, X


@pytest.mark.parametrize("progress", [None, False])
def test_no_progress_writes_nothing(tree, capsys, progress):
    explainer, X = tree
    phi = explainer.explain(X, progress=progress)
    assert capsys.readouterr().err == ""
    pd.testing.assert_frame_equal(phi, explainer.explain(X))


def assert_bar_shown(err: str, n_rows: int) -> None:
    lines = err.split("\r")
    assert lines[0] == ""
    assert lines[1].startswith("explaining [")
    assert lines[-1].startswith(f"explained {n_rows:,} rows in ")
    assert err.endswith("\n")
    assert err.count("\n") == 1


@pytest.mark.parametrize("method", ["explain", "explain_interactions"])
def test_bar_gives_the_values_without_it(tree, capsys, method):
    explainer, X = tree
    explain = getattr(explainer, method)
    X = X.iloc[:150]  # more rows than the first chunk's 64
    expected = explain(X)
    values = explain(X, progress=True)
    assert_bar_shown(capsys.readouterr().err, len(X))
    pd.testing.assert_frame_equal(values, expected, check_exact=True)


def test_bar_on_the_permutation_explainer(agnostic, capsys):
    model, X = agnostic
    explainer = PermutationExplainer(model, n_permutations=2, random_state=0)
    explainer.fit(X[:20])
    expected = explainer.explain(X, return_std=True)
    phi, std = explainer.explain(X, progress=True, return_std=True)
    assert_bar_shown(capsys.readouterr().err, len(X))
    pd.testing.assert_frame_equal(phi, expected[0], check_exact=True)
    pd.testing.assert_frame_equal(std, expected[1], check_exact=True)


def test_leave_one_out_takes_progress(agnostic, capsys):
    model, X = agnostic
    explainer = ExactExplainer(model).fit(X[:20])
    expected = explainer.leave_one_out(X)
    calls = []
    loo = explainer.leave_one_out(X, progress=lambda *call: calls.append(call))
    assert calls[-1] == (len(X), len(X))
    assert len(calls) > 1
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)
    loo_bar = explainer.leave_one_out(X, progress=True)
    assert_bar_shown(capsys.readouterr().err, len(X))
    pd.testing.assert_frame_equal(loo, expected, check_exact=True)
    pd.testing.assert_frame_equal(loo_bar, expected, check_exact=True)


def test_a_callable_sees_every_chunk(tree):
    explainer, X = tree
    calls = []
    explainer.explain(X, progress=lambda done, total: calls.append((done, total)))
    assert calls[0] == (64, len(X))  # the first chunk's rows
    assert calls[-1] == (len(X), len(X))
    assert all(total == len(X) for _, total in calls)


def test_bar_lines_grow_over_chunks_of_an_explanation(tree):
    explainer, X = tree
    stream = io.StringIO()
    bar = ProgressBar(stream, min_interval=0.0)  # every chunk drawn
    phi = explainer.explain(X, progress=bar)
    pd.testing.assert_frame_equal(phi, explainer.explain(X), check_exact=True)
    lines = lines_of(stream)
    assert lines[0].startswith(
        f"explaining [##..................] 64/{len(X)} rows 10% "
    )
    assert len(lines) >= 3  # 64 rows, then at most 4 times as many per chunk
    assert all(line.startswith("explaining [") for line in lines[:-1])
    widths = [len(line.rstrip("\n")) for line in lines]
    assert widths == sorted(widths)


def test_report_takes_a_bar(tree, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    explainer, X = tree
    report(explainer, X, tmp_path / "report.html", progress=True)
    assert_bar_shown(capsys.readouterr().err, len(X))


def test_a_bad_progress_fails_before_explaining(tree):
    explainer, X = tree
    with pytest.raises(TypeError, match="got str"):
        explainer.explain(X, progress="yes")
    with pytest.raises(TypeError, match="got int"):
        explainer.explain_interactions(X, progress=1)
