"""ProductKernelExplainer on pipelines and on sparse data."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.compose import make_column_transformer
from sklearn.datasets import load_diabetes
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVC, SVR

from skshapley import ProductKernelExplainer


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    return X.iloc[:120], y.iloc[:120]


def test_scaled_svr_is_explained_per_original_column(diabetes):
    X, y = diabetes
    pipeline = make_pipeline(StandardScaler(), SVR(C=50.0)).fit(X, y)
    explainer = ProductKernelExplainer(pipeline).fit()
    phi = explainer.explain(X.iloc[:6])

    scaled = pipeline[0].transform(X)
    alone = ProductKernelExplainer(pipeline[-1]).fit().explain(scaled[:6])
    assert list(phi.columns) == list(X.columns)
    np.testing.assert_array_equal(phi.to_numpy(), alone.to_numpy())
    total = phi.sum(axis=1) + explainer.expected_value_
    np.testing.assert_allclose(total, pipeline.predict(X.iloc[:6]), rtol=1e-12)
    np.testing.assert_allclose(
        explainer.raw_predict(X.iloc[:6]), pipeline.predict(X.iloc[:6]), rtol=1e-12
    )
    assert list(explainer.feature_names_in_) == list(X.columns)


def test_one_hot_columns_grouped_into_their_input(diabetes):
    X, y = diabetes
    X = X.assign(sex=np.where(X["sex"] > 0, "m", "f"))
    encode = make_column_transformer(
        (OneHotEncoder(), ["sex"]), remainder=StandardScaler()
    )
    pipeline = make_pipeline(encode, SVR(C=50.0)).fit(X, y)
    one_hot = ["onehotencoder__sex_f", "onehotencoder__sex_m"]
    explainer = ProductKernelExplainer(pipeline, groups={"sex": one_hot}).fit()
    rows = X.iloc[10:16]
    phi = explainer.explain(rows)

    names = list(encode.get_feature_names_out())
    positions = {"sex": [names.index(name) for name in one_hot]}
    alone = ProductKernelExplainer(pipeline[-1], groups=positions).fit()
    expected = alone.explain(encode.transform(rows))
    assert list(phi.columns) == ["sex"] + [n for n in names if n not in one_hot]
    np.testing.assert_array_equal(phi.to_numpy(), expected.to_numpy())
    assert phi.index.equals(rows.index)
    total = phi.sum(axis=1) + explainer.expected_value_
    np.testing.assert_allclose(total, pipeline.predict(rows), rtol=1e-12)


def test_pipeline_errors(diabetes):
    X, y = diabetes
    with pytest.raises(NotFittedError):
        ProductKernelExplainer(make_pipeline(StandardScaler(), SVR())).fit()
    linear = make_pipeline(StandardScaler(), Ridge()).fit(X, y)
    with pytest.raises(TypeError, match="Ridge"):
        ProductKernelExplainer(linear).fit()

    explainer = ProductKernelExplainer(
        make_pipeline(StandardScaler(), SVR()).fit(X, y)
    ).fit()
    with_nan = X.iloc[:3].copy()
    with_nan.iloc[1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        explainer.explain(with_nan)
    with pytest.raises(ValueError, match="bmi"):
        explainer.explain(X.iloc[:3].drop(columns="bmi"))


def test_pipeline_input_is_not_modified(diabetes):
    X, y = diabetes
    explainer = ProductKernelExplainer(
        make_pipeline(StandardScaler(), SVR()).fit(X, y)
    ).fit()
    rows = X.iloc[:5].copy()
    explainer.explain(rows)
    pd.testing.assert_frame_equal(rows, X.iloc[:5])


def test_models_fitted_on_sparse_data_explain_sparse_rows():
    rng = np.random.default_rng(0)
    X = rng.random((60, 8))
    X[X < 0.6] = 0.0
    y = X.sum(axis=1)
    sparse = sp.csr_matrix(X)
    for model, output in [
        (SVR().fit(sparse, y), "predict"),
        (SVC(decision_function_shape="ovo").fit(sparse, np.digitize(y, [1.5, 2.5])),
         "decision_function"),
    ]:  # fmt: skip
        explainer = ProductKernelExplainer(model).fit()
        np.testing.assert_array_equal(
            explainer.explain(sparse[:5]).to_numpy(),
            explainer.explain(X[:5]).to_numpy(),
        )
        np.testing.assert_allclose(
            explainer.raw_predict(sparse[:5]),
            getattr(model, output)(sparse[:5]),
            rtol=1e-12,
            atol=1e-12,
        )


def test_one_step_pipeline_is_its_model(diabetes):
    X, y = diabetes
    pipeline = make_pipeline(SVR(C=50.0)).fit(X, y)
    phi = ProductKernelExplainer(pipeline).fit().explain(X.iloc[:4])
    alone = ProductKernelExplainer(pipeline[-1]).fit().explain(X.iloc[:4])
    pd.testing.assert_frame_equal(phi, alone)


def test_pipeline_input_features(diabetes):
    X, y = diabetes
    pipeline = make_pipeline(StandardScaler(), SVR()).fit(X, y)
    explainer = ProductKernelExplainer(pipeline).fit()
    assert explainer.n_features_in_ == pipeline.n_features_in_ == X.shape[1]
    assert list(explainer.feature_names_in_) == list(pipeline.feature_names_in_)


def test_malformed_pipelines_from_files_give_value_errors(diabetes):
    # What a skops file can deliver: a step whose fitted state has the wrong
    # type, or steps that are not (name, estimator) pairs.
    X, y = diabetes
    pipeline = make_pipeline(StandardScaler(), SVR()).fit(X, y)
    pipeline[0].scale_ = "not an array"
    explainer = ProductKernelExplainer(pipeline).fit()
    with pytest.raises(ValueError, match="preprocessing failed on X"):
        explainer.explain(X.iloc[:2])

    pipeline = make_pipeline(StandardScaler(), SVR()).fit(X, y)
    pipeline.steps = [("svr", pipeline[-1]), "junk"]
    with pytest.raises(ValueError, match="malformed"):
        ProductKernelExplainer(pipeline).fit()
