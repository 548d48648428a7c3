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

import json
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from limited import assert_clean_outcome, run_limited

lgb = pytest.importorskip("lightgbm")

# Both sides add the same leaf values; the quadrature sum differs from
# LightGBM's by rounding, ~1e-15 of the scale of the leaf values (the sum of
# their magnitudes: a row can be explained by terms of a leaf it does not
# reach, as large as that leaf, which cancel).
RTOL = 1e-9

N_FEATURES = 4

# Runs every file through skshapley.cli.main; prints one JSON record per file.
EXPLAIN = r"""
import contextlib, io, json, sys, traceback
import numpy as np
import pandas as pd
from skshapley import TreeExplainer
from skshapley.cli import main
from skshapley.trees._lightgbm_text import read_model_file

manifest = json.load(open(sys.argv[1]))
data = pd.read_csv(manifest["data"])
for model, out in manifest["files"]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            status = main(["explain", "--model", model, "--data", manifest["data"],
                           "--out", out, "-q"])
        except BaseException:
            traceback.print_exc()
            status = 3
    record = {"status": status, "stderr": err.getvalue()}
    if status == 0:
        table = pd.read_csv(out, index_col=0)
        n_outputs = sum(c.endswith("base_value") for c in table.columns)
        values = table.to_numpy().reshape(len(table), n_outputs, -1)
        record["total"] = values.sum(axis=2).tolist()
        explainer = TreeExplainer(read_model_file(model)).fit()
        raw = np.reshape(explainer.raw_predict(data), (len(data), -1))
        record["raw"] = raw.tolist()
        # Sums of leaf values are exact to rounding of the largest ones.
        record["scale"] = float(abs(explainer.ensemble_.value).sum())
    print(json.dumps(record), flush=True)
"""

# LightGBM's own predictions of the files from argv[2] on, one JSON line per
# file after a line naming it; each file gets a few CPU seconds (a cycle in
# the trees makes LightGBM's walk loop forever). In random-forest mode the
# raw output is the average of the iterations, raw_score their sum.
ORACLE = r"""
import json, os, resource, sys
import numpy as np
import lightgbm

# LightGBM's own messages (on stdout and stderr, not always UTF-8) are
# dropped; the records go to a copy of stdout.
records = os.fdopen(os.dup(1), "w")
devnull = os.open(os.devnull, os.O_WRONLY)
os.dup2(devnull, 1)
os.dup2(devnull, 2)
manifest = json.load(open(sys.argv[1]))
X = np.genfromtxt(manifest["data"], delimiter=",", skip_header=1)
hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
for i in range(int(sys.argv[2]), len(manifest["files"])):
    print(json.dumps({"start": i}), file=records, flush=True)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = int(usage.ru_utime + usage.ru_stime)
    resource.setrlimit(resource.RLIMIT_CPU, (min(used + 5, hard), hard))
    try:
        booster = lightgbm.Booster(
            model_file=manifest["files"][i][0],
            params={"num_threads": 1, "verbose": -1},
        )
        raw = booster.predict(X, raw_score=True, num_threads=1)
        with open(manifest["files"][i][0], "rb") as file:
            if b"\naverage_output\n" in file.read():
                raw = raw / booster.current_iteration()
        record = {"raw": np.reshape(raw, (len(X), -1)).tolist()}
    except Exception as exc:  # LightGBMError, or the pandas_categorical JSON
        record = {"error": type(exc).__name__}
    print(json.dumps(record), file=records, flush=True)
"""

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


def write_mutations(folder: Path, n: int, seed: int) -> list:
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
        path = folder / f"model{i}.txt"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        files.append((str(path), str(folder / f"phi{i}.csv")))
    return files


def lightgbm_predictions(manifest: Path, n_files: int, folder: Path) -> dict:
    """File index -> LightGBM's raw predictions, "error" or "crash"."""
    results, start = {}, 0
    while start < n_files:
        _, out, _ = run_limited([manifest, start], cwd=folder, code=ORACLE)
        current = None
        for line in out.splitlines():
            record = json.loads(line)
            if "start" in record:
                current = record["start"]
            else:
                results[current] = record.get("raw", record.get("error"))
                current = None
        if current is None:  # every file done
            break
        results[current] = "crash"
        start = current + 1
    return results


def run_fuzz(folder: Path, n: int, seed: int) -> dict:
    data = folder / "rows.csv"
    rows().to_csv(data, index=False)
    files = write_mutations(folder, n, seed)
    manifest = folder / "manifest.json"
    manifest.write_text(json.dumps({"data": str(data), "files": files}))
    status, out, err = run_limited([manifest], cwd=folder, code=EXPLAIN)
    assert status == 0, err[-2000:]
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) == len(files)
    for record in records:
        assert_clean_outcome(record["status"], record["stderr"])

    accepted = [i for i, record in enumerate(records) if record["status"] == 0]
    oracle_manifest = folder / "accepted.json"
    oracle_manifest.write_text(
        json.dumps({"data": str(data), "files": [files[i] for i in accepted]})
    )
    predictions = lightgbm_predictions(oracle_manifest, len(accepted), folder)
    counts = {"files": len(files), "accepted": len(accepted), "checked": 0}
    for k, i in enumerate(accepted):
        total = np.array(records[i]["total"])
        raw = np.array(records[i]["raw"])
        assert np.isfinite(total).all(), files[i][0]
        scale = max(1.0, records[i]["scale"])
        # Efficiency: the attributions add up to the explainer's prediction.
        np.testing.assert_allclose(
            total, raw, rtol=0, atol=RTOL * scale, err_msg=files[i][0]
        )
        expected = predictions.get(k)
        if isinstance(expected, list):
            counts["checked"] += 1
            np.testing.assert_allclose(
                total, np.array(expected), rtol=0, atol=RTOL * scale,
                err_msg=files[i][0],
            )  # fmt: skip
    counts["lightgbm_crashes"] = sum(v == "crash" for v in predictions.values())
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
