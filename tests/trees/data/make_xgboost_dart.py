"""Write the DART models of ``xgboost_dart/`` with the XGBoost that runs this.

XGBoost has written DART models three ways: up to 3.2 as the booster
``"dart"`` (trees under ``gradient_booster.gbtree.model``, the tree weights
``weight_drop`` beside them), in 3.3 as a ``"gbtree"`` booster with
``weight_drop`` beside ``model``, and from 3.4 as a ``"gbtree"`` booster with
``weight_drop`` inside ``model``. An XGBoost reads the older layouts, not
always the newer (3.2 reads a 3.4 DART model as if it had no weights), so
each file comes with what the release that wrote it predicts: its margins and
``pred_contribs`` on the rows of :func:`rows`, in ``<name>.expected.json``.

Run once per release, in an environment holding only that release::

    python tests/trees/data/make_xgboost_dart.py   # e.g. with xgboost-cpu==2.1.4

The files are small (depth 2, a few rounds) and plain JSON; the tests
re-encode them as UBJSON themselves.
"""

import json
from pathlib import Path

import numpy as np
import xgboost as xgb

FOLDER = Path(__file__).parent / "xgboost_dart"


def rows(n=40, seed=0):
    """Three features, NaN in feature 0 (missing: its default branch)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)).astype(np.float32)
    X[rng.random(n) < 0.15, 0] = np.nan
    return X


def target(X):
    return np.nan_to_num(X[:, 0], nan=1.5) + X[:, 1] ** 2 + 0.5 * X[:, 2]


def main():
    version = xgb.__version__
    X = rows()
    y = target(X)
    # booster="dart" is the only DART spelling every release accepts (3.3
    # and later map it to the tree booster with these dropout parameters).
    params = {
        "booster": "dart",
        "rate_drop": 0.5,
        "skip_drop": 0.0,
        "max_depth": 2,
        "nthread": 1,
        "seed": 0,
    }
    models = {
        "regressor": ({"objective": "reg:squarederror"}, y, 4),
        "multiclass": (
            {"objective": "multi:softprob", "num_class": 3},
            np.digitize(y, [0.5, 2.0]),
            3,
        ),
    }
    FOLDER.mkdir(exist_ok=True)
    for name, (objective, label, rounds) in models.items():
        data = xgb.DMatrix(X, label=label)
        booster = xgb.train({**params, **objective}, data, num_boost_round=rounds)
        stem = f"xgboost-{version}-{name}"
        booster.save_model(FOLDER / f"{stem}.json")
        test = xgb.DMatrix(X)
        expected = {
            "xgboost": version,
            "rows": np.where(np.isnan(X), None, X).tolist(),
            "margin": booster.predict(test, output_margin=True).tolist(),
            "contribs": booster.predict(test, pred_contribs=True).tolist(),
        }
        (FOLDER / f"{stem}.expected.json").write_text(json.dumps(expected))


if __name__ == "__main__":
    main()
