"""The fields an XGBoost model document may hold where predictions are made.

A release newer than the ones skshapley knows can add a field that changes
what the model predicts (XGBoost 3.4 moved DART's tree weights into the
trees' model; a parser unaware of such a move explains another model). So
every object that the prediction is read from may hold only the fields that
XGBoost 2.0 to 3.4 write there; any other field is refused, naming it and
the release that wrote the file. Objects that hold training settings only
(``objective`` and its parameters, ``attributes``) are not checked.
"""

import numpy as np

from ...._errors import UnsupportedModelError

#: The releases whose fields are known (the ones this parser follows).
KNOWN_RELEASES = "2.0 to 3.4"

_TREE = frozenset(
    {
        "base_weights", "categories", "categories_nodes", "categories_segments",
        "categories_sizes", "default_left", "id", "left_children", "loss_changes",
        "parents", "right_children", "split_conditions", "split_indices",
        "split_type", "sum_hessian", "tree_param",
    }
)  # fmt: skip
_TREE_PARAM = frozenset({"num_deleted", "num_feature", "num_nodes", "size_leaf_vector"})
_FOREST = frozenset(
    {
        "cats", "gbtree_model_param", "iteration_indptr", "tree_info", "trees",
        "weight_drop",
    }
)  # fmt: skip
_LEARNER = frozenset(
    {
        "attributes", "feature_names", "feature_types", "gradient_booster",
        "learner_model_param", "objective",
    }
)  # fmt: skip
_MODEL_PARAM = frozenset(
    {"base_score", "boost_from_average", "num_class", "num_feature", "num_target"}
)
_BOOSTER = frozenset({"name", "model", "gbtree", "weight_drop"})
_CATEGORIES = frozenset({"enc", "feature_segments", "sorted_idx"})
_ENCODING = frozenset({"offsets", "values", "type"})


def check_known_fields(document, source: str) -> None:
    """Refuse ``document`` if a prediction object holds an unknown field.

    Only objects are looked into (what is not an object is left to the
    parser's own checks, which say what it should be).

    Raises
    ------
    skshapley.UnsupportedModelError
        Naming the field by its path and the XGBoost release that wrote the
        document (its ``version``).
    """
    for path, fields, known in _prediction_objects(document):
        unknown = sorted(str(key) for key in fields if key not in known)
        if unknown:
            raise UnsupportedModelError(
                f"{source} has a field skshapley does not know, "
                f"{path}.{unknown[0][:60]}, written by {_writer(document)}; "
                f"skshapley reads the model files of XGBoost {KNOWN_RELEASES} "
                "and does not explain a field whose effect on the predictions "
                "it does not know."
            )


def _prediction_objects(document):
    """(path, object, known fields) of each object the prediction reads."""
    objects = [("the document", document, frozenset({"learner", "version"}))]
    learner = _object(document, "learner")
    objects.append(("learner", learner, _LEARNER))
    objects.append(
        (
            "learner.learner_model_param",
            _object(learner, "learner_model_param"),
            _MODEL_PARAM,
        )
    )
    path = "learner.gradient_booster"
    booster = _object(learner, "gradient_booster")
    if booster.get("name") not in ("gbtree", "dart"):
        return objects  # not a tree booster: the parser refuses it by name
    objects.append((path, booster, _BOOSTER))
    if "gbtree" in booster:  # a DART booster of XGBoost <= 3.2
        booster, path = _object(booster, "gbtree"), f"{path}.gbtree"
        objects.append((path, booster, _BOOSTER))
    forest, path = _object(booster, "model"), f"{path}.model"
    objects.append((path, forest, _FOREST))
    objects.append(
        (
            f"{path}.gbtree_model_param",
            _object(forest, "gbtree_model_param"),
            frozenset({"num_parallel_tree", "num_trees"}),
        )
    )
    categories = _object(forest, "cats")
    objects.append((f"{path}.cats", categories, _CATEGORIES))
    encodings = categories.get("enc")
    for j, encoding in enumerate(encodings if isinstance(encodings, list) else []):
        if isinstance(encoding, dict):
            objects.append((f"{path}.cats.enc[{j}]", encoding, _ENCODING))
    trees = forest.get("trees")
    for t, tree in enumerate(trees if isinstance(trees, list) else []):
        if isinstance(tree, dict):
            objects.append((f"{path}.trees[{t}]", tree, _TREE))
            tree_param = _object(tree, "tree_param")
            objects.append((f"{path}.trees[{t}].tree_param", tree_param, _TREE_PARAM))
    return objects


def _object(parent, key):
    """``parent[key]`` if both are objects, else an empty one."""
    value = parent.get(key) if isinstance(parent, dict) else None
    return value if isinstance(value, dict) else {}


def _writer(document) -> str:
    """ "XGBoost 3.5.0", from the document's ``version`` if it is one."""
    version = document.get("version") if isinstance(document, dict) else None
    if isinstance(version, np.ndarray):  # a typed UBJSON array
        version = version.tolist()
    if (
        isinstance(version, list)
        and 1 <= len(version) <= 3
        and all(isinstance(v, int) and 0 <= v < 10_000 for v in version)
    ):
        return "XGBoost " + ".".join(str(v) for v in version)
    return "an XGBoost release it does not name (no valid 'version')"
