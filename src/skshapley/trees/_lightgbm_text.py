"""LightGBM's text model format, read and checked without LightGBM.

The format (what ``Booster.save_model`` and ``model_to_string`` write,
``src/boosting/gbdt_model_text.cpp`` and ``src/io/tree.cpp`` of LightGBM 4.x)
is line-based: a first line ``tree``, ``key=value`` header lines, one block
of ``key=value`` lines per tree (each after a ``Tree=i`` line, with flat
arrays separated by spaces), ``end of trees``, then sections LightGBM keeps
for information and a last line ``pandas_categorical:<JSON>``.

Everything that the parsed trees are built from is checked here first, with
loops over lines and arrays only (no recursion, so any depth and any number
of trees parse): presence and form of every field, array lengths against
``num_leaves``, child indices forming one tree, features within
``max_feature_idx``, decision-type bits, category bitsets, finite numbers,
counts that add up, and the sizes in :mod:`skshapley._limits`. A file that
fails any check raises one ``ValueError`` naming the file and the problem.
"""

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._limits import MAX_FEATURES, MAX_MODEL_FILE_BYTES, MAX_OUTPUTS

_INTS = re.compile(r"-?\d{1,10}(?: -?\d{1,10})*")
_FLOAT = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_FLOATS = re.compile(f"{_FLOAT}(?: {_FLOAT})*")
_CATEGORY_INFO = re.compile(r"-?\d{1,10}(?::-?\d{1,10})*")
_INT32_MAX = 2**31 - 1

# decision_type bits (LightGBM's tree.h): 1 categorical, 2 default left,
# 4 * missing type (0 None, 1 Zero, 2 NaN).
_CATEGORICAL_BIT = 1
_MAX_DECISION_TYPE = 11  # the categorical, default-left and NaN bits


class _Invalid(Exception):
    """One problem of a model text; the caller names the model."""


@dataclass(frozen=True)
class LightGBMTextModel:
    """A LightGBM model read from its text format, checked, not yet a table.

    Attributes
    ----------
    n_outputs : int
        Trees per iteration: one per class for multiclass objectives, else 1.
    n_features : int
        ``max_feature_idx + 1``.
    feature_names : tuple of str
        The model's feature names (``Column_0``, ... if it was trained
        without names).
    categorical_features : tuple of int
        Features whose ``feature_infos`` list categories.
    objective : str
        The objective line, e.g. ``"binary sigmoid:1"``; empty if none.
    average_output : bool
        Random-forest mode: ``predict`` averages the iterations.
    trees : tuple of dict
        Per tree, LightGBM's arrays: ``num_leaves``, ``split_feature``,
        ``threshold``, ``decision_type``, ``left_child``, ``right_child``
        (``~leaf`` for leaves), ``leaf_value``, ``leaf_count``,
        ``internal_count``, ``cat_boundaries``, ``cat_threshold``,
        ``is_linear``.
    pandas_categorical : list or None
        The categories of each pandas categorical training column.
    """

    n_outputs: int
    n_features: int
    feature_names: tuple
    categorical_features: tuple
    objective: str
    average_output: bool
    trees: tuple
    pandas_categorical: list | None


def read_model_file(path) -> LightGBMTextModel:
    """Read and check the LightGBM text model in the file ``path``.

    Raises
    ------
    ValueError
        If the file is larger than ``MAX_MODEL_FILE_BYTES``, not UTF-8 text,
        or not a valid LightGBM text model.
    OSError
        If it cannot be read.
    """
    path = Path(path)
    with path.open("rb") as file:
        data = file.read(MAX_MODEL_FILE_BYTES + 1)
    if len(data) > MAX_MODEL_FILE_BYTES:
        raise ValueError(
            f"{path.name} is larger than {MAX_MODEL_FILE_BYTES:,} bytes, the "
            "largest model file skshapley reads."
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path.name} is not a valid LightGBM model: it is not UTF-8 text "
            f"(byte {exc.start})."
        ) from exc
    return read_model_text(text, source=path.name)


def read_model_text(text: str, source: str = "the model") -> LightGBMTextModel:
    """Read and check a LightGBM model string.

    Raises
    ------
    ValueError
        ``"<source> is not a valid LightGBM model: <what is wrong>"``.
    """
    try:
        return _read(text)
    except _Invalid as exc:
        raise ValueError(f"{source} is not a valid LightGBM model: {exc}") from None


def _read(text: str) -> LightGBMTextModel:
    if "\x00" in text:
        raise _Invalid("it contains NUL bytes")
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if lines[0] != "tree":
        raise _Invalid(f"its first line must be 'tree', got {lines[0][:40]!r}")
    position, header = _key_values(lines, 1, "the header", stop_at_tree=True)
    n_outputs = _header_int(header, "num_class", 1, MAX_OUTPUTS)
    if "num_tree_per_iteration" in header:
        per_iteration = _header_int(header, "num_tree_per_iteration", 1, MAX_OUTPUTS)
        if per_iteration != n_outputs:
            raise _Invalid(
                f"num_tree_per_iteration={per_iteration} differs from "
                f"num_class={n_outputs}"
            )
    n_features = _header_int(header, "max_feature_idx", 0, MAX_FEATURES - 1) + 1
    names = _tokens(header, "feature_names", n_features)
    if len(set(names)) != len(names):
        raise _Invalid("feature_names has duplicated names")
    infos = _tokens(header, "feature_infos", n_features)
    categorical = tuple(j for j, info in enumerate(infos) if _is_categorical(info))

    blocks, position = _tree_blocks(lines, position)
    trees = tuple(
        _tree(fields, index, n_features) for index, fields in enumerate(blocks)
    )
    if not trees:
        raise _Invalid("it has no trees")
    if len(trees) % n_outputs:
        raise _Invalid(
            f"its {len(trees)} trees are not a whole number of iterations of "
            f"{n_outputs} trees"
        )
    if "tree_sizes" in header:
        _check_tree_sizes(header["tree_sizes"], lines, blocks)
    return LightGBMTextModel(
        n_outputs=n_outputs,
        n_features=n_features,
        feature_names=tuple(names),
        categorical_features=categorical,
        objective=_objective(header.get("objective", "")),
        average_output="average_output" in header,
        trees=trees,
        pandas_categorical=_pandas_categorical(lines[position:]),
    )


def _objective(objective: str) -> str:
    """The objective line, e.g. ``binary sigmoid:1``; its sigmoid is a number."""
    for token in objective.split(" ")[1:]:
        key, _, value = token.partition(":")
        if key == "sigmoid" and not (
            re.fullmatch(_FLOAT, value) and np.isfinite(float(value))
        ):
            raise _Invalid(f"the objective's sigmoid must be a number: {token!r}")
    return objective


def _key_values(lines, position, where, *, stop_at_tree):
    """``key=value`` lines from ``position`` up to a blank line or a tree.

    Returns the position after them and a dict (a line without ``=`` is a
    flag with value ""); repeated keys are refused.
    """
    fields = {}
    while position < len(lines):
        line = lines[position]
        if stop_at_tree and (line.startswith("Tree=") or line == "end of trees"):
            break
        position += 1
        if not line:
            if stop_at_tree:
                continue
            break
        key, _, value = line.partition("=")
        if key in fields:
            raise _Invalid(f"{where} has {key!r} twice (line {position})")
        fields[key] = value
    return position, fields


def _tree_blocks(lines, position):
    """Each tree's fields and first line, up to ``end of trees``."""
    blocks = []
    while position < len(lines) and lines[position] != "end of trees":
        line = lines[position]
        if not line:
            position += 1
            continue
        if line != f"Tree={len(blocks)}":
            raise _Invalid(
                f"line {position + 1} must be 'Tree={len(blocks)}' or "
                f"'end of trees', got {line[:40]!r}"
            )
        start = position
        position, fields = _key_values(
            lines, position + 1, f"tree {len(blocks)}", stop_at_tree=False
        )
        fields["_lines"] = (start, position)
        blocks.append(fields)
    if position >= len(lines):
        raise _Invalid("it has no 'end of trees' line (is the file truncated?)")
    return blocks, position + 1


def _check_tree_sizes(sizes, lines, blocks):
    """LightGBM finds trees by these byte sizes: they must match the blocks."""
    expected = [
        sum(len(line.encode()) + 1 for line in lines[start:end]) + 1
        for start, end in (block["_lines"] for block in blocks)
    ]
    if sizes.split(" ") != [str(size) for size in expected]:
        raise _Invalid("tree_sizes does not match the sizes of the trees")


def _header_int(header, key, low, high) -> int:
    if key not in header:
        raise _Invalid(f"the header has no {key}")
    return int(_ints(header[key], key, 1, low, high)[0])


def _tokens(header, key, count) -> list:
    if key not in header:
        raise _Invalid(f"the header has no {key}")
    tokens = header[key].split(" ")
    if len(tokens) != count or not all(tokens):
        raise _Invalid(f"{key} must list {count} space-separated entries")
    return tokens


def _is_categorical(info: str) -> bool:
    """A ``feature_infos`` entry: ``none``, ``[min:max]`` or ``c1:c2:...``."""
    if info == "none" or (info.startswith("[") and info.endswith("]")):
        return False
    if not _CATEGORY_INFO.fullmatch(info):
        raise _Invalid(f"feature_infos has an entry {info[:40]!r}")
    return True


def _ints(text, what, count, low, high) -> np.ndarray:
    """``count`` integers in ``[low, high]`` separated by single spaces."""
    if count == 0 and text == "":
        return np.zeros(0, dtype=np.int64)
    if not _INTS.fullmatch(text):
        raise _Invalid(f"{what} must be integers, got {text[:40]!r}")
    values = np.array(text.split(" "), dtype=np.int64)
    if len(values) != count:
        raise _Invalid(f"{what} has {len(values)} values, expected {count}")
    if values.min() < low or values.max() > high:
        raise _Invalid(f"{what} must lie in [{low}, {high}]")
    return values


def _floats(text, what, count) -> np.ndarray:
    """``count`` finite numbers separated by single spaces."""
    if count == 0 and text == "":
        return np.zeros(0)
    if not _FLOATS.fullmatch(text):
        raise _Invalid(f"{what} must be finite numbers, got {text[:40]!r}")
    values = np.array(text.split(" "), dtype=np.float64)
    if len(values) != count:
        raise _Invalid(f"{what} has {len(values)} values, expected {count}")
    if not np.isfinite(values).all():
        raise _Invalid(f"{what} must be finite numbers")
    return values


def _tree(fields: dict, index: int, n_features: int) -> dict:
    """One tree's arrays, checked to form a tree LightGBM would walk."""
    where = f"tree {index}"

    def field(key):
        if key not in fields:
            raise _Invalid(f"{where} has no {key}")
        return fields[key]

    n_leaves = int(
        _ints(field("num_leaves"), f"{where} num_leaves", 1, 1, _INT32_MAX)[0]
    )
    n_cat = int(_ints(field("num_cat"), f"{where} num_cat", 1, 0, n_leaves)[0])
    tree = {
        "num_leaves": n_leaves,
        "is_linear": bool(
            _ints(fields.get("is_linear", "0"), f"{where} is_linear", 1, 0, 1)[0]
        ),
        "leaf_value": _floats(field("leaf_value"), f"{where} leaf_value", n_leaves),
    }
    if n_leaves == 1:
        return tree
    n_internal = n_leaves - 1
    tree["split_feature"] = _ints(
        field("split_feature"), f"{where} split_feature", n_internal, 0, n_features - 1
    )
    tree["threshold"] = _floats(field("threshold"), f"{where} threshold", n_internal)
    tree["decision_type"] = _ints(
        fields.get("decision_type", " ".join(["0"] * n_internal)),
        f"{where} decision_type", n_internal, 0, _MAX_DECISION_TYPE,
    )  # fmt: skip
    if np.any((tree["decision_type"] >> 2) == 3):
        raise _Invalid(f"{where} decision_type has an unknown missing type")
    for key in ("left_child", "right_child"):
        tree[key] = _ints(
            field(key), f"{where} {key}", n_internal, -n_leaves, n_internal - 1
        )
    _check_structure(tree["left_child"], tree["right_child"], where)
    tree["leaf_count"] = _ints(
        field("leaf_count"), f"{where} leaf_count", n_leaves, 0, _INT32_MAX
    )
    tree["internal_count"] = _ints(
        field("internal_count"), f"{where} internal_count", n_internal, 1, _INT32_MAX
    )
    _check_counts(tree, where)
    categorical = (tree["decision_type"] & _CATEGORICAL_BIT) == 1
    if n_cat or categorical.any():
        _check_categories(tree, fields, n_cat, categorical, where)
    return tree


def _check_structure(left, right, where):
    """Children: internal nodes after their parent, each node reached once.

    LightGBM numbers internal nodes in the order it splits them, so every
    internal child has a larger index than its parent; with that, one parent
    per node means one tree rooted at node 0 (no cycle, nothing detached).
    """
    n_internal = len(left)
    children = np.concatenate([left, right])
    parents = np.tile(np.arange(n_internal), 2)
    internal = children >= 0
    if np.any(children[internal] <= parents[internal]):
        raise _Invalid(f"{where} has a child index not after its parent's")
    reached_internal = np.bincount(children[internal], minlength=n_internal)
    reached_leaves = np.bincount(~children[~internal], minlength=n_internal + 1)
    if np.any(reached_internal[1:] != 1) or np.any(reached_leaves != 1):
        raise _Invalid(f"{where}'s child indices do not form a tree")


def _check_counts(tree, where):
    """Each internal node's count is its children's sum (covers add up)."""
    count = np.concatenate([tree["internal_count"], tree["leaf_count"]])
    n_internal = len(tree["internal_count"])

    def children_count(key):
        child = tree[key]  # leaf l is ~l, after the internal nodes in count
        return count[np.where(child >= 0, child, n_internal + ~child)]

    if np.any(
        children_count("left_child") + children_count("right_child")
        != tree["internal_count"]
    ):
        raise _Invalid(
            f"{where}'s internal_count is not the sum of its children's counts"
        )


def _check_categories(tree, fields, n_cat, categorical, where):
    """Categorical nodes index ``num_cat`` bitsets of ``cat_threshold`` words.

    Node ``u``'s categories are the bits of ``cat_threshold[b[k]:b[k + 1]]``
    with ``k = threshold[u]`` and ``b = cat_boundaries``.
    """
    if n_cat == 0:
        raise _Invalid(f"{where} has categorical splits but num_cat=0")
    if "cat_boundaries" not in fields or "cat_threshold" not in fields:
        raise _Invalid(f"{where} has num_cat={n_cat} but no category bitsets")
    boundaries = _ints(
        fields["cat_boundaries"], f"{where} cat_boundaries", n_cat + 1, 0, _INT32_MAX
    )
    if boundaries[0] != 0 or np.any(np.diff(boundaries) < 0):
        raise _Invalid(f"{where} cat_boundaries must rise from 0")
    tree["cat_boundaries"] = boundaries
    tree["cat_threshold"] = _ints(
        fields["cat_threshold"], f"{where} cat_threshold", int(boundaries[-1]),
        0, 2**32 - 1,
    )  # fmt: skip
    index = tree["threshold"][categorical]
    if np.any((index != np.floor(index)) | (index < 0) | (index >= n_cat)):
        raise _Invalid(
            f"{where} has a categorical split whose threshold is not a bitset "
            f"index in [0, {n_cat})"
        )


def _pandas_categorical(lines):
    """The JSON list of each pandas categorical column's categories, or None.

    LightGBM's Python package reads the last line if it starts with
    ``pandas_categorical:`` (the categories are only names: they are
    checked to be lists of strings and numbers).
    """
    last = next((line for line in reversed(lines) if line.strip()), "").strip()
    key = "pandas_categorical:"
    if not last.startswith(key):
        return None
    try:
        categories = json.loads(last[len(key) :])
    except (ValueError, RecursionError) as exc:
        raise _Invalid(f"its pandas_categorical line is not JSON: {exc}") from None
    if categories is None:
        return None
    if not isinstance(categories, list) or not all(
        isinstance(column, list)
        and all(isinstance(c, str | int | float) for c in column)
        for column in categories
    ):
        raise _Invalid("pandas_categorical must be lists of categories")
    return categories
