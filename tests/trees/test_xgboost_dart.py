"""DART models as every XGBoost release writes them.

XGBoost has written DART's tree weights (``weight_drop``) in three places:
up to 3.2 a ``"dart"`` booster holds them beside its ``gbtree``, 3.3 writes
a ``"gbtree"`` booster with them beside its ``model``, 3.4 inside ``model``.
``data/xgboost_dart/`` holds a regressor and a multiclass model saved by
xgboost 2.1.4, 3.2.0, 3.3.0 and 3.4.1 (``data/make_xgboost_dart.py``), each
with the margins and ``pred_contribs`` that the release that wrote it
computed: the oracle does not depend on the XGBoost installed here (3.2
reads a 3.4 DART model as unweighted, so it could not serve as one).

Each file, as JSON and re-encoded as UBJSON, must give that release's margin
and contributions; rewritten into each other layout it must give the same
table; weights in two places, of the wrong length or not finite are refused.
"""

import copy
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from xgboost_models import write_document

from skshapley import TreeExplainer
from skshapley.trees._readers.xgboost.file import read_xgboost_model
from skshapley.trees._readers.xgboost.model import parse_document

FOLDER = Path(__file__).parent / "data" / "xgboost_dart"
EXPECTED = sorted(FOLDER.glob("*.expected.json"))
EPS32 = float(np.finfo(np.float32).eps)

# Where each release puts the weights: the layout of its files.
LAYOUTS = {"2.1.4": "dart", "3.2.0": "dart", "3.3.0": "beside", "3.4.1": "inside"}


def _stem(expected_path):
    return expected_path.name.removesuffix(".expected.json")


def _load(expected_path):
    expected = json.loads(expected_path.read_text())
    document = json.loads((FOLDER / f"{_stem(expected_path)}.json").read_text())
    rows = np.array(expected["rows"], dtype=float)  # None -> NaN
    return document, expected, rows


def _layout(document):
    booster = document["learner"]["gradient_booster"]
    if booster["name"] == "dart":
        return "dart"
    return "beside" if "weight_drop" in booster else "inside"


def _weights(document):
    """The weight list, wherever the document holds it."""
    booster = document["learner"]["gradient_booster"]
    if "weight_drop" in booster:
        return booster["weight_drop"]
    return booster["model"]["weight_drop"]


def _relayout(document, layout):
    """``document`` with its trees and weights where ``layout`` puts them."""
    out = copy.deepcopy(document)
    booster = out["learner"]["gradient_booster"]
    weights = _weights(document)
    model = (
        booster["gbtree"]["model"] if booster["name"] == "dart" else booster["model"]
    )
    model.pop("weight_drop", None)
    if layout == "dart":
        booster.clear()
        booster.update(name="dart", gbtree={"name": "gbtree", "model": model})
        booster["weight_drop"] = weights
    elif layout == "beside":
        booster.clear()
        booster.update(name="gbtree", model=model, weight_drop=weights)
    else:
        booster.clear()
        booster.update(name="gbtree", model={**model, "weight_drop": weights})
    return out


def test_the_files_cover_every_release_and_layout():
    """The oracle set is what this module's docstring says it is."""
    releases = {json.loads(p.read_text())["xgboost"] for p in EXPECTED}
    assert releases == set(LAYOUTS)
    for path in EXPECTED:
        document, expected, _ = _load(path)
        assert _layout(document) == LAYOUTS[expected["xgboost"]], path.name
        # DART's weights differ from 1, or the files would test nothing.
        assert np.ptp(_weights(document)) > 0.1, path.name


@pytest.mark.parametrize("suffix", [".json", ".ubj"])
@pytest.mark.parametrize("expected_path", EXPECTED, ids=_stem)
def test_dart_file_gives_its_writers_margin_and_contributions(
    tmp_path, expected_path, suffix
):
    document, expected, rows = _load(expected_path)
    explainer = TreeExplainer(
        read_xgboost_model(write_document(tmp_path, document, suffix))
    )
    explainer.fit()
    n_outputs = len(explainer.output_names_)
    margin = np.array(expected["margin"]).reshape(len(rows), n_outputs)
    contribs = np.array(expected["contribs"]).reshape(len(rows), n_outputs, -1)

    # XGBoost sums the base score and <= 12 weighted float32 leaves
    # (|leaf * weight| < 2) in float32: 2 roundings per term of at most
    # half an ulp of a sum below 32, i.e. 26 * 16 eps32.
    atol = 26 * 16 * EPS32
    raw = explainer.raw_predict(rows).reshape(len(rows), n_outputs)
    np.testing.assert_allclose(raw, margin, rtol=0, atol=atol)

    phi = explainer.explain(rows).to_numpy().reshape(len(rows), n_outputs, -1)
    total = phi.sum(axis=2) + np.atleast_1d(explainer.expected_value_)
    np.testing.assert_allclose(total, margin, rtol=0, atol=atol)
    # XGBoost's float32 TreeSHAP at depth 2: 1e-5 of the largest value
    # (see test_xgboost.CONTRIBS_RTOL); an unweighted tree is off by 0.1.
    scale = np.abs(contribs).max()
    np.testing.assert_allclose(phi, contribs[..., :-1], rtol=0, atol=1e-5 * scale)


@pytest.mark.parametrize("expected_path", EXPECTED, ids=_stem)
def test_every_layout_of_a_dart_model_parses_alike(expected_path):
    document, _, _ = _load(expected_path)
    tables = {
        layout: parse_document(_relayout(document, layout), source="model.json")
        for layout in ("dart", "beside", "inside")
    }
    reference = tables.pop(LAYOUTS[json.loads(expected_path.read_text())["xgboost"]])
    for layout, table in tables.items():
        for field in dataclasses.fields(table):
            np.testing.assert_equal(
                getattr(table, field.name),
                getattr(reference, field.name),
                err_msg=f"{layout}: {field.name}",
            )


def test_an_installed_xgboost_reads_older_files_as_their_writer():
    """The recorded oracles agree with this XGBoost where it reads the layout.

    Every release reads the ``"dart"`` layout of older ones; 3.3 and 3.4
    files are read faithfully only by 3.4 (and 3.3 its own).
    """
    xgb = pytest.importorskip("xgboost")
    installed = tuple(int(p) for p in xgb.__version__.split(".")[:2])
    checked = 0
    for path in EXPECTED:
        document, expected, rows = _load(path)
        writer = tuple(int(p) for p in expected["xgboost"].split(".")[:2])
        if writer > installed:
            continue
        booster = xgb.Booster()
        booster.load_model(bytearray(json.dumps(document).encode()))
        margin = booster.predict(xgb.DMatrix(rows), output_margin=True)
        np.testing.assert_allclose(
            margin.ravel(), np.ravel(expected["margin"]), rtol=0, atol=1e-5
        )
        checked += 1
    assert checked >= 4  # at least 2.1.4's and 3.2.0's files


def _regressor():
    return _load(FOLDER / "xgboost-3.4.1-regressor.expected.json")[0]


@pytest.mark.parametrize("layout", ["dart", "beside", "inside"])
def test_weights_of_the_wrong_length_or_not_finite_are_refused(tmp_path, layout):
    document = _relayout(_regressor(), layout)
    _weights(document).pop()
    with pytest.raises(ValueError, match=r"weight_drop has 3 entries for 4 trees"):
        read_xgboost_model(write_document(tmp_path, document, ".json"))
    document = _relayout(_regressor(), layout)
    _weights(document)[1] = float("inf")
    with pytest.raises(ValueError, match=r"weight_drop holds non-finite weights"):
        read_xgboost_model(write_document(tmp_path, document, ".json"))


def test_weights_in_two_places_are_refused(tmp_path):
    document = _relayout(_regressor(), "inside")
    booster = document["learner"]["gradient_booster"]
    booster["weight_drop"] = [1.0] * len(booster["model"]["weight_drop"])
    with pytest.raises(ValueError, match=r"weight_drop .* are both present"):
        read_xgboost_model(write_document(tmp_path, document, ".json"))


@pytest.mark.parametrize("layout", ["dart", "beside", "inside"])
def test_an_empty_weight_list_means_unweighted_trees(layout):
    """XGBoost 3.4 treats ``weight_drop: []`` as no weights (all 1)."""
    document = _relayout(_regressor(), layout)
    _weights(document).clear()
    empty = parse_document(document, source="model.json")
    document = _relayout(_regressor(), layout)
    weights = _weights(document)
    weights[:] = [1.0] * len(weights)
    ones = parse_document(document, source="model.json")
    np.testing.assert_array_equal(empty.value, ones.value)
    weighted = parse_document(_relayout(_regressor(), layout), source="model.json")
    assert not np.array_equal(weighted.value, ones.value)
