"""Mutated LightGBM text models through ``skshapley explain``.

Small real models of each kind (regression with each missing type,
binary, multiclass, categorical splits, random-forest mode, DART) are saved
as text and mutated, seeded: structural mutations (lines and keys dropped or
repeated, counts and arrays changed, child indices making cycles or pointing
out of range, features out of range, bad decision-type bits, broken category
bitsets, huge ``max_feature_idx`` / ``num_class``, truncated files, random
bytes) and numeric ones (thresholds, leaf values, counts; NaN, inf, 1e308).

Every mutated file goes through the command, in one process under memory
and CPU limits; each must give status 0 or one clean error line. When it
succeeds, the attributions plus the base value must equal LightGBM's own
``predict(raw_score=True)`` of the same file, computed in other limited
processes (LightGBM's loader and its tree walk may crash or loop on such
files: such a file is skipped and the next process goes on after it); when
LightGBM cannot read the file, a success must at least be finite and equal
to the explainer's own raw prediction (efficiency).
"""

from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from batch_runner import run_batch
from limited import assert_clean_outcome

lgb = pytest.importorskip("lightgbm")

# Both sides add the same leaf values; the quadrature sum differs from
# LightGBM's by rounding, ~1e-15 of the scale of the leaf values (the sum of
# their magnitudes: a row can be explained by terms of a leaf it does not
# reach, as large as that leaf, which cancel).
RTOL = 1e-9

N_FEATURES = 4

BASE = {"n_estimators": 3, "num_leaves": 6, "min_child_samples": 5, "verbose": -1}
KINDS = {
    "regression_nan": {},
    "regression_zero": {"zero_as_missing": True},
    "regression_none": {"use_missing": False},
    "binary": {"objective": "binary"},
    "multiclass": {"objective": "multiclass", "num_class": 3},
    "categorical": {"min_data_per_group": 5, "cat_smooth": 1.0},
    "random_forest": {"boosting_type": "rf", "subsample": 0.7, "subsample_freq": 1},
    "dart": {"boosting_type": "dart", "drop_rate": 0.5},
}


def training_data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_FEATURES))
    X[:, 1] = rng.integers(0, 6, n)
    X[rng.random(n) < 0.1, 0] = np.nan
    X[rng.random(n) < 0.3, 2] = 0.0
    y = np.nan_to_num(X[:, 0]) + np.isin(X[:, 1], [2, 5]) + X[:, 2] + 0.3 * X[:, 3]
    return X, y


@cache
def model_text(kind) -> str:
    X, y = training_data()
    params = {**BASE, **KINDS[kind]}
    if kind == "binary":
        y = y > 0.5
    elif kind == "multiclass":
        y = np.digitize(y, [0.0, 1.0])
    categorical = [1] if kind == "categorical" else "auto"
    model = (
        lgb.LGBMClassifier if kind in ("binary", "multiclass") else lgb.LGBMRegressor
    )
    fitted = model(**params).fit(X, y, categorical_feature=categorical)
    return fitted.booster_.model_to_string()


def rows() -> pd.DataFrame:
    """Training rows plus NaN, zeros, tiny values and category codes."""
    X = training_data(12, seed=1)[0]
    X[:3, :] = np.nan
    X[3:6, 2] = [0.0, -0.0, 1e-36]
    X[6:9, 1] = [-1, 7, 2.5]
    return pd.DataFrame(X, columns=[f"c{j}" for j in range(N_FEATURES)])


# ---------------------------------------------------------------------------
# Mutations: each takes the model's lines and a generator, returns the text.

NUMBERS = ["nan", "inf", "-inf", "1e308", "-1e308", "0", "-0", "1e-36", "1e999",
           "-1", "2147483648", "abc", "", "1.5", "7"]  # fmt: skip
TREE_KEYS = ("num_leaves", "num_cat", "split_feature", "threshold",
             "decision_type", "left_child", "right_child", "leaf_value",
             "leaf_count", "internal_count", "cat_boundaries", "cat_threshold",
             "is_linear", "shrinkage")  # fmt: skip


def _lines_with(lines, prefix):
    return [i for i, line in enumerate(lines) if line.startswith(prefix)]


def _pick(lines, rng, prefixes):
    """A line starting with one of the prefixes (or any line)."""
    candidates = [i for p in prefixes for i in _lines_with(lines, p)]
    return int(rng.choice(candidates)) if candidates else int(rng.integers(len(lines)))


def _set_token(lines, rng, prefixes, values):
    """One value of an array line replaced."""
    i = _pick(lines, rng, prefixes)
    key, _, value = lines[i].partition("=")
    tokens = value.split(" ")
    tokens[int(rng.integers(len(tokens)))] = str(rng.choice(values))
    lines[i] = f"{key}={' '.join(tokens)}"
    return "\n".join(lines)


def drop_line(lines, rng):
    del lines[int(rng.integers(len(lines)))]
    return "\n".join(lines)


def drop_key(lines, rng):
    del lines[_pick(lines, rng, [f"{key}=" for key in TREE_KEYS])]
    return "\n".join(lines)


def repeat_line(lines, rng):
    i = int(rng.integers(len(lines)))
    lines.insert(i, lines[i])
    return "\n".join(lines)


def truncate_array(lines, rng):
    i = _pick(lines, rng, [f"{key}=" for key in TREE_KEYS])
    lines[i] = lines[i].rsplit(" ", 1)[0] if " " in lines[i] else lines[i] + " 1"
    return "\n".join(lines)


def change_count(lines, rng):
    return _set_token(lines, rng, ["num_leaves=", "num_cat="],
                      ["0", "1", "2", "5", "7", "-1", "1000000000", "x"])  # fmt: skip


def child_cycle(lines, rng):
    # Children pointing at the root, themselves, an ancestor or outside.
    values = ["0", "1", "2", "3", "4", "-1", "-6", "-7", "5", "99"]
    return _set_token(lines, rng, ["left_child=", "right_child="], values)


def swap_children(lines, rng):
    i = _pick(lines, rng, ["left_child="])
    tokens = lines[i].partition("=")[2].split(" ")
    if len(tokens) > 1:
        a, b = rng.choice(len(tokens), 2, replace=False)
        tokens[a], tokens[b] = tokens[b], tokens[a]
    lines[i] = "left_child=" + " ".join(tokens)
    return "\n".join(lines)


def feature_out_of_range(lines, rng):
    return _set_token(lines, rng, ["split_feature="],
                      ["4", "-1", "1000000", "3", "0", "2147483648"])  # fmt: skip


def decision_bits(lines, rng):
    values = ["1", "3", "12", "13", "15", "16", "-1", "127", "128", "8"]
    return _set_token(lines, rng, ["decision_type="], values)


def categories(lines, rng):
    return _set_token(lines, rng, ["cat_boundaries=", "cat_threshold="],
                      ["0", "1", "2", "-1", "4294967295", "4294967296", "9",
                       "1000000000"])  # fmt: skip


def header_sizes(lines, rng):
    return _set_token(lines, rng, ["max_feature_idx=", "num_class=",
                                   "num_tree_per_iteration="],
                      ["1000000000", "999999", "2147483647", "0", "-1", "2",
                       "100001", "3"])  # fmt: skip


def header_names(lines, rng):
    return _set_token(lines, rng, ["feature_names=", "feature_infos=", "tree_sizes=",
                                   "objective="],
                      ["none", "[0:1]", "1:2:3", "Column_9", "", "x=y",
                       "sigmoid:nan", "-5"])  # fmt: skip


def numbers(lines, rng):
    return _set_token(lines, rng, ["threshold=", "leaf_value=", "leaf_count=",
                                   "internal_count=", "internal_value=",
                                   "shrinkage="], NUMBERS)  # fmt: skip


def truncate_file(lines, rng):
    text = "\n".join(lines)
    return text[: int(rng.integers(len(text)))]


def random_bytes(lines, rng):
    text = "\n".join(lines).encode()
    start = int(rng.integers(len(text)))
    noise = rng.integers(0, 256, int(rng.integers(1, 40)), dtype=np.uint8)
    return text[:start] + noise.tobytes() + text[start:]


def pandas_categorical(lines, rng):
    value = rng.choice(['[["a", "b"]]', "[" * 100_000, '{"a": 1}', "[[[1]]]", "nul"])
    return "\n".join(lines) + f"\npandas_categorical:{value}\n"


MUTATIONS = [
    drop_line, drop_key, repeat_line, truncate_array, change_count, child_cycle,
    swap_children, feature_out_of_range, decision_bits, categories, header_sizes,
    header_names, numbers, truncate_file, random_bytes, pandas_categorical,
]  # fmt: skip


def write_mutations(folder: Path, n: int, seed: int) -> list[Path]:
    """``n`` mutated model files (after unmutated ones of each kind)."""
    rng = np.random.default_rng(seed)
    files = []
    kinds = list(KINDS)
    for i in range(n + len(kinds)):
        kind = kinds[i % len(kinds)]
        text = model_text(kind)
        if i % 2:
            # Without tree_sizes, LightGBM reads the trees line by line: a
            # mutation that changes a line's length reaches the tree checks.
            text = "\n".join(
                line for line in text.split("\n") if not line.startswith("tree_sizes=")
            )
        if i >= len(kinds):
            mutation = MUTATIONS[int(rng.integers(len(MUTATIONS)))]
            text = mutation(text.split("\n"), rng)
        files.append(folder / f"model{i}.txt")
        files[-1].write_bytes(text if isinstance(text, bytes) else text.encode())
    return files


def run_fuzz(folder: Path, n: int, seed: int) -> dict:
    data = folder / "rows.csv"
    rows().to_csv(data, index=False)
    files = write_mutations(folder, n, seed)
    records = run_batch("explain", files, data, folder)
    for record in records:
        assert "crash" not in record, record
        assert_clean_outcome(record["status"], record["stderr"])

    accepted = [i for i, record in enumerate(records) if record["status"] == 0]
    predictions = run_batch(
        "lightgbm_raw_score", [files[i] for i in accepted], data, folder
    )
    counts = {"files": len(files), "accepted": len(accepted), "checked": 0}
    for i, expected in zip(accepted, predictions, strict=True):
        total = np.array(records[i]["sums"])
        raw = np.array(records[i]["raw"])
        assert np.isfinite(total).all(), files[i]
        scale = max(1.0, records[i]["total_value"])
        # Efficiency: the attributions add up to the explainer's prediction.
        np.testing.assert_allclose(
            total, raw, rtol=0, atol=RTOL * scale, err_msg=str(files[i])
        )
        if "prediction" in expected:
            counts["checked"] += 1
            np.testing.assert_allclose(
                total, np.array(expected["prediction"]), rtol=0, atol=RTOL * scale,
                err_msg=str(files[i]),
            )  # fmt: skip
    counts["lightgbm_crashes"] = sum("crash" in p for p in predictions)
    return counts


def test_unmutated_files_match_lightgbm(tmp_path):
    counts = run_fuzz(tmp_path, 0, seed=0)
    assert counts["accepted"] == counts["checked"] == len(KINDS)


def test_mutated_files(tmp_path):
    counts = run_fuzz(tmp_path, 3000, seed=1)
    # The mutations must exercise both sides: accepted (and checked against
    # LightGBM) and refused files.
    assert counts["checked"] >= 400
    assert counts["accepted"] <= counts["files"] - 1500
    print(counts)


@pytest.mark.slow
def test_many_mutated_files(tmp_path):
    counts = run_fuzz(tmp_path, 10_000, seed=2)
    assert counts["checked"] >= 1500
    print(counts)
