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
counts that add up, and the sizes in :mod:`skshapley._runtime.limits`. A file that
fails any check raises one ``ValueError`` naming the file and the problem.
"""

import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from ...._errors import UnsupportedModelError
from ...._runtime.files import read_limited
from ...._runtime.limits import MAX_FEATURES, MAX_MODEL_FILE_BYTES, MAX_OUTPUTS
from .arrays import CATEGORICAL_BIT, FLOAT, InvalidModel, ints, tree_arrays

# What each objective's raw score (``predict(raw_score=True)``) is.
RAW_OUTPUTS = {
    "regression": "value",
    "regression_l1": "value",
    "huber": "value",
    "fair": "value",
    "quantile": "value",
    "mape": "value",
    "poisson": "log",
    "gamma": "log",
    "tweedie": "log",
    "binary": "log-odds",
    "cross_entropy": "log-odds",
    "cross_entropy_lambda": "margin",
    "multiclassova": "log-odds",
    "multiclass": "margin",
    "lambdarank": "ranking score",
    "rank_xendcg": "ranking score",
}

_CATEGORY_INFO = re.compile(r"-?\d{1,10}(?::-?\d{1,10})*")

# The keys LightGBM 4.x writes (``version=v4``): in the header
# (``GBDT::SaveModelToString``) and in each tree (``Tree::ToString``). A
# key outside them is from another release and may change the predictions:
# refused, naming it (:class:`_UnknownKey`).
_HEADER_KEYS = frozenset(
    {
        "version", "num_class", "num_tree_per_iteration", "label_index",
        "max_feature_idx", "objective", "average_output", "feature_names",
        "monotone_constraints", "feature_infos", "tree_sizes",
    }
)  # fmt: skip
_TREE_KEYS = frozenset(
    {
        "num_leaves", "num_cat", "split_feature", "split_gain", "threshold",
        "decision_type", "left_child", "right_child", "leaf_value", "leaf_weight",
        "leaf_count", "internal_value", "internal_weight", "internal_count",
        "cat_boundaries", "cat_threshold", "is_linear", "shrinkage", "leaf_const",
        "num_features", "leaf_features", "leaf_coeff",
    }
)  # fmt: skip


class _UnknownKey(Exception):
    """A key no known LightGBM release writes: where, and the file's version."""


@dataclass(frozen=True, eq=False, repr=False)
class LightGBMTextModel:
    """A LightGBM model read from its text format and checked.

    What :func:`read_model_file` returns; :class:`TreeExplainer` explains it
    as the LightGBM Booster it describes.

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
    trees : dict of ndarray
        All trees' arrays, concatenated (see :mod:`._lightgbm_arrays`).
    pandas_categorical : list or None
        The categories of each pandas categorical training column.
    """

    # What messages and reports call the model.
    description: ClassVar[str] = "LightGBM model file"

    n_outputs: int
    n_features: int
    feature_names: tuple
    categorical_features: tuple
    objective: str
    average_output: bool
    trees: dict
    pandas_categorical: list | None

    @property
    def n_trees(self) -> int:
        return len(self.trees["num_leaves"])

    def __repr__(self) -> str:
        return (
            f"LightGBMTextModel(n_trees={self.n_trees}, "
            f"n_features={self.n_features}, n_outputs={self.n_outputs})"
        )


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
    data = read_limited(
        path,
        MAX_MODEL_FILE_BYTES,
        "{name} is larger than {limit:,} bytes, the largest model file "
        "skshapley reads.",
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
    skshapley.UnsupportedModelError
        For a header or tree key that LightGBM 4.x does not write, naming
        it and the file's ``version``.
    """
    try:
        return _read(text)
    except InvalidModel as exc:
        raise ValueError(f"{source} is not a valid LightGBM model: {exc}.") from None
    except _UnknownKey as exc:
        where, key, version = exc.args
        raise UnsupportedModelError(
            f"{source} has a field skshapley does not know, {key[:60]!r} in "
            f"{where}, written by LightGBM's model format {version[:20]!r}; "
            "skshapley reads the text files of LightGBM 4.x (format 'v4') and "
            "does not explain a field whose effect on the predictions it does "
            "not know."
        ) from None


def _read(text: str) -> LightGBMTextModel:
    if "\x00" in text:
        raise InvalidModel("it contains NUL bytes")
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if lines[0] != "tree":
        raise InvalidModel(f"its first line must be 'tree', got {lines[0][:40]!r}")
    position, header = _key_values(lines, 1, "the header", stop_at_tree=True)
    version = header.get("version", "none given")
    _check_keys(header, _HEADER_KEYS, "the header", version)
    n_outputs = _header_int(header, "num_class", 1, MAX_OUTPUTS)
    if "num_tree_per_iteration" in header:
        per_iteration = _header_int(header, "num_tree_per_iteration", 1, MAX_OUTPUTS)
        if per_iteration != n_outputs:
            raise InvalidModel(
                f"num_tree_per_iteration={per_iteration} differs from "
                f"num_class={n_outputs}"
            )
    n_features = _header_int(header, "max_feature_idx", 0, MAX_FEATURES - 1) + 1
    names = _tokens(header, "feature_names", n_features)
    if len(set(names)) != len(names):
        raise InvalidModel("feature_names has duplicated names")
    infos = _tokens(header, "feature_infos", n_features)
    categorical = tuple(j for j, info in enumerate(infos) if _is_categorical(info))

    blocks, position = _tree_blocks(lines, position)
    for t, block in enumerate(blocks):
        _check_keys(block, _TREE_KEYS | {"_line"}, f"tree {t}", version)
    if not blocks:
        raise InvalidModel("it has no trees")
    if len(blocks) % n_outputs:
        raise InvalidModel(
            f"its {len(blocks)} trees are not a whole number of iterations of "
            f"{n_outputs} trees"
        )
    if "tree_sizes" in header:
        _check_tree_sizes(header["tree_sizes"], lines, blocks, position - 1)
    _check_complete(lines[position:])
    trees = tree_arrays(blocks, n_features)
    _check_split_kinds(trees, categorical)
    return LightGBMTextModel(
        n_outputs=n_outputs,
        n_features=n_features,
        feature_names=tuple(names),
        categorical_features=categorical,
        objective=_objective(header.get("objective")),
        average_output="average_output" in header,
        trees=trees,
        pandas_categorical=_pandas_categorical(lines[position:]),
    )


def _check_keys(fields, known, where, version):
    """Raise :class:`_UnknownKey` for the first of ``fields`` not ``known``."""
    unknown = sorted(key for key in fields if key not in known)
    if unknown:
        raise _UnknownKey(where, unknown[0], version)


def _check_complete(trailer):
    """The sections after the trees end: a file cut there is truncated too.

    They hold nothing the trees need, but LightGBM's loader aborts on a
    ``parameters:`` section without its end.
    """
    if "parameters:" in trailer and "end of parameters" not in trailer:
        raise InvalidModel(
            "its parameters section has no 'end of parameters' line (is the file "
            "truncated?)"
        )


def _check_split_kinds(trees, categorical):
    """No feature has both numerical and categorical splits.

    LightGBM never makes them (a feature is binned one way or the other);
    the table truncates categorical features' values before routing, which
    would change the routes of numerical splits on them.
    """
    kind = trees["decision_type"] & CATEGORICAL_BIT
    on_categories = set(trees["split_feature"][kind == 1].tolist())
    numerical = set(trees["split_feature"][kind == 0].tolist())
    both = sorted(numerical.intersection(on_categories.union(categorical)))
    if both:
        raise InvalidModel(f"feature {both[0]} is categorical but has numerical splits")


def _objective(objective: str | None) -> str:
    """The objective line (``binary sigmoid:1``), if LightGBM would read it."""
    if objective is None:
        return ""  # custom objectives are not saved
    name, *options = objective.split(" ")
    if name not in RAW_OUTPUTS:
        raise InvalidModel(f"its objective {name[:40]!r} is not one of LightGBM's")
    for option in options:
        key, _, value = option.partition(":")
        if option != "sqrt" and not (
            key.isidentifier()
            and re.fullmatch(FLOAT, value)
            and np.isfinite(float(value))
        ):
            raise InvalidModel(f"its objective has an option {option[:40]!r}")
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
            raise InvalidModel(f"{where} has {key!r} twice (line {position})")
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
            raise InvalidModel(
                f"line {position + 1} must be 'Tree={len(blocks)}' or "
                f"'end of trees', got {line[:40]!r}"
            )
        start = position
        position, fields = _key_values(
            lines, position + 1, f"tree {len(blocks)}", stop_at_tree=False
        )
        fields["_line"] = start
        blocks.append(fields)
    if position >= len(lines):
        raise InvalidModel("it has no 'end of trees' line (is the file truncated?)")
    return blocks, position + 1


def _check_tree_sizes(sizes, lines, blocks, end):
    """LightGBM finds trees by these byte sizes: they must match the blocks.

    A tree's size runs from its ``Tree=`` line to the next tree's (the last
    one's to ``end of trees``, line ``end``), blank lines included. LightGBM
    reads as many trees as there are sizes, each from the sum of the sizes
    before it: the last size is not used, and is only checked to be a number.
    """
    starts = [block["_line"] for block in blocks] + [end]
    expected = [
        str(sum(len(line.encode()) + 1 for line in lines[start:stop]))
        for start, stop in itertools.pairwise(starts)
    ]
    sizes = sizes.split(" ")
    if sizes[:-1] != expected[:-1] or not (
        len(sizes) == len(expected) and sizes[-1].isdigit()
    ):
        raise InvalidModel("tree_sizes does not match the sizes of the trees")


def _header_int(header, key, low, high) -> int:
    if key not in header:
        raise InvalidModel(f"the header has no {key}")
    return int(ints(header[key], key, 1, low, high)[0])


def _tokens(header, key, count) -> list:
    if key not in header:
        raise InvalidModel(f"the header has no {key}")
    tokens = header[key].split(" ")
    if len(tokens) != count or not all(tokens):
        raise InvalidModel(f"{key} must list {count} space-separated entries")
    return tokens


def _is_categorical(info: str) -> bool:
    """A ``feature_infos`` entry: ``none``, ``[min:max]`` or ``c1:c2:...``."""
    if info == "none" or (info.startswith("[") and info.endswith("]")):
        return False
    if not _CATEGORY_INFO.fullmatch(info):
        raise InvalidModel(f"feature_infos has an entry {info[:40]!r}")
    return True


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
        raise InvalidModel(f"its pandas_categorical line is not JSON: {exc}") from None
    if categories is None:
        return None
    if not isinstance(categories, list) or not all(
        isinstance(column, list)
        and all(isinstance(c, str | int | float) for c in column)
        for column in categories
    ):
        raise InvalidModel("pandas_categorical must be lists of categories")
    return categories
