"""XGBoost model files (``.json``, ``.ubj``), read without XGBoost.

XGBoost's own loader trusts the file: altered files crash it (abort,
segfault) or make it allocate without bound. Here the file is decoded by
Python's ``json`` or by :mod:`._ubjson`, within stated limits, and its
document is checked and parsed once by the same code that reads a live
Booster (:func:`._xgboost.parse_document`): what is returned holds plain
arrays only.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from ...._runtime.files import read_limited
from ...._runtime.limits import MAX_MODEL_FILE_BYTES
from ..._table import TreeEnsemble
from .model import parse_document
from .ubjson import decode_ubjson

# Containers open at once in an XGBoost document: XGBoost nests about 8
# deep (learner > gradient_booster > gbtree > model > trees > [t] >
# tree_param); deeper nesting is not a model.
MAX_NESTING = 32


# eq=False: models compare by identity (comparing their arrays' tables
# element-wise has no single truth value).
@dataclass(frozen=True, eq=False)
class XGBoostModel:
    """An XGBoost tree model read from a file, for :class:`TreeExplainer`.

    It predicts what ``xgboost.Booster(model_file=path)`` predicts with
    ``output_margin=True`` (all trees, NaN missing), and needs no xgboost.

    Attributes
    ----------
    ensemble : TreeEnsemble
        The parsed trees.
    path : str
        The file it was read from.
    """

    ensemble: TreeEnsemble = field(repr=False)
    path: str

    # What messages and reports call the model.
    description: ClassVar[str] = "XGBoost model file"


def read_xgboost_model(path) -> XGBoostModel:
    """Read an XGBoost ``.json`` or ``.ubj`` model file.

    Parameters
    ----------
    path : str or path-like
        The file; ``.ubj`` files are UBJSON, all others JSON (as XGBoost's
        ``save_model`` chooses by extension).

    Returns
    -------
    XGBoostModel

    Raises
    ------
    ValueError
        ``"<file> is not a valid XGBoost model: <what is wrong>"`` if the file
        is larger than ``MAX_MODEL_FILE_BYTES``, is not JSON / UBJSON, nests
        deeper than ``MAX_NESTING`` or holds a malformed model.
    TypeError
        For a valid model the tree table cannot reproduce (see
        :func:`parse_xgboost`).
    OSError
        If the file cannot be read.

    Examples
    --------
    >>> import numpy as np, xgboost
    >>> from skshapley import TreeExplainer
    >>> from skshapley.trees._readers.xgboost.file import read_xgboost_model
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> model = xgboost.XGBRegressor(n_estimators=2).fit(X, X[:, 0])
    >>> model.save_model("model.json")
    >>> explainer = TreeExplainer(read_xgboost_model("model.json")).fit()
    >>> explainer.explain(X[:2]).shape
    (2, 2)
    """
    path = Path(path)
    name = path.name
    data = read_limited(
        path,
        MAX_MODEL_FILE_BYTES,
        "{name} is not a valid XGBoost model: it has {size:,} bytes, more than "
        "the {limit:,} allowed",
    )
    try:
        document = _decode(data, ubjson=path.suffix.lower() == ".ubj")
    except ValueError as exc:
        raise ValueError(f"{name} is not a valid XGBoost model: {exc}") from exc
    return XGBoostModel(parse_document(document, source=name), str(path))


def parse_xgboost_file(model: XGBoostModel) -> TreeEnsemble:
    """The trees of a model read by :func:`read_xgboost_model`."""
    return model.ensemble


def _decode(data: bytes, *, ubjson: bool):
    """The document in ``data``; ``ValueError`` if it is not one."""
    if ubjson:
        return decode_ubjson(data, max_depth=MAX_NESTING)
    try:
        document = json.loads(data)
    except RecursionError:  # json's C scanner recurses once per level
        raise ValueError(f"JSON nested deeper than {MAX_NESTING}") from None
    except ValueError as exc:  # also UnicodeDecodeError
        raise ValueError(f"not JSON ({exc})") from exc
    _check_nesting(document)
    return document


def _check_nesting(document) -> None:
    """Refuse documents nesting containers deeper than ``MAX_NESTING``."""
    level = [document]
    for _ in range(MAX_NESTING + 1):
        level = [
            child
            for value in level
            if isinstance(value, dict | list)
            for child in (value.values() if isinstance(value, dict) else value)
        ]
        if not level:
            return
    raise ValueError(f"JSON nested deeper than {MAX_NESTING}")
