"""Render the HTML report for six kinds of model and screenshot each one.

A developer command (not part of the package): it writes the reports of a
regression, a binary classifier (log-odds), a multiclass classifier with
string labels, a kernel pipeline, a grouped model with a 50-character
feature name and a 10,000-row model, each with its target (the quality
section), chosen rows (``show_rows``) and the attributions download, into
one folder; then it screenshots each report with headless Chromium at every
width asked for, and prints the paths of the PNG files. It also measures
each report's layout at those widths (see :func:`layout_problems`), prints
what is wrong and then exits with status 1. Look at the screenshots: text
outside a figure or overlapping, figures scaled beyond the page's text,
numbers such as ``5.551e-17``, sections missing or out of order.

Without Chromium (``chromium``, ``chromium-browser`` or ``google-chrome`` on
PATH) it writes the reports only, says that screenshots need it, and exits
with status 0, so that a machine without a browser can run it.

Run from the repository's root, with skshapley and matplotlib installed::

    python tools/report_screenshots.py --out report-screenshots --widths 700,1280
"""

import argparse
import html
import json
import re
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


def render_case(name: str, folder: Path) -> Path:
    """Write the report of the case ``name`` (of :data:`CASES`) into ``folder``."""
    from skshapley import report

    explainer, X, y = CASES[name]()
    title = f"{name}: {type(explainer.model).__name__}"
    path = folder / f"{name}.html"
    report(explainer, X, path, y=y, title=title, show_rows=SHOWN[name], download=True)
    print(f"wrote {path}", file=sys.stderr)
    return path


def render(folder: Path) -> list[Path]:
    """Write every case's report into ``folder``; their paths."""
    return [render_case(name, folder) for name in CASES]


def browser() -> str | None:
    """The first of :data:`BROWSERS` on PATH, or None."""
    for name in BROWSERS:
        found = shutil.which(name)
        if found is not None:
            return found
    return None


def run_browser(command: str, *arguments: str) -> str:
    """Run headless Chromium ``command`` with ``arguments``; what it printed.

    Each run has a new, temporary profile (no state shared between runs),
    no sandbox (without which Chromium refuses to run as root), its shared
    memory in /tmp (a container's or chroot's /dev/shm may be small or
    absent) and no scrollbars (as on a phone, they take no width).
    """
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [command, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--disable-dev-shm-usage", "--hide-scrollbars",
             f"--user-data-dir={profile}", *arguments],
            check=True, capture_output=True, text=True, timeout=300,
        ).stdout  # fmt: skip


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
        run_browser(
            command,
            f"--screenshot={png}",
            f"--window-size={width},{height}",
            page.resolve().as_uri(),
        )
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


# Measures the report in the window (a frame) it is loaded in and sends the
# frame's width and the problems found to the page holding the frame.
# Content inside a box that scrolls sideways (a wide table) may be wider
# than the window; nothing else may. A card (summary numbers, figure) must
# hold something: text, or an image that loaded and has a height; and a
# figure's card must be no wider than its image (white beside an image
# makes gaps between figures).
LAYOUT_SCRIPT = """
addEventListener("load", function () {
  var width = document.documentElement.clientWidth, problems = [];
  function name(node) {
    var text = node.tagName.toLowerCase() + (node.id ? "#" + node.id : "");
    node.classList.forEach(function (c) { text += "." + c; });
    var parent = node.parentElement;
    return parent && parent !== document.body ? name(parent) + " > " + text : text;
  }
  function scrolled(node) {
    for (var box = node.parentElement; box; box = box.parentElement) {
      if (getComputedStyle(box).overflowX !== "visible") return true;
    }
    return false;
  }
  function inner(node, side) {  // the content box's width or height
    var style = getComputedStyle(node);
    if (side === "width") {
      return node.clientWidth - parseFloat(style.paddingLeft) -
        parseFloat(style.paddingRight);
    }
    return node.clientHeight - parseFloat(style.paddingTop) -
      parseFloat(style.paddingBottom);
  }
  var scrollWidth = document.documentElement.scrollWidth;
  if (scrollWidth > width) problems.push("the page is " + scrollWidth + " px wide");
  document.querySelectorAll("body *").forEach(function (node) {
    var box = node.getBoundingClientRect();
    if ((box.width || box.height) && box.right > width + 1 && !scrolled(node))
      problems.push(name(node) + " reaches " + Math.round(box.right) + " px");
  });
  document.querySelectorAll(".card, figure").forEach(function (card) {
    var images = card.querySelectorAll("img"), empty = inner(card, "height") <= 0;
    if (!images.length && !card.textContent.trim()) empty = true;
    images.forEach(function (image) {
      if (!image.naturalWidth || !image.getBoundingClientRect().height) empty = true;
    });
    if (empty) problems.push(name(card) + " is empty");
    var image = card.querySelector(":scope > img");
    if (!image) return;
    var white = inner(card, "width") - image.getBoundingClientRect().width;
    if (white > 2) problems.push(name(card) + " has " + Math.round(white) +
                                 " px of white beside its image");
  });
  parent.postMessage(JSON.stringify({width: width, problems: problems}), "*");
});
"""


def layout_problems(command: str, page: Path, widths: list[int]) -> dict:
    """What is wrong with the layout of ``page`` at each of ``widths``.

    A copy of the page with :data:`LAYOUT_SCRIPT` (the report itself has no
    script) is loaded in one frame per width, in a page that collects the
    frames' findings and that Chromium prints (a frame, unlike Chromium's
    window, can be narrower than 500 pixels). Returns ``{width: [problem,
    ...]}``, an empty list where nothing is wrong.
    """
    measured = page.with_name(f"{page.stem}-measured.html")
    source = page.read_text(encoding="utf-8")
    script = f"<script>{LAYOUT_SCRIPT}</script></body>"
    measured.write_text(source.replace("</body>", script), encoding="utf-8")
    frames = "".join(
        f'<iframe src="{measured.name}" width="{width}" height="900" '
        'style="position:absolute; top:0; left:0; border:0"></iframe>'
        for width in widths
    )
    holder = page.with_name(f"{page.stem}-layout.html")
    holder.write_text(
        '<!doctype html><meta charset="utf-8"><pre id="found"></pre><script>'
        'addEventListener("message", function (event) {'
        ' document.getElementById("found").textContent += event.data + "\\n"; });'
        f"</script>{frames}",
        encoding="utf-8",
    )
    dom = run_browser(
        command,
        "--dump-dom",
        "--virtual-time-budget=60000",
        f"--window-size={max(widths) + 100},1000",
        holder.resolve().as_uri(),
    )
    found = re.search(r'<pre id="found">(.*?)</pre>', dom, flags=re.DOTALL)
    lines = html.unescape(found.group(1)).splitlines() if found else []
    verdicts = [json.loads(line) for line in lines]
    problems = {verdict["width"]: verdict["problems"] for verdict in verdicts}
    missing = sorted(set(widths) - set(problems))
    if missing:
        raise RuntimeError(f"no layout measured at widths {missing} of {page}")
    return problems


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
    status = 0
    for page in pages:
        for width in args.widths:
            print(screenshot(command, page, width))
        for width, problems in layout_problems(command, page, args.widths).items():
            for problem in problems:
                print(f"{page.name} at {width} px: {problem}", file=sys.stderr)
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
