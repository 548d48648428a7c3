"""Print the path of X through skshapley's modules during one ``explain(X)`` call.

A developer command (not part of the package), for comparing the package's
layout before and after a refactor. It fits a small model and its explainer,
then traces the single call ``explainer.explain(X)`` with
:func:`sys.setprofile`: every Python function entered whose module belongs
to ``skshapley`` is recorded, and the modules are printed in the order they
were entered, consecutive repeats collapsed (A, A, B, A -> A, B, A). A
summary line counts the distinct modules, the transitions between them and
the returns to ``skshapley._base`` (the base class's module) after leaving it.
Only Python frames of the calling thread are seen (not Cython or OpenMP code),
and comprehensions are frames before Python 3.12 only: compare paths traced
with the same interpreter. Run from the repository's root::

    python tools/call_path.py [--explainer tree]
"""

import argparse
import sys
from types import FrameType

import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.kernel_ridge import KernelRidge

import skshapley

BASE_MODULE = "skshapley._base"


def make_explainer(kind: str, X: pd.DataFrame, y: np.ndarray):
    """A fitted explainer of a small model fitted on ``X`` and ``y``.

    Parameters
    ----------
    kind : {"tree", "kernel", "permutation"}
        Which explainer.
    X, y : pandas.DataFrame, numpy.ndarray
        Training data and target; ``X`` is also the permutation background.

    Returns
    -------
    explainer : skshapley explainer
        The explainer, fitted.
    """
    if kind == "kernel":
        model = KernelRidge(kernel="rbf").fit(X, y)
        return skshapley.ProductKernelExplainer(model).fit()
    model = GradientBoostingRegressor(n_estimators=5, max_depth=3, random_state=0)
    model = model.fit(X, y)
    if kind == "tree":
        return skshapley.TreeExplainer(model).fit()
    explainer = skshapley.PermutationExplainer(
        model.predict, n_permutations=4, random_state=0
    )
    return explainer.fit(X)


def traced_modules(explainer, X: pd.DataFrame) -> list[str]:
    """The skshapley modules of the functions entered by ``explainer.explain(X)``.

    Parameters
    ----------
    explainer, X : skshapley explainer, pandas.DataFrame
        A fitted explainer and the rows it explains.

    Returns
    -------
    modules : list of str
        One module name per Python-level call, in order.
    """
    modules: list[str] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        name = frame.f_globals.get("__name__", "")
        if event == "call" and (name == "skshapley" or name.startswith("skshapley.")):
            modules.append(name)

    sys.setprofile(profile)
    try:
        explainer.explain(X)
    finally:
        sys.setprofile(None)
    return modules


def collapsed(modules: list[str]) -> list[str]:
    """``modules`` with consecutive repeats collapsed into one entry."""
    return [m for i, m in enumerate(modules) if i == 0 or m != modules[i - 1]]


def main() -> None:
    """Parse the command line, trace one ``explain`` call and print its path."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--explainer", choices=("tree", "kernel", "permutation"), default="tree"
    )
    kind = parser.parse_args().explainer
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(20, 4)), columns=["age", "bmi", "bp", "s1"])
    y = X["age"] + 2 * X["bmi"] * X["bp"] + rng.normal(scale=0.1, size=len(X))
    explainer = make_explainer(kind, X, y.to_numpy())
    path = collapsed(traced_modules(explainer, X))
    for step, module in enumerate(path, start=1):
        print(f"{step}. {module}")
    returns = max(0, path.count(BASE_MODULE) - 1)
    print(
        f"{len(set(path))} distinct modules, {max(0, len(path) - 1)} transitions, "
        f"{returns} returns to {BASE_MODULE}"
    )


if __name__ == "__main__":
    main()
