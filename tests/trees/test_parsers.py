"""The registry of tree parsers (what importing it loads: tests/test_public_api)."""

import pytest
from sklearn.linear_model import LinearRegression

from skshapley import UnsupportedModelError
from skshapley.trees._readers import dispatch


def test_every_parser_is_a_function_of_the_trees_package():
    for parse in dispatch._PARSERS.values():
        assert callable(parse)
        assert parse.__module__.startswith("skshapley.trees._")
        assert parse.__name__.startswith("parse_")


def test_unsupported_models_name_the_supported_families():
    with pytest.raises(UnsupportedModelError, match="XGBoost; LightGBM"):
        dispatch.parse_model(LinearRegression())
