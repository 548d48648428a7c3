"""Mutated skops files through ``skshapley explain``: a clean outcome, always.

Small real models of each supported scikit-learn family are saved with
skops, then mutated (seeded): their ``schema.json`` (types, values, shapes,
class names, loaders), their ``.npy`` arrays (values, shapes, dtypes,
truncation) and the archive itself. Every mutant goes through the command in
a process under memory and CPU limits (many mutants per process, each
through ``skshapley.cli.main``); it must end with status 0, or 1 and one
error line, never a crash, a hang or a traceback. When it succeeds, each
row's attributions plus base value must equal what the mutated model itself
predicts (loaded with skops in another limited process), with NaN only
where the model gives NaN.
"""

import copy
import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest
from batch_runner import run_batch
from limited import assert_clean_outcome, run_limited
from sklearn.ensemble import (
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, WhiteKernel
from sklearn.gaussian_process.kernels import ConstantKernel as C
from sklearn.kernel_ridge import KernelRidge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR
from sklearn.tree import DecisionTreeRegressor

sio = pytest.importorskip("skops.io")

# Each model's raw output, as the explainer explains it.
_FAMILIES = {
    "tree": (lambda: DecisionTreeRegressor(max_depth=4), "y", "predict"),
    "forest": (lambda: RandomForestClassifier(3, max_depth=3), "y3", "predict_proba"),
    "extra": (lambda: ExtraTreesRegressor(3, max_depth=3), "y", "predict"),
    "gbr": (lambda: GradientBoostingRegressor(n_estimators=4, max_depth=2), "y",
            "predict"),
    "gbc": (lambda: GradientBoostingClassifier(n_estimators=3, max_depth=2), "y3",
            "decision_function"),
    "hgb": (lambda: HistGradientBoostingClassifier(max_iter=3,
                                                   categorical_features=[2]),
            "y2", "decision_function"),
    "kernel_ridge": (lambda: KernelRidge(kernel="rbf", gamma=0.3), "y", "predict"),
    "svr": (lambda: SVR(gamma=0.3), "y", "predict"),
    "svc": (lambda: SVC(gamma=0.3), "y2", "decision_function"),
    "gpr": (lambda: GaussianProcessRegressor(C(1.0) * RBF([1.0] * 3) + WhiteKernel(),
                                             optimizer=None), "y", "predict"),
    "pipeline": (lambda: make_pipeline(StandardScaler(), KernelRidge(kernel="rbf")),
                 "y", "predict"),
}  # fmt: skip

_JSON_VALUES = ["NaN", "Infinity", "-Infinity", "-1", "0", "1e308", "10000000000",
                '"text"', "null", "true", "[1, 2]", "{}", "0.5"]  # fmt: skip
_ARRAY_VALUES = [np.nan, np.inf, -np.inf, -1, 0, 1e300, 2**40, -(2**40), 3, 255]
_DTYPES = ["float32", "int32", "int8", "bool", "uint64", "complex128", "<U3"]


@pytest.fixture(scope="module")
def saved_models(tmp_path_factory):
    return save_models(tmp_path_factory.mktemp("fuzz"))


def save_models(folder):
    """Each family's model fitted, saved with skops in ``folder``, and rows."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(0.0, 3.0, size=(40, 3)), columns=["a", "b", "c"])
    X["c"] = rng.integers(0, 4, size=40).astype(float)
    targets = {
        "y": X["a"] - X["b"] + rng.normal(scale=0.1, size=40),
        "y2": (X["a"] > 1.5).astype(int),
        "y3": np.digitize(X["a"], [1.0, 2.0]),
    }
    # Rows other than the training rows: at a training point, a kernel
    # model's own distance (by scikit-learn's dot-product formula) is
    # rounding noise, which an absurd gamma from a mutation would amplify.
    rows = pd.DataFrame(rng.uniform(0.0, 3.0, size=(6, 3)), columns=X.columns)
    rows["c"] = [0.0, 1.0, 2.0, 3.0, 1.0, 0.0]
    data = folder / "rows.csv"
    rows.to_csv(data, index=False)
    paths = {}
    for family, (make, target, _) in _FAMILIES.items():
        model = make()
        if "random_state" in model.get_params():
            model.set_params(random_state=0)
        paths[family] = folder / f"{family}.skops"
        sio.dump(model.fit(X, targets[target]), paths[family])
    return folder, data, paths


def _mutant(path, rng) -> bytes:
    """The bytes of one random mutation of the skops file at ``path``."""
    raw = path.read_bytes()
    kind = rng.choice(["schema"] * 5 + ["array"] * 4 + ["truncate", "garbage"])
    if kind == "truncate":
        return raw[: rng.integers(0, len(raw))]
    if kind == "garbage":
        return rng.bytes(int(rng.integers(1, 4096)))
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    if kind == "schema":
        schema = json.loads(members["schema.json"])
        _mutate_schema(schema, rng)
        members["schema.json"] = json.dumps(schema).encode()
    else:
        # In archive order, not by name: names are object ids, order is not.
        arrays = [name for name in members if name.endswith(".npy")]
        name = arrays[rng.integers(len(arrays))]
        members[name] = _mutate_array(members[name], rng)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def _nodes(schema):
    """Every node of a schema: (node, its container, its key there)."""
    found, stack = [], [(schema, None, None)]
    while stack:
        item, container, key = stack.pop()
        if isinstance(item, dict):
            if "__loader__" in item:
                found.append((item, container, key))
            stack.extend((value, item, k) for k, value in item.items())
        elif isinstance(item, list):
            stack.extend((value, item, i) for i, value in enumerate(item))
    return found


def _mutate_schema(schema, rng) -> None:
    nodes = _nodes(schema)
    node, container, key = nodes[rng.integers(len(nodes))]
    other = nodes[rng.integers(len(nodes))][0]
    action = rng.choice(["class", "module", "loader", "value", "drop", "replace"])
    if action == "class":
        node["__class__"] = other["__class__"]
    elif action == "module":
        node["__module__"] = other["__module__"]
    elif action == "loader":
        node["__loader__"] = other["__loader__"]
    elif action == "value" or container is None:
        json_nodes = [n for n, _, _ in nodes if n["__loader__"] == "JsonNode"]
        target = json_nodes[rng.integers(len(json_nodes))]
        target["content"] = str(rng.choice(_JSON_VALUES))
    elif action == "drop" and isinstance(node.get("content"), dict) and node["content"]:
        del node["content"][rng.choice(sorted(node["content"]))]
    else:
        container[key] = copy.deepcopy(other)


def _mutate_array(content: bytes, rng) -> bytes:
    array = np.load(io.BytesIO(content), allow_pickle=False)
    action = rng.choice(["value"] * 3 + ["dtype", "shape", "truncate"])
    if action == "truncate":
        return content[: rng.integers(0, len(content))]
    if action == "dtype" and array.dtype.names is None:
        array = array.astype(rng.choice(_DTYPES))
    elif action == "shape":
        flat = array.reshape(-1)
        array = [flat[:-1], flat, np.concatenate([flat, flat]), array[None]][
            rng.integers(4)
        ]
    elif array.size:
        field = rng.choice(array.dtype.names) if array.dtype.names else None
        target = array[field] if field else array
        flat = target.reshape(-1)
        value = rng.choice(_ARRAY_VALUES)
        with np.errstate(all="ignore"):
            try:
                flat[rng.integers(flat.size)] = value
            except (OverflowError, ValueError):
                flat[rng.integers(flat.size)] = -1 if flat.dtype.kind == "i" else 0
        if field:
            array[field] = flat.reshape(target.shape)
        else:
            array = flat.reshape(target.shape)
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def write_mutants(folder, paths, n_per_family, seed):
    """Mutants of each family's file: {path: the raw output's method}."""
    rng = np.random.default_rng(seed)
    method_of = {}
    for family, path in paths.items():
        for i in range(n_per_family):
            mutant = folder / f"{family}-{seed}-{i}.skops"
            mutant.write_bytes(_mutant(path, rng))
            method_of[str(mutant)] = _FAMILIES[family][2]
    return method_of


def _fuzz(saved_models, n_per_family, seed):
    folder, data, paths = saved_models
    method_of = write_mutants(folder, paths, n_per_family, seed)
    mutants = list(method_of)
    explained = run_batch("explain", mutants, data, folder)
    problems = []
    for path, record in zip(mutants, explained, strict=True):
        if "crash" in record:
            problems.append(f"{path}: the command crashed ({record['crash']})")
            continue
        try:
            assert_clean_outcome(record["status"], record["stderr"])
        except AssertionError as exc:
            problems.append(f"{path}: {exc}")
    accepted = [
        (p, r) for p, r in zip(mutants, explained, strict=True) if r.get("status") == 0
    ]
    predicted = run_batch(
        "skops_output", [(p, method_of[p]) for p, _ in accepted], data, folder
    )
    model_failures = 0
    for (path, record), theirs in zip(accepted, predicted, strict=True):
        sums = np.asarray(record["sums"], dtype=np.float64)
        scale = np.asarray(record["largest"], dtype=np.float64)
        if "prediction" not in theirs:  # the model itself crashes or refuses
            model_failures += 1
            if not np.all(np.isfinite(sums)):
                problems.append(f"{path}: non-finite attributions: {sums}")
            continue
        raw = np.asarray(theirs["prediction"], dtype=np.float64)
        if raw.shape != sums.shape:
            problems.append(f"{path}: outputs {sums.shape} but model {raw.shape}")
            continue
        # Sums of terms in another order than the model's: their rounding,
        # relative to the largest term (a huge leaf value from a mutation
        # enters every row's attributions and cancels out), with margin.
        with np.errstate(invalid="ignore"):
            close = np.abs(sums - raw) <= 1e-9 * (1 + np.abs(raw) + scale)
        if not np.all(close | (sums == raw) | (np.isnan(raw) & np.isnan(sums))):
            problems.append(f"{path}: attributions sum to {sums}, model gives {raw}")
    return len(mutants), len(accepted), model_failures, problems


def test_mutated_skops_files_give_the_models_numbers_or_one_error(saved_models):
    n, accepted, model_failures, problems = _fuzz(saved_models, 12, seed=0)
    print(f"{n} mutants: {accepted} explained, {n - accepted} refused; the "
          f"model itself failed on {model_failures} explained ones")  # fmt: skip
    assert not problems, "\n".join(problems[:10])
    assert 0 < accepted < n  # both outcomes are exercised


@pytest.mark.slow
def test_more_mutated_skops_files(saved_models):
    n, accepted, model_failures, problems = _fuzz(saved_models, 60, seed=1)
    print(f"{n} mutants: {accepted} explained, {n - accepted} refused; the "
          f"model itself failed on {model_failures} explained ones")  # fmt: skip
    assert not problems, "\n".join(problems[:10])


def test_kernel_parameters_through_the_command(saved_models, tmp_path):
    # A NaN gamma, as a file delivers it: one error line naming it.
    _, data, _ = saved_models
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(10, 3))
    model = KernelRidge(kernel="rbf", gamma=0.5).fit(X, X[:, 0])
    model.gamma = float("nan")
    path = tmp_path / "nan_gamma.skops"
    sio.dump(model, path)
    status, _, err = run_limited(
        ["explain", "--model", path, "--data", data, "--out", tmp_path / "o.csv"],
        cwd=tmp_path,
    )
    assert status == 1, err
    assert err.startswith("skshapley: error: "), err
    assert "gamma" in err, err
