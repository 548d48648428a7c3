"""XGBoost model files read by skshapley itself (JSON, UBJSON), and refused.

A file of each family parses to the very table that the live Booster gives
(which ``test_xgboost.py`` checks against XGBoost) and predicts XGBoost's
margin for that file; the UBJSON decoder is bounded (counts, lengths and
nesting checked against the bytes, never anything but ``UBJSONError``);
each kind of malformed document gets one ``ValueError`` naming the field,
never a traceback from deep inside; and explaining a file needs no xgboost.
"""

import contextlib
import dataclasses
import json
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from limited import assert_clean_outcome, run_limited
from xgboost_models import FAMILIES, encode_ubjson, save, training_frame

from skshapley import TreeExplainer
from skshapley.trees._readers.xgboost import file as xgboost_file
from skshapley.trees._readers.xgboost.file import MAX_NESTING, read_xgboost_model
from skshapley.trees._readers.xgboost.ubjson import UBJSONError, decode_ubjson

xgb = pytest.importorskip("xgboost")

from skshapley.trees._readers.xgboost.model import parse_xgboost  # noqa: E402

# float32 machine epsilon: XGBoost sums the margin in float32.
EPS32 = float(np.finfo(np.float32).eps)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("xgboost_files")
    return {family: save(folder, family) for family in FAMILIES}


@pytest.mark.parametrize("suffix", [".json", ".ubj"])
@pytest.mark.parametrize("family", FAMILIES)
def test_a_file_parses_like_its_booster(files, family, suffix):
    path = files[family][suffix]
    booster = xgb.Booster(model_file=str(path))
    ours = read_xgboost_model(path).ensemble
    theirs = parse_xgboost(booster)
    for field in dataclasses.fields(ours):
        np.testing.assert_equal(
            getattr(ours, field.name), getattr(theirs, field.name), err_msg=field.name
        )
    X, _ = training_frame(50, seed=2)
    raw = TreeExplainer(read_xgboost_model(path)).fit().raw_predict(X)
    margin = booster.predict(
        xgb.DMatrix(X, enable_categorical=True), output_margin=True
    )
    # float32 sums of <= 12 trees' leaves (|leaf| < 1) and the base score:
    # 16 roundings of at most 3 eps32 each is an upper bound.
    np.testing.assert_allclose(raw, margin, rtol=0, atol=16 * 3 * EPS32)


def test_explaining_a_file_needs_no_xgboost(files, tmp_path):
    X, _ = training_frame(5, seed=3)
    X.to_csv(tmp_path / "rows.csv", index=False)
    code = (
        "import sys; sys.modules['xgboost'] = None; from skshapley.cli import main; "
        "sys.exit(main(sys.argv[1:]))"
    )
    args = ["explain", "--model", files["multiclass"][".ubj"], "--data", "rows.csv"]
    status, _, stderr = run_limited(
        [*args, "--out", "phi.csv", "-q"], cwd=tmp_path, code=code
    )
    assert status == 0, stderr
    assert (tmp_path / "phi.csv").read_text().count("\n") == 6


# --- the UBJSON decoder --------------------------------------------------


def test_ubjson_decodes_what_xgboost_writes(files):
    for paths in files.values():
        document = decode_ubjson(paths[".ubj"].read_bytes(), max_depth=MAX_NESTING)
        expected = json.loads(paths[".json"].read_bytes())
        assert _leaves(document) == _leaves(expected)


def _leaves(document):
    """(path, value) of every scalar; numbers as float32, as XGBoost has them
    (its JSON prints the shortest decimal of each float32)."""
    found, stack = [], [("", document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack += [(f"{path}.{key}", member) for key, member in value.items()]
        elif isinstance(value, list | np.ndarray):
            stack += [(f"{path}[{i}]", member) for i, member in enumerate(value)]
        elif isinstance(value, int | float | np.number) and not isinstance(value, bool):
            found.append((path, np.float32(value)))
        else:
            found.append((path, value))
    return sorted(found, key=lambda item: item[0])


def test_every_truncation_of_a_ubjson_file_is_refused(files):
    data = files["categorical"][".ubj"].read_bytes()
    for end in range(len(data)):
        with pytest.raises(UBJSONError):
            decode_ubjson(data[:end], max_depth=MAX_NESTING)


_HUGE = struct.pack(">q", 2**62)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"[$d#L" + _HUGE, "does not fit"),  # no 2**64-byte allocation
        (b"[#L" + _HUGE, "does not fit"),
        (b"{#L" + _HUGE, "does not fit"),
        (b"SL" + _HUGE + b"abc", "does not fit"),
        (b"[$d#L" + struct.pack(">q", -1), "does not fit"),
        (b"[" * 1_000_000, "nesting deeper than 32"),
        (b"{i\x01a" * 100_000, "nesting deeper than 32"),
        (b"Z}", "trailing bytes"),
        (b"X", "unknown marker"),
        (b"HL" + struct.pack(">q", 2) + b"12", "unknown marker"),
        (b"[$S#i\x01", "typed arrays of b'S'"),
        (b"{$i#i\x01", "typed objects"),
        (b"[$di\x01", "without a count"),
        (b"SL" + struct.pack(">q", 1) + b"\xff", "not UTF-8"),
        (b"{d" + struct.pack(">f", 1.0), "key length is not an integer"),
        (b"", "1 bytes needed"),
    ],
)
def test_malformed_ubjson_is_refused(data, match):
    with pytest.raises(UBJSONError, match=match):
        decode_ubjson(data, max_depth=MAX_NESTING)


@given(st.binary(max_size=200))
def test_ubjson_decoder_raises_nothing_else(data):
    with contextlib.suppress(UBJSONError):  # any other exception fails
        decode_ubjson(data, max_depth=MAX_NESTING)


@given(st.binary(max_size=40))
def test_ubjson_decoder_on_mutated_xgboost_prefixes(tail):
    # A valid start (object, key, typed array header) and then anything.
    head = b"{L" + struct.pack(">q", 4) + b"tree[$d#L"
    with contextlib.suppress(UBJSONError):  # any other exception fails
        decode_ubjson(head + tail, max_depth=MAX_NESTING)


# --- files refused before parsing ----------------------------------------


def _refused(path, match):
    with pytest.raises(
        ValueError, match=rf"^{path.name} is not a valid XGBoost model: {match}"
    ):
        read_xgboost_model(path)


@pytest.mark.parametrize(
    ("name", "data", "match"),
    [
        ("deep.json", b"[" * 100_000 + b"]" * 100_000, "JSON nested deeper"),
        ("deep.json", b"[" * 40 + b"]" * 40, "JSON nested deeper than 32"),
        ("binary.json", bytes(range(256)), "not JSON"),
        ("empty.json", b"", "not JSON"),
        ("list.json", b"[1, 2]", "the document must be an object"),
        ("deep.ubj", b"[" * 100_000, "nesting deeper than 32"),
        ("text.ubj", b'{"learner": {}}', "key length is not an integer"),
    ],
)
def test_unreadable_files_are_refused(tmp_path, name, data, match):
    path = tmp_path / name
    path.write_bytes(data)
    _refused(path, match)


def test_files_over_the_size_limit_are_refused_unread(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    path.write_bytes(b" " * 101)
    monkeypatch.setattr(xgboost_file, "MAX_MODEL_FILE_BYTES", 100)
    _refused(path, "it has 101 bytes, more than the 100 allowed")


# --- malformed documents -------------------------------------------------


def _regressor_document(files):
    return json.loads(files["regressor"][".json"].read_bytes())


def _trees(document):
    return document["learner"]["gradient_booster"]["model"]["trees"]


def _deepest_internal(tree):
    """An internal node at depth >= 2 and its parent and grandparent."""
    left, right = tree["left_children"], tree["right_children"]
    parent = {child: u for u in range(len(left)) for child in (left[u], right[u])}
    for u in range(len(left)):
        if left[u] != -1 and parent.get(u) is not None and parent[u] in parent:
            return u, parent[u], parent[parent[u]]
    raise AssertionError("no internal node at depth 2")


def _cycle(document):
    tree = _trees(document)[0]
    node, _, grandparent = _deepest_internal(tree)
    tree["left_children"][node] = grandparent


def _self_loop(document):
    tree = _trees(document)[0]
    tree["right_children"][0] = 0


def _shared_child(document):
    tree = _trees(document)[0]
    node, parent, _ = _deepest_internal(tree)
    children = (tree["left_children"][parent], tree["right_children"][parent])
    sibling = next(child for child in children if child != node)
    tree["left_children"][sibling] = tree["left_children"][node]


def _set(*keys, value):
    def mutate(document):
        container = document
        for key in keys[:-1]:
            container = container[key] if not callable(key) else key(container)
        container[keys[-1]] = value

    return mutate


def _tree0(document):
    return _trees(document)[0]


_PARAM = ("learner", "learner_model_param")
_MALFORMED = [
    (_cycle, r"trees\[0\]: node \d+ is reached twice from the root \(a cycle"),
    (_self_loop, r"trees\[0\]: node 0 is reached twice"),
    (_shared_child, r"trees\[0\]: node \d+ is reached twice"),
    (
        _set(_tree0, "left_children", value=[99, -1, -1]),
        r"trees\[0\]\.left_children has 3 entries, expected \d+",
    ),
    (
        lambda d: _tree0(d)["left_children"].__setitem__(0, 99),
        r"trees\[0\]\.left_children\[0\] is 99; allowed: -1 or 0 to \d+",
    ),
    (
        lambda d: _tree0(d)["right_children"].__setitem__(0, -2),
        r"trees\[0\]\.right_children\[0\] is -2",
    ),
    (
        _set(*_PARAM, "num_feature", value="1000000000"),
        r"learner_model_param\.num_feature is 1000000000; allowed: 1 to 1000000",
    ),
    (
        _set(*_PARAM, "num_class", value="1000000000"),
        r"num_class is 1000000000; allowed: 0 to 100000",
    ),
    (
        _set(*_PARAM, "num_feature", value="1e9"),
        r"num_feature must be an integer, got '1e9'",
    ),
    (_set(*_PARAM, "num_target", value=[]), r"num_target must be an integer, got \[\]"),
    (
        _set(*_PARAM, "base_score", value="[nan]"),
        r"base_score '\[nan\]' does not give 1 finite",
    ),
    (_set(*_PARAM, "base_score", value="abc"), r"base_score 'abc' is not a number"),
    (_set(*_PARAM, "base_score", value="[1,2]"), r"does not give 1 finite"),
    (lambda d: d["learner"].pop("objective"), r"learner\.objective is missing"),
    (lambda d: _tree0(d).pop("sum_hessian"), r"trees\[0\]\.sum_hessian is missing"),
    (
        _set(_tree0, "split_conditions", value="abc"),
        r"split_conditions must be an array of numbers, got a string",
    ),
    (
        _set(_tree0, "split_indices", value=[[0]] * 3),
        r"split_indices must be an array of integers",
    ),
    (
        _set(_tree0, "split_indices", value=[1, "a", 2]),
        r"split_indices must be an array of integers",
    ),
    (
        _set(_tree0, "split_indices", value=[2**70, 0, 0]),
        # UBJSON has no such integer (XGBoost's reader has no "H" numbers)
        r"(split_indices must be an array of integers|unknown marker b'H')",
    ),
    (
        lambda d: _tree0(d)["split_indices"].__setitem__(0, 4),
        r"trees\[0\]\.split_indices\[0\] is 4; the model has features 0 to 3",
    ),
    (
        lambda d: _tree0(d)["default_left"].__setitem__(0, 2),
        r"default_left\[0\] is 2; allowed: 0 or 1",
    ),
    (
        lambda d: _tree0(d)["sum_hessian"].__setitem__(0, float("nan")),
        r"sum_hessian\[0\] is nan",
    ),
    (
        lambda d: _tree0(d)["sum_hessian"].__setitem__(0, 1e30),
        r"sum_hessian\[0\] is 1\.0*\d*e\+30; covers must be finite, nonnegative "
        "and at each split the sum",
    ),
    (
        lambda d: _tree0(d)["sum_hessian"].__setitem__(1, -1.0),
        r"sum_hessian\[0\]|sum_hessian\[1\]",
    ),
    (
        _set(_tree0, "tree_param", "num_nodes", value="1000000000"),
        r"left_children has \d+ entries, expected 1000000000",
    ),
    (
        lambda d: d["learner"]["gradient_booster"]["model"]["tree_info"].__setitem__(
            0, 1
        ),
        r"tree_info names outputs outside 0 to 0",
    ),
    (
        lambda d: d["learner"]["gradient_booster"]["model"]["tree_info"].pop(),
        r"tree_info has \d+ entries, expected",
    ),
    (
        lambda d: d["learner"]["gradient_booster"]["model"][
            "iteration_indptr"
        ].__setitem__(1, 99),
        r"iteration_indptr must rise from 0",
    ),
    (
        _set(
            "learner",
            "gradient_booster",
            "model",
            "gbtree_model_param",
            "num_trees",
            value="1",
        ),
        r"num_trees is 1; allowed: 4 to 4",
    ),
    (
        _set("learner", "feature_names", value=["a", "b"]),
        r"learner\.feature_names must be 4 strings",
    ),
    (
        _set("learner", "feature_types", value=["float"] * 3 + [1]),
        r"learner\.feature_types must be 4 strings",
    ),
    (
        lambda d: d["learner"]["gradient_booster"]["model"].pop("trees"),
        r"model\.trees is missing",
    ),
    (
        _set("learner", "gradient_booster", value=[]),
        r"learner\.gradient_booster must be an object, got an array",
    ),
]


@pytest.mark.parametrize(("mutate", "match"), _MALFORMED)
@pytest.mark.parametrize("suffix", [".json", ".ubj"])
def test_malformed_documents_are_refused(files, tmp_path, mutate, match, suffix):
    document = _regressor_document(files)
    mutate(document)
    path = tmp_path / f"model{suffix}"
    data = (
        encode_ubjson(document) if suffix == ".ubj" else json.dumps(document).encode()
    )
    path.write_bytes(data)
    _refused(path, f".*{match}")


def _leaf(tree):
    return tree["left_children"].index(-1)


def test_non_finite_leaf_values_are_refused(files, tmp_path):
    for value in (float("nan"), float("inf"), 1e39):  # 1e39 is inf in float32
        document = _regressor_document(files)
        tree = _trees(document)[1]
        tree["split_conditions"][_leaf(tree)] = value
        path = tmp_path / "model.json"
        path.write_text(json.dumps(document))
        _refused(
            path,
            rf".*trees\[1\]\.split_conditions holds a non-finite leaf value "
            rf"\(node {_leaf(tree)}\)",
        )


def _document(files, family):
    return json.loads(files[family][".json"].read_bytes())


def _categorical_tree(document):
    return next(t for t in _trees(document) if t["categories_nodes"])


def _list_node_twice(tree):
    for key in ("categories_nodes", "categories_segments", "categories_sizes"):
        tree[key].append(tree[key][0])


def _flip_split_type(tree):
    node = tree["categories_nodes"][0]
    tree["split_type"][node] = 0


def _list_a_leaf(tree):
    tree["categories_nodes"][0] = tree["left_children"].index(-1)


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (_list_node_twice, r"categories_nodes lists node \d+ twice or out of range"),
        (
            lambda t: t["categories_sizes"].__setitem__(0, 99),
            r"the categories of node \d+ \(from 0, 99 of them\) are beyond",
        ),
        (
            lambda t: t["categories_segments"].__setitem__(0, -1),
            r"the categories of node \d+ \(from -1",
        ),
        (
            lambda t: t["categories"].__setitem__(0, -1),
            r"node \d+ lists a negative category",
        ),
        (_flip_split_type, r"is categorical by split_type but not by categories_nodes"),
        (_list_a_leaf, r"categories_nodes lists leaf \d+"),
        (
            lambda t: t["categories_sizes"].pop(),
            r"categories_sizes has 0 entries, expected 1",
        ),
    ],
)
def test_malformed_categorical_splits_are_refused(files, tmp_path, mutate, match):
    document = _document(files, "categorical")
    mutate(_categorical_tree(document))
    path = tmp_path / "model.json"
    path.write_text(json.dumps(document))
    _refused(path, f".*{match}")


def test_categories_beyond_the_bitsets_are_not_supported(files, tmp_path):
    document = _document(files, "categorical")
    _categorical_tree(document)["categories"][0] = 300
    path = tmp_path / "model.json"
    path.write_text(json.dumps(document))
    with pytest.raises(TypeError, match=r"category 300: .* categories 0\.\.255 only"):
        read_xgboost_model(path)


@pytest.mark.parametrize(
    ("family", "mutate", "match"),
    [
        (
            "categorical",
            lambda d: d["learner"]["feature_types"].__setitem__(3, "q"),
            r"feature 3 is split by category, but learner\.feature_types declares "
            r"it 'q', not 'c'",
        ),
        (
            "binary",
            _set(*_PARAM, "base_score", value="[2E0]"),
            r"base_score '\[2E0\]' must be in \[0, 1\] for a logistic objective",
        ),
        (
            "multiclass",
            _set(*_PARAM, "num_target", value="2"),
            r"learner\.learner_model_param has both classes and targets",
        ),
    ],
)
def test_malformed_family_fields_are_refused(files, tmp_path, family, mutate, match):
    document = _document(files, family)
    mutate(document)
    path = tmp_path / "model.json"
    path.write_text(json.dumps(document))
    _refused(path, f".*{match}")


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("num_feature", "1000000000", "num_feature is 1000000000; allowed: 1 to"),
        ("num_class", "1000000000", "num_class is 1000000000; allowed: 0 to"),
    ],
)
def test_the_command_refuses_huge_counts_in_a_small_file(
    files, tmp_path, key, value, match
):
    # A 4 KB file claiming 1e9 features or classes: refused before any
    # per-feature or per-output array, within the memory limit.
    document = _regressor_document(files)
    document["learner"]["learner_model_param"][key] = value
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(document))
    X, _ = training_frame(5, seed=3)
    X.to_csv(tmp_path / "rows.csv", index=False)
    args = ["explain", "--model", path, "--data", "rows.csv", "--out", "phi.csv"]
    status, _, stderr = run_limited(args, cwd=tmp_path)
    assert_clean_outcome(status, stderr)
    assert status == 1
    assert match in stderr
