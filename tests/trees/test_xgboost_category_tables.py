"""XGBoost's category tables (``cats``) as the file holds them, or refused.

XGBoost recodes a prediction frame's categories by value, finding each in
the model's table by binary search through ``sorted_idx`` within the
feature's ``feature_segments``. A table edited consistently (categories
renamed and reordered, the index with them) is explained as XGBoost
predicts it; one whose index does not fit its categories (unsorted,
repeated, miscounted) is refused, since XGBoost would look values up
somewhere else than skshapley.
"""

import copy
import json

import numpy as np
import pandas as pd
import pytest

from skshapley import TreeExplainer
from skshapley.trees._readers.xgboost.file import read_xgboost_model

xgb = pytest.importorskip("xgboost")


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=300)})
    X["colour"] = pd.Categorical(rng.choice(["blue", "green", "red"], 300))
    X["size"] = pd.Categorical(rng.choice([3, 5, 8], 300))
    y = X["x"] + 2.0 * (X["colour"] == "red") - (X["size"] == 5)
    model = xgb.XGBRegressor(
        n_estimators=5, max_depth=3, enable_categorical=True, max_cat_to_onehot=1
    ).fit(X, y)
    return json.loads(bytes(model.get_booster().save_raw("json"))), X


def _cats(document):
    return document["learner"]["gradient_booster"]["model"]["cats"]


def _set_strings(encoding, words):
    data = "".join(words).encode()
    encoding["values"] = list(data)
    encoding["offsets"] = np.concatenate([[0], np.cumsum([len(w) for w in words])])
    encoding["offsets"] = encoding["offsets"].tolist()


def _margin_and_ours(document, rows, tmp_path):
    path = tmp_path / "model.json"
    path.write_text(json.dumps(document))
    booster = xgb.Booster(model_file=str(path))
    margin = booster.predict(
        xgb.DMatrix(rows, enable_categorical=True), output_margin=True
    )
    ours = TreeExplainer(read_xgboost_model(path)).fit()
    return margin, ours


def test_a_consistently_edited_table_is_explained_as_xgboost_predicts(fitted, tmp_path):
    document, X = fitted
    document = copy.deepcopy(document)
    cats = _cats(document)
    # "blue" and "red" exchange their codes: the trees now send "blue" where
    # "red" went. The index still sorts the new table ("red" < ...): fit it.
    _set_strings(cats["enc"][1], ["red", "green", "blue"])
    cats["sorted_idx"][cats["feature_segments"][1] : cats["feature_segments"][2]] = [
        2,
        1,
        0,
    ]
    rows = X.iloc[:40]
    margin, ours = _margin_and_ours(document, rows, tmp_path)
    unedited, _ = _margin_and_ours(fitted[0], rows, tmp_path)
    assert np.abs(margin - unedited).max() > 1.0  # the edit changed predictions
    np.testing.assert_allclose(ours.raw_predict(rows), margin, rtol=0, atol=1e-5)
    phi = ours.explain(rows)
    np.testing.assert_allclose(
        phi.sum(axis=1) + ours.expected_value_, margin, rtol=0, atol=1e-5
    )


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (  # the categories reordered, the index left as it was
            lambda c: _set_strings(c["enc"][1], ["red", "green", "blue"]),
            r"sorted_idx does not sort feature 1's categories",
        ),
        (  # a category twice
            lambda c: _set_strings(c["enc"][1], ["blue", "blue", "red"]),
            r"sorted_idx does not sort feature 1's categories, or they repeat",
        ),
        (
            lambda c: c["sorted_idx"].__setitem__(0, 2),
            r"sorted_idx is not an order of feature 1's categories",
        ),
        (
            lambda c: c["feature_segments"].__setitem__(2, 4),
            r"feature_segments must count each feature's categories",
        ),
        (
            lambda c: c["enc"][2].__setitem__("values", [8, 5, 3]),
            r"sorted_idx does not sort feature 2's categories",
        ),
    ],
)
def test_a_table_xgboost_would_search_elsewhere_is_refused(
    fitted, tmp_path, edit, match
):
    document = copy.deepcopy(fitted[0])
    edit(_cats(document))
    path = tmp_path / "model.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError, match=f"not a valid XGBoost model: .*{match}"):
        read_xgboost_model(path)
