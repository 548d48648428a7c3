"""The public names, their documentation, and what importing costs."""

import dataclasses
import doctest
import importlib
import inspect
import subprocess
import sys

import pytest

import skshapley
import skshapley.games

PUBLIC_GAMES = {
    "INDICES",
    "AxiomReport",
    "InteractionIndices",
    "banzhaf_values",
    "check_axioms",
    "exact_n_points",
    "game_table",
    "gauss_legendre",
    "harsanyi_dividends",
    "interaction_indices",
    "leave_one_out",
    "linearity_residual",
    "product_banzhaf",
    "product_interaction_indices",
    "product_interactions",
    "product_shapley",
    "sample_shapley",
    "shapley_values",
}


PUBLIC_TOP_LEVEL = {
    "ExactExplainer",
    "Explainer",
    "PermutationExplainer",
    "ProductKernelExplainer",
    "TreeExplainer",
    "UnsupportedModelError",
    "__version__",
    "explain",
    "games",
    "importance",
    "plotting",
    "report",
    "to_shapiq",
}


def public_objects():
    games = [
        getattr(skshapley.games, name) for name in sorted(PUBLIC_GAMES - {"INDICES"})
    ]
    explainers = [
        skshapley.TreeExplainer,
        skshapley.ProductKernelExplainer,
        skshapley.ExactExplainer,
        skshapley.PermutationExplainer,
    ]
    methods = [
        method
        for explainer in explainers
        for method in (
            explainer.fit,
            explainer.explain,
            explainer.raw_predict,
            explainer.describe,
            explainer.supports,
        )
    ]
    agnostic = [skshapley.ExactExplainer, skshapley.PermutationExplainer]
    return [
        *games,
        *explainers,
        *methods,
        *(explainer.leave_one_out for explainer in agnostic),
        skshapley.UnsupportedModelError,
        skshapley.Explainer,
        skshapley.explain,
        skshapley.importance,
        skshapley.report,
        skshapley.to_shapiq,
    ]


def test_all_lists_exactly_the_public_names():
    assert set(skshapley.games.__all__) == PUBLIC_GAMES
    assert set(skshapley.__all__) == PUBLIC_TOP_LEVEL
    for module in (skshapley, skshapley.games):
        for name in module.__all__:
            assert hasattr(module, name), name


def test_submodules_are_imported_on_first_use():
    # As scikit-learn's: the attribute imports the submodule, and plotting
    # still imports no matplotlib until something is drawn.
    code = (
        "import sys, skshapley; "
        "before = 'skshapley.plotting' in sys.modules; "
        "plotting = skshapley.plotting; "
        "print(before, plotting.__name__, 'matplotlib' in sys.modules, "
        "'plotting' in dir(skshapley))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "skshapley.plotting", "False", "True"]
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        skshapley.nothing  # noqa: B018


def test_version_is_the_installed_one():
    from importlib.metadata import version

    assert skshapley.__version__ == version("skshapley")


def test_import_does_not_load_optional_libraries():
    # The tree parsers' registry imports every parser module: none may import
    # its model library itself.
    code = (
        "import sys, skshapley, skshapley.games, skshapley.trees._readers.dispatch; "
        "print(sorted(m for m in ('xgboost', 'lightgbm', 'matplotlib', 'skops', "
        "'dask', 'shap', 'numba') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "obj",
    [
        obj
        for obj in public_objects()
        if not inspect.isfunction(obj) or "." not in obj.__qualname__
    ],
    ids=lambda obj: obj.__name__,
)
def test_docstring_examples_run(obj):
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(obj, obj.__name__, globs={})
    assert tests[0].examples, f"{obj.__name__} has no Examples section"
    for test in tests:
        runner.run(test)
    assert runner.failures == 0


@pytest.mark.parametrize("obj", public_objects(), ids=lambda obj: obj.__qualname__)
def test_numpydoc_matches_the_signature(obj):
    validate = importlib.import_module("numpydoc.validate").validate
    # Checks that matter to users: parameters documented as in the signature,
    # returns documented, examples present, sections in order.
    checked = {"GL01", "GL02", "GL03", "GL06", "GL07", "PR01", "PR02", "PR03",
               "PR04", "PR10", "RT01", "EX01", "SS01", "SS02", "SS03"}  # fmt: skip
    errors = [
        f"{code}: {message}"
        for code, message in validate(f"{obj.__module__}.{obj.__qualname__}")["errors"]
        if code in checked
    ]
    if "." in obj.__qualname__:  # methods: examples live on their class
        errors = [error for error in errors if not error.startswith("EX01")]
    if inspect.isclass(obj):  # classes return nothing
        errors = [error for error in errors if not error.startswith("RT01")]
    if dataclasses.is_dataclass(obj):  # fields are documented as Attributes
        errors = [error for error in errors if not error.startswith("PR01")]
    assert errors == []
