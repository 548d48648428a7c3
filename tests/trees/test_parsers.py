"""The registry of tree parsers, and what importing them loads."""

import subprocess
import sys

import pytest
from sklearn.linear_model import LinearRegression

from skshapley import UnsupportedModelError
from skshapley.trees import _parsers


def test_importing_never_loads_optional_libraries():
    # The registry imports every parser module; none may import the model
    # libraries (or the report's and the command's optional ones) itself.
    code = (
        "import sys, skshapley, skshapley.trees, skshapley.trees._parsers; "
        "print(sorted(m for m in ('xgboost', 'lightgbm', 'matplotlib', 'skops') "
        "if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_every_parser_is_a_function_of_the_trees_package():
    for parse in _parsers._PARSERS.values():
        assert callable(parse)
        assert parse.__module__.startswith("skshapley.trees._")
        assert parse.__name__.startswith("parse_")


def test_unsupported_models_name_the_supported_families():
    with pytest.raises(UnsupportedModelError, match="XGBoost; LightGBM"):
        _parsers.parse_model(LinearRegression())
