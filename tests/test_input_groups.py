"""input_groups: each transformed column traced to the raw input it comes from.

Each case's expected groups are written out by hand from what the
transformer does (its documented column layout), not computed.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import (
    ColumnTransformer,
    make_column_selector,
    make_column_transformer,
)
from sklearn.decomposition import PCA
from sklearn.feature_selection import VarianceThreshold
from sklearn.impute import KNNImputer, MissingIndicator, SimpleImputer
from sklearn.pipeline import make_pipeline, make_union
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    MaxAbsScaler,
    MinMaxScaler,
    Normalizer,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    PowerTransformer,
    QuantileTransformer,
    RobustScaler,
    SplineTransformer,
    StandardScaler,
    TargetEncoder,
)
from sklearn.tree import DecisionTreeRegressor

from skshapley import TreeExplainer
from skshapley._contract.input_groups import input_groups

X = pd.DataFrame(
    {
        "age": [30.0, 41.0, 52.0, 23.0, 64.0, 35.0, 46.0, 57.0, 28.0, 39.0],
        "sex": ["f", "m", "f", "m", "f", "f", "m", "x", "f", "m"],
        "bmi": [21.0, np.nan, 25.0, 30.0, np.nan, 22.0, 27.0, 24.0, 26.0, 23.0],
        "city": ["a", "b", "c", "a", "b", "c", "a", "b", "c", "a"],
    }
)
y = np.arange(10.0)
NUMERIC = ["age", "bmi"]


def groups_of(preprocess, columns=None, names=None):
    """input_groups of ``preprocess`` fitted on ``X[columns]``."""
    columns = list(X.columns) if columns is None else columns
    preprocess.fit(X[columns], y)
    return input_groups(preprocess, columns if names is None else names)


def test_column_transformer_with_remainder_passthrough():
    ct = make_column_transformer(
        (OneHotEncoder(), ["sex"]), (StandardScaler(), ["age"]), remainder="passthrough"
    )
    assert groups_of(ct) == {
        "age": ["standardscaler__age"],
        "sex": ["onehotencoder__sex_f", "onehotencoder__sex_m", "onehotencoder__sex_x"],
        "bmi": ["remainder__bmi"],
        "city": ["remainder__city"],
    }


def test_dropped_columns_get_empty_groups():
    ct = make_column_transformer(
        (StandardScaler(), ["age"]), ("drop", ["bmi"]), remainder="drop"
    )
    assert groups_of(ct) == {
        "age": ["standardscaler__age"],
        "sex": [],
        "bmi": [],
        "city": [],
    }


def test_result_follows_the_order_of_input_names():
    ct = make_column_transformer((StandardScaler(), ["age"]), remainder="drop")
    names = ["city", "bmi", "sex", "age"]
    groups = groups_of(ct, names=names)
    assert list(groups) == names
    assert groups["age"] == ["standardscaler__age"]


def test_column_selector_and_remainder_transformer():
    ct = make_column_transformer(
        (OneHotEncoder(drop="first"), make_column_selector(dtype_exclude="number")),
        remainder=MinMaxScaler(),
        verbose_feature_names_out=False,
    )
    assert groups_of(ct, ["age", "sex", "city"]) == {
        "age": ["age"],
        "sex": ["sex_m", "sex_x"],
        "city": ["city_b", "city_c"],
    }


@pytest.mark.parametrize(
    "columns",
    [[1, 0], [-3, -2], slice(0, 2), [True, True, False], slice("age", "sex")],
)
def test_column_specs_as_positions_slices_and_masks(columns):
    ct = ColumnTransformer([("enc", OrdinalEncoder(), columns)], remainder="drop")
    groups = groups_of(ct, ["age", "sex", "bmi"])
    expected_order = ["sex", "age"] if columns == [1, 0] else ["age", "sex"]
    assert list(ct.get_feature_names_out()) == [f"enc__{c}" for c in expected_order]
    assert groups == {"age": ["enc__age"], "sex": ["enc__sex"], "bmi": []}


def test_array_input_uses_positions():
    ct = ColumnTransformer([("scale", RobustScaler(), [2, 0])], remainder="passthrough")
    ct.fit(X[[*NUMERIC, "age"]].to_numpy())
    assert input_groups(ct, ["p", "q", "r"]) == {
        "p": ["scale__x0"],
        "q": ["remainder__x1"],
        "r": ["scale__x2"],
    }


INFREQUENT = "infrequent_sklearn"


@pytest.mark.parametrize(
    ("encoder", "sex", "city"),
    [
        (OneHotEncoder(drop="if_binary"), ["f", "m", "x"], ["a", "b", "c"]),
        (OneHotEncoder(drop=["m", "c"]), ["f", "x"], ["a", "b"]),
        (OneHotEncoder(min_frequency=2), ["f", "m", INFREQUENT], ["a", "b", "c"]),
        (OneHotEncoder(max_categories=2, drop="first"), [INFREQUENT], [INFREQUENT]),
        (
            OneHotEncoder(min_frequency=4, handle_unknown="infrequent_if_exist"),
            ["f", "m", INFREQUENT],
            ["a", INFREQUENT],
        ),
    ],
)
def test_one_hot_encoder_drop_and_infrequent(encoder, sex, city):
    assert groups_of(encoder, ["sex", "city"]) == {
        "sex": [f"sex_{category}" for category in sex],
        "city": [f"city_{category}" for category in city],
    }


@pytest.mark.parametrize(
    "transformer",
    [
        StandardScaler(),
        MinMaxScaler(),
        MaxAbsScaler(),
        RobustScaler(),
        PowerTransformer(),
        QuantileTransformer(n_quantiles=5),
        KBinsDiscretizer(
            n_bins=3, encode="ordinal", quantile_method="averaged_inverted_cdf"
        ),
        FunctionTransformer(np.log1p, feature_names_out="one-to-one"),
        FunctionTransformer(feature_names_out="one-to-one"),  # the identity
        SimpleImputer(),
    ],
    ids=lambda t: type(t).__name__,
)  # fmt: skip
def test_columnwise_transformers(transformer):
    transformer.fit(X[NUMERIC].fillna(0.0))
    assert input_groups(transformer, NUMERIC) == {"age": ["age"], "bmi": ["bmi"]}


def test_ordinal_and_binary_target_encoders_are_columnwise():
    assert groups_of(OrdinalEncoder(), ["sex", "city"]) == {
        "sex": ["sex"],
        "city": ["city"],
    }
    encoder = TargetEncoder(cv=2, target_type="continuous")
    assert groups_of(encoder, ["sex", "city"]) == {"sex": ["sex"], "city": ["city"]}


def test_multiclass_target_encoder_gives_a_column_per_class():
    encoder = TargetEncoder(cv=2).fit(X[["sex", "city"]], np.arange(10) % 3)
    assert input_groups(encoder, ["sex", "city"]) == {
        "sex": ["sex_0", "sex_1", "sex_2"],
        "city": ["city_0", "city_1", "city_2"],
    }


def test_simple_imputer_indicator_and_empty_column():
    data = X[NUMERIC].assign(empty=np.nan)
    imputer = SimpleImputer(add_indicator=True).fit(data)
    assert input_groups(imputer, ["age", "bmi", "empty"]) == {
        "age": ["age"],
        "bmi": ["bmi", "missingindicator_bmi"],
        "empty": ["missingindicator_empty"],
    }
    indicator = MissingIndicator().fit(data)
    assert input_groups(indicator, ["age", "bmi", "empty"]) == {
        "age": [],
        "bmi": ["missingindicator_bmi"],
        "empty": ["missingindicator_empty"],
    }


def test_one_hot_discretizer_and_splines_give_blocks_per_input():
    bins = KBinsDiscretizer(n_bins=[2, 3], quantile_method="averaged_inverted_cdf")
    data = X[NUMERIC].fillna(0.0)
    bins.fit(data)
    assert input_groups(bins, NUMERIC) == {
        "age": ["age_0.0", "age_1.0"],
        "bmi": ["bmi_0.0", "bmi_1.0", "bmi_2.0"],
    }
    splines = SplineTransformer(n_knots=3, degree=2).fit(data)
    assert input_groups(splines, NUMERIC) == {
        "age": ["age_sp_0", "age_sp_1", "age_sp_2", "age_sp_3"],
        "bmi": ["bmi_sp_0", "bmi_sp_1", "bmi_sp_2", "bmi_sp_3"],
    }


def test_feature_selection_keeps_its_columns_sources():
    data = X[NUMERIC].assign(flat=1.0)
    selector = VarianceThreshold().fit(data)
    assert input_groups(selector, ["age", "bmi", "flat"]) == {
        "age": ["age"],
        "bmi": ["bmi"],
        "flat": [],
    }


def test_nested_pipelines_and_feature_union():
    numeric = make_pipeline(SimpleImputer(add_indicator=True), StandardScaler())
    union = make_union(
        StandardScaler(), make_pipeline(MinMaxScaler(), "passthrough"), "drop"
    )
    ct = make_column_transformer(
        (numeric, ["bmi"]),
        (union, ["age"]),
        (make_pipeline(OneHotEncoder()), ["city"]),
        remainder="drop",
    )
    pipeline = make_pipeline(ct, MaxAbsScaler())
    names = list(pipeline.fit(X, y).get_feature_names_out())
    assert input_groups(pipeline, list(X.columns)) == {
        "age": names[2:4],
        "sex": [],
        "bmi": names[:2],
        "city": names[4:],
    }
    assert names[:2] == ["pipeline-1__bmi", "pipeline-1__missingindicator_bmi"]
    assert len(names) == 7


def test_mixing_transformer_on_one_input_is_that_inputs():
    ct = make_column_transformer(
        (PolynomialFeatures(2), ["age"]), (PCA(1), ["bmi"]), remainder="drop"
    )
    ct.fit(X[NUMERIC].fillna(0.0))
    groups = input_groups(ct, NUMERIC)
    assert groups == {
        "age": [
            "polynomialfeatures__1",
            "polynomialfeatures__age",
            "polynomialfeatures__age^2",
        ],
        "bmi": ["pca__pca0"],
    }


def test_polynomial_without_interactions_keeps_inputs_apart():
    data = X[NUMERIC].fillna(0.0)
    poly = PolynomialFeatures(1, include_bias=False).fit(data)
    assert input_groups(poly, NUMERIC) == {"age": ["age"], "bmi": ["bmi"]}


@pytest.mark.parametrize(
    ("transformer", "columns"),
    [
        (PolynomialFeatures(2), ["1", "x0 x1"]),
        (PCA(2), ["pca0", "pca1"]),
        (Normalizer(), ["age", "bmi"]),
        (KNNImputer(), ["age", "bmi"]),
    ],
    ids=lambda t: type(t).__name__ if not isinstance(t, list) else "",
)
def test_mixing_transformer_is_an_error_naming_it_and_its_columns(transformer, columns):
    step = make_pipeline(SimpleImputer(), transformer).fit(X[NUMERIC])
    name = type(transformer).__name__
    with pytest.raises(ValueError, match=f"'{name.lower()}' \\({name}\\)") as info:
        input_groups(step, NUMERIC)
    message = str(info.value)
    assert all(repr(column) in message for column in columns)
    assert "['age', 'bmi']" in message
    assert "groups=" in message


def _share_of_row(X):
    X = np.asarray(X, dtype=float)
    return X / X.sum(axis=1, keepdims=True)


@pytest.mark.parametrize(
    "func",
    [
        _share_of_row,  # mixes the columns of a row
        lambda X: np.log1p(X),  # column-wise, but nothing proves it
        np.vectorize(np.log1p),  # not a ufunc
    ],
    ids=["share_of_row", "lambda", "vectorize"],
)
def test_a_function_transformer_is_column_wise_only_if_proven(func):
    """Its names claim one-to-one; only func=None or a ufunc is evidence."""
    step = make_pipeline(
        SimpleImputer(), FunctionTransformer(func, feature_names_out="one-to-one")
    ).fit(X[NUMERIC])
    with pytest.raises(
        ValueError,
        match=r"'functiontransformer' \(FunctionTransformer\).*\['age', 'bmi'\] "
        r"\(a FunctionTransformer counts as column-wise only with func=None or "
        r"a NumPy ufunc",
    ):
        input_groups(step, NUMERIC)
    # Through the public explainer: refused, never silently wrong values.
    model = make_pipeline(step, DecisionTreeRegressor(max_depth=3, random_state=0)).fit(
        X[NUMERIC], y
    )
    with pytest.raises(ValueError, match="counts as column-wise only"):
        TreeExplainer(model, groups="input").fit().explain(X[NUMERIC])


def test_transformer_without_names_out_is_an_error_naming_it():
    ct = make_column_transformer(
        (FunctionTransformer(np.log1p), ["age"]), remainder="drop"
    ).fit(X)
    with pytest.raises(
        ValueError, match="'functiontransformer' \\(FunctionTransformer\\) has none"
    ):
        input_groups(ct, list(X.columns))


def test_input_names_must_be_the_fitted_columns():
    scaler = StandardScaler().fit(X[NUMERIC])
    with pytest.raises(ValueError, match=r"missing \['bmi'\], unknown \['sex'\]"):
        input_groups(scaler, ["age", "sex"])
    scaler.fit(X[NUMERIC].to_numpy())
    with pytest.raises(ValueError, match="fitted on 2 columns; got 3"):
        input_groups(scaler, ["a", "b", "c"])


def test_layout_that_disagrees_with_the_names_is_an_error():
    class Doubling(StandardScaler):
        def get_feature_names_out(self, input_features=None):
            names = super().get_feature_names_out(input_features)
            return np.r_[names, names]

    with pytest.raises(ValueError, match="names 4 output columns, its fitted"):
        groups_of(Doubling(), NUMERIC)


def test_malformed_fitted_attributes_are_a_value_error():
    encoder = OneHotEncoder().fit(X[["sex"]])
    encoder.categories_ = 5  # as a corrupt model file may hold
    with pytest.raises(ValueError, match="OneHotEncoder is malformed"):
        input_groups(encoder, ["sex"])
