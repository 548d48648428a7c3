"""Mutated XGBoost model files through ``skshapley explain``: no crash, no wrong number.

From a small model of each family (regressor, binary and multiclass
classifiers, categorical splits, DART, ranker), saved as JSON and as UBJSON,
a seeded generator makes mutated files: structural (a key deleted, a value
of another type, arrays truncated or extended, a child pointing to an
ancestor, to itself, to another node's child or out of range, split
features, outputs, categories and counts out of range, huge ``num_feature``
/ ``num_class``, another objective or booster), numeric (leaf values,
thresholds, hessians, base score, DART weights set to NaN, ±inf, 1e308,
...) and byte-level (truncated, flipped bytes, random bytes, deep nesting).

Each file is explained by the command's ``main`` in a process under memory
and CPU limits (many files per process, for speed). The outcome must be
status 0, or 1 with one error line: never a crash, a hang or a traceback.
On success the attributions plus the base value must sum to the parsed
model's own prediction (efficiency), and that prediction must equal
XGBoost's ``inplace_predict(predict_type="margin")`` of the same file,
computed in another limited process because XGBoost's native loader may
crash on it; where XGBoost gives a number, ours must not be NaN.
"""

import copy
import itertools
import json

import numpy as np
import pytest
from batch_runner import run_batch
from limited import assert_clean_outcome
from xgboost_models import (
    FAMILIES,
    category_frame,
    encode_ubjson,
    save,
    training_frame,
)

from skshapley.trees._readers.xgboost.ubjson import decode_ubjson

pytest.importorskip("xgboost")

# Rounds of mutations (each: every operator once per base file, 27 files
# per base file). The slow run adds rounds from another seed; pytest runs
# it too unless told "-m 'not slow'", so it stays about as short.
CI_ROUNDS = 1
SLOW_ROUNDS = 2

# float32 machine epsilon: XGBoost reads, stores and sums in float32.
EPS32 = float(np.finfo(np.float32).eps)

# Efficiency of our float64 attributions against our own prediction: a few
# float64 roundings per tree of the largest |leaf| (measured ~1e-16);
# 1e-9 of the scale still catches any lost path or wrong cover.
EFFICIENCY_RTOL = 1e-9

_NUMBERS = [np.nan, np.inf, -np.inf, 1e308, 3.4e38, 1e38, -0.0, 1e-45, 123.456, 0.5]
_COVERS = [0.0, -1.0, np.nan, np.inf, 1e308, 1e-300, 1e30, 1e-30]
_INTEGERS = [-1, -2, 2**31 - 1, -(2**31), 2**40, 10**6, 10**30]
_PARAMS = ["1000000000", "0", "-1", "99999999999999999999", "1e9", "abc", 10**9, "2"]
_BASE_SCORES = ["[nan]", "[inf]", "[1e308]", "[-5]", "[2]", "abc", "[]"]
_BASE_SCORES += ["[5E-1,5E-1]", "1e-30", "[1e38]", "[0]", "[1]"]
_OTHER_VALUES = ["x", 7, -1, 2.5, [], {}, None, True, [1, "a"], [[1, 2]], "NaN"]
_TREE_ARRAYS = [
    "left_children",
    "right_children",
    "split_indices",
    "split_conditions",
    "default_left",
    "sum_hessian",
    "base_weights",
    "split_type",
    "categories",
    "categories_nodes",
    "categories_segments",
    "categories_sizes",
]


def _learner_forest(document):
    gradient_booster = document["learner"]["gradient_booster"]
    return gradient_booster.get("gbtree", gradient_booster)["model"]


def _set(container, key, index, value):
    """``container[key][index] = value``; a typed array that cannot hold it
    becomes a list."""
    array = container[key]
    if isinstance(array, np.ndarray):
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                cast = np.array(value).astype(array.dtype)
                same = cast == value or (cast != cast and value != value)
        except (OverflowError, ValueError, TypeError):
            same = False
        if same:
            array[index] = cast
            return
        container[key] = array = array.tolist()
    array[index] = value


def _tree(document, rng):
    trees = _learner_forest(document)["trees"]
    return trees[rng.integers(len(trees))]


def _internal_nodes(tree):
    return [u for u, child in enumerate(tree["left_children"]) if child != -1]


def _leaves(tree):
    return [u for u, child in enumerate(tree["left_children"]) if child == -1]


def _parent_chain(tree, node):
    """``node`` and its ancestors (the root last)."""
    parent = {}
    for u in _internal_nodes(tree):
        parent[int(tree["left_children"][u])] = u
        parent[int(tree["right_children"][u])] = u
    chain = [node]
    while chain[-1] in parent:
        chain.append(parent[chain[-1]])
    return chain


def _members(document):
    """Every (container, key) of the document, for untargeted mutations."""
    found, stack = [], [document]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            items = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        for key, member in items:
            found.append((value, key))
            stack.append(member)
    return found


# Each operator mutates the document in place and returns a label.


def delete_key(document, rng):
    dicts = [(c, k) for c, k in _members(document) if isinstance(c, dict)]
    container, key = dicts[rng.integers(len(dicts))]
    del container[key]
    return f"delete {key}"


def retype(document, rng):
    members = _members(document)
    container, key = members[rng.integers(len(members))]
    container[key] = copy.deepcopy(_OTHER_VALUES[rng.integers(len(_OTHER_VALUES))])
    return f"retype {key} to {container[key]!r}"


def resize_array(document, rng):
    tree = _tree(document, rng)
    key = _TREE_ARRAYS[rng.integers(len(_TREE_ARRAYS))]
    values = list(tree.get(key, []))
    if rng.random() < 0.5 and values:
        tree[key] = values[: rng.integers(len(values))]
    else:
        tree[key] = [*values, values[-1] if values else 0]
    return f"resize {key} to {len(tree[key])}"


def child_to_ancestor(document, rng):
    tree = _tree(document, rng)
    node = _internal_nodes(tree)[-1]
    chain = _parent_chain(tree, node)
    target = chain[rng.integers(len(chain))]
    side = ("left_children", "right_children")[rng.integers(2)]
    _set(tree, side, node, target)
    return f"{side}[{node}] -> ancestor {target}"


def shared_child(document, rng):
    tree = _tree(document, rng)
    internal = _internal_nodes(tree)
    if len(internal) < 2:
        return child_to_ancestor(document, rng)
    a, b = rng.choice(internal, size=2, replace=False)
    _set(tree, "right_children", a, int(tree["left_children"][b]))
    return f"node {a} shares node {b}'s left child"


def child_out_of_range(document, rng):
    tree = _tree(document, rng)
    node = _internal_nodes(tree)[0]
    value = [len(tree["left_children"]), *_INTEGERS][rng.integers(8)]
    side = ("left_children", "right_children")[rng.integers(2)]
    _set(tree, side, node, value)
    return f"{side}[{node}] = {value}"


def leaf_with_right_child(document, rng):
    tree = _tree(document, rng)
    leaf = _leaves(tree)[rng.integers(len(_leaves(tree)))]
    _set(tree, "right_children", leaf, 1)
    return f"leaf {leaf} with a right child"


def split_feature(document, rng):
    tree = _tree(document, rng)
    node = _internal_nodes(tree)[rng.integers(len(_internal_nodes(tree)))]
    value = [4, 5, *_INTEGERS][rng.integers(9)]
    _set(tree, "split_indices", node, value)
    return f"split_indices[{node}] = {value}"


def parameter(document, rng):
    learner = document["learner"]
    forest = _learner_forest(document)
    tree = _tree(document, rng)
    places = [
        (learner["learner_model_param"], "num_feature"),
        (learner["learner_model_param"], "num_class"),
        (learner["learner_model_param"], "num_target"),
        (forest["gbtree_model_param"], "num_trees"),
        (forest["gbtree_model_param"], "num_parallel_tree"),
        (tree["tree_param"], "num_nodes"),
        (tree["tree_param"], "size_leaf_vector"),
    ]
    container, key = places[rng.integers(len(places))]
    container[key] = _PARAMS[rng.integers(len(_PARAMS))]
    return f"{key} = {container[key]!r}"


def tree_output(document, rng):
    forest = _learner_forest(document)
    t = rng.integers(len(forest["tree_info"]))
    value = [3, *_INTEGERS][rng.integers(8)]
    _set(forest, "tree_info", t, value)
    return f"tree_info[{t}] = {value}"


def categories(document, rng):
    tree = _tree(document, rng)
    key = ("categories", "categories_nodes", "categories_segments", "categories_sizes")[
        rng.integers(4)
    ]
    if len(tree[key]) == 0:
        tree[key] = [int(rng.integers(5))]
        return f"{key} gains an entry"
    value = [256, 300, 255, 0, _leaves(tree)[0], *_INTEGERS][rng.integers(12)]
    index = rng.integers(len(tree[key]))
    _set(tree, key, index, value)
    return f"{key}[{index}] = {value}"


def split_type(document, rng):
    tree = _tree(document, rng)
    node = _internal_nodes(tree)[rng.integers(len(_internal_nodes(tree)))]
    _set(tree, "split_type", node, 1 - int(tree["split_type"][node]))
    return f"split_type[{node}] flipped"


def categorical_split(document, rng):
    """A threshold split made a well-formed categorical one (categories 0, 1).

    Its feature is then split both ways, or by category though declared
    numeric: XGBoost never writes either (a file it would still predict).
    """
    tree = _tree(document, rng)
    numeric = [
        node for node in _internal_nodes(tree) if int(tree["split_type"][node]) == 0
    ]
    if not numeric:
        return split_type(document, rng)
    node = numeric[rng.integers(len(numeric))]
    position = int(np.searchsorted(np.asarray(tree["categories_nodes"]), node))
    start = int(sum(tree["categories_sizes"][:position]))
    segments = list(tree["categories_segments"])
    tree["categories_nodes"] = [*tree["categories_nodes"][:position], node,
                                *tree["categories_nodes"][position:]]  # fmt: skip
    tree["categories_segments"] = [
        *segments[:position],
        start,
        *(s + 2 for s in segments[position:]),
    ]
    tree["categories_sizes"] = [*tree["categories_sizes"][:position], 2,
                                *tree["categories_sizes"][position:]]  # fmt: skip
    tree["categories"] = [*tree["categories"][:start], 0, 1,
                          *tree["categories"][start:]]  # fmt: skip
    _set(tree, "split_type", node, 1)
    return f"split {node} made categorical"


def _levels(encoding) -> list:
    """A category table's categories: text (UTF-8 cut at offsets) or numbers."""
    values = np.asarray(encoding["values"]).tolist()
    offsets = np.asarray(encoding.get("offsets", [])).tolist()
    if not offsets:
        return values
    data = bytes(values)
    return [data[a:b].decode() for a, b in itertools.pairwise(offsets)]


def _set_levels(encoding, levels) -> None:
    if "offsets" in encoding and len(encoding["offsets"]):
        data = [w.encode() for w in levels]
        encoding["values"] = [b for w in data for b in w]
        encoding["offsets"] = np.concatenate([[0], np.cumsum(list(map(len, data)))])
        encoding["offsets"] = encoding["offsets"].tolist()
    else:
        encoding["values"] = list(levels)


def category_table(document, rng):
    """A model's category tables edited: consistently (a file XGBoost and
    skshapley must read alike) or not (one skshapley must refuse)."""
    cats = _learner_forest(document).get("cats", {})
    tables = [j for j, e in enumerate(cats.get("enc", [])) if len(e["values"])]
    if not tables:
        return split_type(document, rng)
    j = tables[rng.integers(len(tables))]
    encoding = cats["enc"][j]
    levels = _levels(encoding)
    segments = np.asarray(cats["feature_segments"]).tolist()
    index = np.asarray(cats["sorted_idx"]).tolist()
    a, b = rng.choice(len(levels), 2, replace=False)
    choice = rng.integers(5)
    if choice <= 1:  # two categories exchanged, their index kept right or not
        levels[a], levels[b] = levels[b], levels[a]
        _set_levels(encoding, levels)
        if choice == 0:
            order = sorted(range(len(levels)), key=levels.__getitem__)
            index[segments[j] : segments[j + 1]] = order
            cats["sorted_idx"] = index
        return f"categories {a}, {b} of feature {j} exchanged" + (
            "" if choice == 0 else ", index not"
        )
    if choice == 2:  # a category repeated
        levels[a] = levels[b]
        _set_levels(encoding, levels)
        return f"category {a} of feature {j} repeats {b}"
    if choice == 3:
        index[segments[j] + a] = index[segments[j] + b]
        cats["sorted_idx"] = index
        return f"sorted_idx of feature {j} repeats an entry"
    segments[j + 1] += 1
    cats["feature_segments"] = segments
    return f"feature_segments[{j + 1}] off by one"


def default_left(document, rng):
    tree = _tree(document, rng)
    node = _internal_nodes(tree)[rng.integers(len(_internal_nodes(tree)))]
    value = [1 - int(tree["default_left"][node]), 2, 255][rng.integers(3)]
    _set(tree, "default_left", node, value)
    return f"default_left[{node}] = {value}"


def indptr_or_names(document, rng):
    forest, learner = _learner_forest(document), document["learner"]
    choice = rng.integers(4)
    if choice == 0:
        _set(forest, "iteration_indptr", 1, 10**6)
    elif choice == 1:
        forest["iteration_indptr"] = list(forest["iteration_indptr"])[::-1]
    elif choice == 2:
        learner["feature_names"] = list(learner["feature_names"])[:-1]
    else:
        learner["feature_names"] = [*learner["feature_names"][:-1], 3]
    return ("indptr big", "indptr reversed", "names short", "name not str")[choice]


def objective_or_booster(document, rng):
    learner = document["learner"]
    if rng.random() < 0.5:
        names = ["reg:gamma", "binary:logistic", "multi:softprob", "reg:foo", "x" * 500]
        learner["objective"]["name"] = names[rng.integers(len(names))]
        return f"objective {learner['objective']['name'][:20]}"
    learner["gradient_booster"]["name"] = ["gblinear", "dart", "gbtree", ""][
        rng.integers(4)
    ]
    return f"booster {learner['gradient_booster']['name']}"


def leaf_value(document, rng):
    tree = _tree(document, rng)
    leaf = _leaves(tree)[rng.integers(len(_leaves(tree)))]
    value = _NUMBERS[rng.integers(len(_NUMBERS))]
    _set(tree, "split_conditions", leaf, value)
    return f"leaf {leaf} = {value}"


def threshold(document, rng):
    tree = _tree(document, rng)
    node = _internal_nodes(tree)[rng.integers(len(_internal_nodes(tree)))]
    value = _NUMBERS[rng.integers(len(_NUMBERS))]
    _set(tree, "split_conditions", node, value)
    return f"threshold {node} = {value}"


def hessian(document, rng):
    tree = _tree(document, rng)
    node = rng.integers(len(tree["sum_hessian"]))
    value = _COVERS[rng.integers(len(_COVERS))]
    _set(tree, "sum_hessian", node, value)
    return f"sum_hessian[{node}] = {value}"


def base_score(document, rng):
    param = document["learner"]["learner_model_param"]
    param["base_score"] = _BASE_SCORES[rng.integers(len(_BASE_SCORES))]
    return f"base_score {param['base_score']}"


def weight_drop(document, rng):
    # Beside the trees' model (XGBoost <= 3.3) or inside it (3.4).
    gradient_booster = document["learner"]["gradient_booster"]
    holder = next(
        (
            parent
            for parent in (gradient_booster, _learner_forest(document))
            if "weight_drop" in parent
        ),
        None,
    )
    if holder is None:
        return leaf_value(document, rng)
    t = rng.integers(len(holder["weight_drop"]))
    value = [np.nan, 0.0, 1e38, -1.0, np.inf][rng.integers(5)]
    _set(holder, "weight_drop", t, value)
    return f"weight_drop[{t}] = {value}"


def drop_tree(document, rng):
    forest = _learner_forest(document)
    forest["trees"] = list(forest["trees"])[:-1]
    return "last tree dropped"


DOCUMENT_OPERATORS = [
    delete_key,
    retype,
    resize_array,
    child_to_ancestor,
    shared_child,
    child_out_of_range,
    leaf_with_right_child,
    split_feature,
    parameter,
    tree_output,
    categories,
    split_type,
    categorical_split,
    default_left,
    indptr_or_names,
    objective_or_booster,
    leaf_value,
    threshold,
    hessian,
    base_score,
    weight_drop,
    drop_tree,
]


def _encode(document, suffix):
    if suffix == ".ubj":
        return encode_ubjson(document)
    return json.dumps(document, default=np.ndarray.tolist).encode()


def _deeply_nested(suffix, depth=100_000):
    if suffix == ".ubj":
        key = b"L" + (7).to_bytes(8, "big") + b"learner"
        return b"{" + key + b"[" * depth + b"]" * depth + b"}"
    return b'{"learner": ' + b"[" * depth + b"]" * depth + b"}"


def _byte_mutants(raw, suffix, rng):
    flipped = bytearray(raw)
    for position in rng.integers(len(raw), size=3):
        flipped[position] = rng.integers(256)
    return [
        ("truncated", raw[: rng.integers(len(raw))]),
        ("bytes flipped", bytes(flipped)),
        ("random bytes", rng.bytes(int(rng.integers(1, 200)))),
        ("deep nesting", _deeply_nested(suffix)),
        ("empty", b""),
    ]


def mutants(base_files, rounds, seed, operators=DOCUMENT_OPERATORS):
    """(label, suffix, bytes) of every mutated file, from seeded generators."""
    found = []
    for b, (family, suffix, raw) in enumerate(base_files):
        rng = np.random.default_rng([seed, b])
        ubjson = suffix == ".ubj"
        base = decode_ubjson(raw, max_depth=64) if ubjson else json.loads(raw)
        found.append((f"{family}{suffix} re-encoded", suffix, _encode(base, suffix)))
        for _ in range(rounds):
            for operator in operators:
                document = copy.deepcopy(base)
                label = operator(document, rng)
                found.append(
                    (f"{family}{suffix} {label}", suffix, _encode(document, suffix))
                )
            for label, data in _byte_mutants(raw, suffix, rng):
                found.append((f"{family}{suffix} {label}", suffix, data))
    return found


def check(label, ours, theirs):
    """Problems with one mutant's outcome (an empty list if none)."""
    if "crash" in ours:
        return [f"{label}: our process died with status {ours['crash']}"]
    try:
        assert_clean_outcome(ours["status"], ours["stderr"])
    except AssertionError as exc:
        return [f"{label}: {exc}"]
    if ours["status"] != 0:
        return []
    sums, raw = np.array(ours["sums"], dtype=float), np.array(ours["raw"], dtype=float)
    scale = ours["scale"]
    problems = []
    if sums.shape != raw.shape or not np.all(np.isfinite(sums)):
        problems.append(
            f"{label}: attributions {sums.shape} not finite or not {raw.shape}"
        )
    elif np.abs(sums - raw).max() > EFFICIENCY_RTOL * (scale + 1):
        problems.append(f"{label}: efficiency off by {np.abs(sums - raw).max():.3g}")
    if "prediction" in theirs:
        margin = np.array(theirs["prediction"], dtype=float)
        # XGBoost adds the base score and one float32 leaf per tree in
        # float32: at most 2 roundings per tree of the running sum's scale.
        atol = (ours["n_trees"] + 1) * 2 * EPS32 * scale
        number = np.isfinite(margin)
        if margin.shape != raw.shape:
            problems.append(f"{label}: {raw.shape} outputs, XGBoost {margin.shape}")
        elif np.any(np.abs(raw - margin)[number] > atol):
            worst = np.abs(raw - margin)[number].max()
            problems.append(f"{label}: margin off by {worst:.3g} (atol {atol:.3g})")
    return problems


def fuzz(tmp_path, rounds, seed, families=FAMILIES, operators=DOCUMENT_OPERATORS):
    """Mutants of every family through the command, then through XGBoost.

    XGBoost's margin is needed only for the files the command explains;
    giving it every file would cost a new process per crash (about a fifth
    of all mutants crash its loader). The data is a CSV file, as users
    have it: for the model of pandas categories, their values as text.
    """
    base_files = []
    for family in families:
        for suffix, path in save(tmp_path, family).items():
            base_files.append((family, suffix, path.read_bytes()))
    if families == ("pandas_categories",):
        X, _ = category_frame(24, seed=1)
        X["f2"] = X["f2"].astype(object)
        X.loc[1, "f2"] = np.nan  # a missing category
    else:
        X, _ = training_frame(24, seed=1)
        X.loc[[0, 1], "f3"] = [7.0, np.nan]  # an unseen category code, a missing one
    data = tmp_path / "rows.csv"
    X.to_csv(data, index=False)
    generated = mutants(base_files, rounds, seed, operators)
    files = []
    for i, (_, suffix, raw) in enumerate(generated):
        files.append(tmp_path / f"mutant{i:05d}{suffix}")
        files[-1].write_bytes(raw)
    ours = run_batch("explain", files, data, tmp_path)
    accepted = [i for i, result in enumerate(ours) if result.get("status") == 0]
    margins = run_batch("xgboost_margin", [files[i] for i in accepted], data, tmp_path)
    theirs = [{}] * len(files)
    for i, result in zip(accepted, margins, strict=True):
        theirs[i] = result
    problems = []
    for (label, _, _), mine, xgb in zip(generated, ours, theirs, strict=True):
        problems += check(label, mine, xgb)
    print(
        f"{len(files)} mutants: {len(accepted)} explained, "
        f"{len(files) - len(accepted)} refused; of these {len(accepted)}, "
        f"XGBoost predicted {sum('prediction' in r for r in margins)}, refused "
        f"{sum('error' in r for r in margins)}, crashed on "
        f"{sum('crash' in r for r in margins)}"
    )
    assert not problems, "\n".join(problems[:30])
    # The unmutated files are explained and match XGBoost; and both outcomes
    # occur: a run that refuses (or accepts) everything tests nothing.
    controls = [i for i, (label, _, _) in enumerate(generated) if "re-encoded" in label]
    assert all("prediction" in theirs[i] for i in controls)
    assert len(controls) < len(accepted) < len(files)


def test_mutated_xgboost_files(tmp_path):
    fuzz(tmp_path, CI_ROUNDS, seed=0)


@pytest.mark.slow
def test_more_mutated_xgboost_files(tmp_path):
    fuzz(tmp_path, SLOW_ROUNDS, seed=1)


# A model fitted on pandas categories, explained from text: its category
# tables edited (and its trees, thresholds and parameters, as above).
CATEGORY_OPERATORS = [category_table] * 4 + [
    split_type, categorical_split, categories, leaf_value, threshold, parameter,
]  # fmt: skip


def test_mutated_category_tables(tmp_path):
    fuzz(tmp_path, 2, seed=2, families=("pandas_categories",),
         operators=CATEGORY_OPERATORS)  # fmt: skip
