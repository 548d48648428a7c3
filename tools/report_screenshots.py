"""Render the HTML report for six kinds of model and screenshot each one.

A developer command (not part of the package): it writes the reports of a
regression, a binary classifier (log-odds), a multiclass classifier with
string labels, a kernel pipeline, a grouped model with a 50-character
feature name and a 10,000-row model, each with its target (the quality
section), chosen rows (``show_rows``) and the attributions download, into
one folder; then it screenshots each report with headless Chromium at every
width asked for, and prints the paths of the PNG files. Look at them: text
outside a figure or overlapping, figures scaled beyond the page's text,
numbers such as ``5.551e-17``, sections missing or out of order.

Without Chromium (``chromium``, ``chromium-browser`` or ``google-chrome`` on
PATH) it writes the reports only, says that screenshots need it, and exits
with status 0, so that a machine without a browser can run it.

Run from the repository's root, with skshapley and matplotlib installed::

    python tools/report_screenshots.py --out report-screenshots --widths 700,1280
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

BROWSERS = ("chromium", "chromium-browser", "google-chrome")

# The first window height tried, in pixels; doubled while the page fills it.
_FIRST_HEIGHT = 16_000
_MAX_HEIGHT = 128_000

# White kept below the page's last content when a screenshot is trimmed.
_MARGIN = 24

# The long feature name of the grouped model: 50 characters.
LONG_NAME = "body_mass_index_measured_at_the_baseline_visit_kg2"


def _diabetes():
    from sklearn.datasets import load_diabetes

    return load_diabetes(return_X_y=True, as_frame=True, scaled=False)


def _regression():
    from sklearn.ensemble import GradientBoostingRegressor

    from skshapley import TreeExplainer

    X, y = _diabetes()
    model = GradientBoostingRegressor(n_estimators=100, random_state=0).fit(X, y)
    return TreeExplainer(model).fit(), X, y


def _binary():
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import HistGradientBoostingClassifier

    from skshapley import TreeExplainer

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    model = HistGradientBoostingClassifier(max_iter=50, random_state=0).fit(X, y)
    return TreeExplainer(model).fit(), X, y


def _wine():
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True, as_frame=True)
    labels = np.array(["barolo", "grignolino", "barbera"])[y]
    X.index = [f"wine {i}" for i in range(len(X))]
    return X, pd.Series(labels, index=X.index, name="cultivar")


def _multiclass():
    from sklearn.ensemble import RandomForestClassifier

    from skshapley import TreeExplainer

    X, y = _wine()
    model = RandomForestClassifier(n_estimators=50, random_state=0).fit(X, y)
    return TreeExplainer(model).fit(), X, y


def _kernel():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from skshapley import Explainer

    X, y = _wine()
    X, y = X.iloc[:, :6], y == "barolo"
    model = make_pipeline(StandardScaler(), SVC(kernel="rbf")).fit(X, y)
    return Explainer(model).fit(), X, y


def _grouped():
    from sklearn.ensemble import GradientBoostingRegressor

    from skshapley import TreeExplainer

    X, y = _diabetes()
    X = X.rename(columns={"bmi": LONG_NAME})
    model = GradientBoostingRegressor(n_estimators=100, random_state=0).fit(X, y)
    groups = {"blood serum measurements": ["s1", "s2", "s3", "s4", "s5", "s6"]}
    return TreeExplainer(model, groups=groups).fit(), X, y


def _large():
    from sklearn.datasets import make_friedman1
    from sklearn.ensemble import HistGradientBoostingRegressor

    from skshapley import TreeExplainer

    X, y = make_friedman1(n_samples=10_000, n_features=10, random_state=0)
    X = pd.DataFrame(X, columns=[f"x{j}" for j in range(10)])
    model = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X, y)
    return TreeExplainer(model).fit(), X, y


# The rows of each case whose waterfalls are shown (labels of X's index).
SHOWN = {
    "regression": [0, 17, 250],
    "binary": [3, 20],
    "multiclass": ["wine 0", "wine 100", "wine 170"],
    "kernel": ["wine 5", "wine 140"],
    "grouped": [1, 2],
    "large": [9_999],
}

CASES = {
    "regression": _regression,
    "binary": _binary,
    "multiclass": _multiclass,
    "kernel": _kernel,
    "grouped": _grouped,
    "large": _large,
}


def render(folder: Path) -> list[Path]:
    """Write every case's report into ``folder``; their paths."""
    from skshapley import report

    paths = []
    for name, case in CASES.items():
        explainer, X, y = case()
        title = f"{name}: {type(explainer.model).__name__}"
        path = folder / f"{name}.html"
        report(
            explainer, X, path, y=y, title=title, show_rows=SHOWN[name], download=True
        )
        print(f"wrote {path}", file=sys.stderr)
        paths.append(path)
    return paths


def browser() -> str | None:
    """The first of :data:`BROWSERS` on PATH, or None."""
    for name in BROWSERS:
        found = shutil.which(name)
        if found is not None:
            return found
    return None


def screenshot(command: str, page: Path, width: int) -> Path:
    """A PNG of the whole of ``page`` at ``width`` pixels, trimmed at the bottom.

    Chromium draws the window it is given; the page's height is unknown, so
    the window starts tall and doubles while the page's content reaches its
    bottom edge, and the white below the content is cut off.
    """
    from PIL import Image  # a dependency of matplotlib, which the report needs

    png = page.with_name(f"{page.stem}-{width}.png")
    height = _FIRST_HEIGHT
    while True:
        with tempfile.TemporaryDirectory() as profile:  # no shared browser state
            subprocess.run(
                [command, "--headless", "--no-sandbox", "--disable-gpu",
                 "--hide-scrollbars", f"--user-data-dir={profile}",
                 f"--screenshot={png}", f"--window-size={width},{height}",
                 page.resolve().as_uri()],
                check=True, capture_output=True, timeout=300,
            )  # fmt: skip
        with Image.open(png) as image:
            pixels = np.asarray(image.convert("L"))
        background = pixels[-1, 0]
        content = np.flatnonzero((pixels != background).any(axis=1))
        last = content[-1] if len(content) else 0
        if last < height - _MARGIN or height >= _MAX_HEIGHT:
            break
        height *= 2
    with Image.open(png) as image:
        image.crop((0, 0, width, min(height, last + _MARGIN))).save(png)
    return png


def _widths(text: str) -> list[int]:
    try:
        widths = [int(part) for part in text.split(",")]
    except ValueError:
        widths = []
    if not widths or min(widths) < 200:
        raise argparse.ArgumentTypeError(
            f"expected widths in pixels (at least 200) such as 700,1280, got {text!r}"
        )
    return widths


def main(argv: list[str] | None = None) -> int:
    """Render the reports and screenshot them; the exit status."""
    parser = argparse.ArgumentParser(
        prog="report_screenshots.py",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("report-screenshots"),
        help="the folder written (default: report-screenshots)",
    )
    parser.add_argument(
        "--widths",
        type=_widths,
        default=[700, 1280],
        help="window widths of the screenshots, in pixels (default: 700,1280)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="write into --out even if it holds files (they may be replaced)",
    )
    args = parser.parse_args(argv)
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"{args.out} is a file; --out names a folder")
    if args.out.exists() and any(args.out.iterdir()) and not args.force:
        parser.error(f"{args.out} is not empty; pass --force to write into it")
    args.out.mkdir(parents=True, exist_ok=True)
    pages = render(args.out)
    command = browser()
    if command is None:
        print(
            "note: the screenshots need Chromium (apt install chromium), which "
            f"is not on PATH; the reports are in {args.out}",
            file=sys.stderr,
        )
        return 0
    for page in pages:
        for width in args.widths:
            print(screenshot(command, page, width))
    return 0


if __name__ == "__main__":
    sys.exit(main())
