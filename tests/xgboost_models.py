"""Small XGBoost models of each family, saved as files, and a UBJSON writer.

For the tests that read XGBoost files (``trees/test_xgboost_files.py``,
``cli/test_fuzz_xgboost.py``). The models are trained on DataFrames with
columns ``f0..f3`` (so the files name their features, as the command needs);
``f3`` holds integer category codes 0..5 and ``f0`` has NaN.
"""

import json
import struct

import numpy as np
import pandas as pd

FEATURES = ["f0", "f1", "f2", "f3"]
FAMILIES = ("regressor", "binary", "multiclass", "categorical", "dart", "ranker")


def training_frame(n: int = 120, seed: int = 0):
    """Rows and a target; ``f3`` is a category code, ``f0`` partly NaN."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=FEATURES)
    X["f3"] = rng.integers(0, 6, n).astype(float)
    X.loc[rng.random(n) < 0.1, "f0"] = np.nan
    y = X["f0"].fillna(1.5) + X["f1"] ** 2 + 0.5 * X["f2"] + X["f3"].isin([1, 4])
    return X, y.to_numpy()


def category_frame(n: int = 120, seed: int = 0):
    """The training frame with ``f2`` and ``f3`` as pandas categories.

    ``f2`` holds text, ``f3`` integers: what a CSV file of it holds too.
    """
    X, y = training_frame(n, seed)
    codes = X["f3"].to_numpy().astype(int)
    X["f2"] = pd.Categorical(np.array(["ab", "c", "de", "f"])[codes % 4])
    X["f3"] = pd.Categorical(codes * 10)
    return X, y


def fit(family: str):
    """A fitted XGBoost Booster of ``family`` (4 rounds, depth 3).

    ``"pandas_categories"`` (not one of :data:`FAMILIES`) is fitted on
    :func:`category_frame`, so that the model holds its category tables.
    """
    import xgboost as xgb

    if family == "pandas_categories":
        X, y = category_frame()
        return (
            xgb.XGBRegressor(
                n_estimators=4, max_depth=3, max_cat_to_onehot=1,
                enable_categorical=True, random_state=0, n_jobs=1,
            )
            .fit(X, y + (X["f2"] == "de"))
            .get_booster()
        )  # fmt: skip
    X, y = training_frame()
    params = {"n_estimators": 4, "max_depth": 3, "random_state": 0, "n_jobs": 1}
    if family == "regressor":
        model = xgb.XGBRegressor(**params).fit(X, y)
    elif family == "binary":
        model = xgb.XGBClassifier(**params).fit(X, y > 1.5)
    elif family == "multiclass":
        model = xgb.XGBClassifier(**params).fit(X, np.digitize(y, [1, 2]))
    elif family == "categorical":
        model = xgb.XGBRegressor(
            enable_categorical=True,
            max_cat_to_onehot=1,
            feature_types=["q", "q", "q", "c"],
            **params,
        ).fit(X, y)
    elif family == "dart":
        model = xgb.XGBRegressor(
            booster="dart", rate_drop=0.5, skip_drop=0.0, **params
        ).fit(X, y)
    elif family == "ranker":
        model = xgb.XGBRanker(objective="rank:pairwise", **params).fit(
            X, np.digitize(y, [1, 2]), qid=np.repeat(np.arange(12), 10)
        )
    else:
        raise ValueError(family)
    return model.get_booster()


def save(folder, family: str) -> dict:
    """The ``family`` model saved as ``<family>.json`` and ``<family>.ubj``."""
    booster = fit(family)
    paths = {}
    for suffix in (".json", ".ubj"):
        paths[suffix] = folder / f"{family}{suffix}"
        booster.save_model(paths[suffix])
    return paths


def write_document(folder, document, suffix: str):
    """``document`` written to ``folder/model<suffix>``, as JSON or UBJSON."""
    path = folder / f"model{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(document))
    else:
        path.write_bytes(encode_ubjson(document))
    return path


# NumPy dtype (kind, itemsize) -> UBJSON marker of a typed array.
_TYPED = {("f", 4): b"d", ("f", 8): b"D", ("i", 4): b"l", ("i", 8): b"L"}
_TYPED.update({("u", 1): b"U", ("i", 1): b"i", ("i", 2): b"I"})


def encode_ubjson(value) -> bytes:
    """``value`` in XGBoost's UBJSON (typed arrays for NumPy arrays)."""
    out = bytearray()
    _encode(value, out)
    return bytes(out)


def _encode(value, out: bytearray) -> None:
    if isinstance(value, dict):
        out += b"{"
        for key, member in value.items():
            raw = key.encode()
            out += b"L" + struct.pack(">q", len(raw)) + raw
            _encode(member, out)
        out += b"}"
    elif isinstance(value, np.ndarray):
        marker = _TYPED[value.dtype.kind, value.dtype.itemsize]
        out += b"[$" + marker + b"#L" + struct.pack(">q", len(value))
        out += value.astype(value.dtype.newbyteorder(">")).tobytes()
    elif isinstance(value, list):
        out += b"[#L" + struct.pack(">q", len(value))
        for member in value:
            _encode(member, out)
    elif isinstance(value, str):
        raw = value.encode()
        out += b"SL" + struct.pack(">q", len(raw)) + raw
    elif isinstance(value, bool) or value is None:
        out += {True: b"T", False: b"F", None: b"Z"}[value]
    elif isinstance(value, int) and -(2**63) <= value < 2**63:
        out += b"L" + struct.pack(">q", value)
    elif isinstance(value, int):  # a high-precision number, as decimal digits
        raw = str(value).encode()
        out += b"HL" + struct.pack(">q", len(raw)) + raw
    else:
        out += b"D" + struct.pack(">d", value)
