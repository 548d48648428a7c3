"""A model file with a field that no known XGBoost release writes is refused.

A newer XGBoost may add a field that changes what the model predicts (3.4
moved DART's weights into the trees' model). Each object the prediction is
read from gets a field no release 2.0-3.4 writes; the file must be refused,
as JSON and as UBJSON, by the reader and by the command, naming the field
and the release that wrote it. The models of every family as the installed
XGBoost writes them, and the DART files of 2.1 to 3.4, pass.
"""

import copy
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from xgboost_models import FAMILIES, save, write_document

from skshapley.cli import main
from skshapley.trees._readers.xgboost.file import read_xgboost_model

xgb = pytest.importorskip("xgboost")

DART_FILES = sorted(
    path
    for path in (Path(__file__).parent / "data" / "xgboost_dart").glob("*.json")
    if not path.name.endswith(".expected.json")
)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("xgboost_fields")
    return {family: save(folder, family) for family in FAMILIES}


@pytest.fixture(scope="module")
def pandas_document():
    """A model of a frame with string and integer categories: every object."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(60, 2)), columns=["a", "b"])
    X["c"] = pd.Categorical(rng.choice(["u", "v", "w"], 60))
    X["d"] = pd.Categorical(rng.choice([3, 5, 8], 60))
    model = xgb.XGBRegressor(
        n_estimators=2, max_depth=2, enable_categorical=True, n_jobs=1
    ).fit(X, X["a"] + (X["c"] == "v"))
    return json.loads(bytes(model.get_booster().save_raw("json")))


def _forest(document):
    booster = document["learner"]["gradient_booster"]
    return booster.get("gbtree", booster)["model"]


# Where a field is added, and its path in the message.
PLACES = {
    "the document": lambda d: d,
    "learner": lambda d: d["learner"],
    "learner.learner_model_param": lambda d: d["learner"]["learner_model_param"],
    "learner.gradient_booster": lambda d: d["learner"]["gradient_booster"],
    "learner.gradient_booster.model": _forest,
    "learner.gradient_booster.model.gbtree_model_param": lambda d: _forest(d)[
        "gbtree_model_param"
    ],
    "learner.gradient_booster.model.cats": lambda d: _forest(d)["cats"],
    "learner.gradient_booster.model.cats.enc[3]": lambda d: _forest(d)["cats"]["enc"][
        3
    ],
    "learner.gradient_booster.model.trees[1]": lambda d: _forest(d)["trees"][1],
    "learner.gradient_booster.model.trees[1].tree_param": lambda d: _forest(d)["trees"][
        1
    ]["tree_param"],
}


@pytest.mark.parametrize("suffix", [".json", ".ubj"])
@pytest.mark.parametrize("place", PLACES)
def test_an_unknown_field_is_refused_naming_it_and_the_writer(
    pandas_document, tmp_path, place, suffix
):
    document = copy.deepcopy(pandas_document)
    PLACES[place](document)["tree_weights"] = [0.5]
    version = ".".join(str(v) for v in document["version"])
    path = write_document(tmp_path, document, suffix)
    with pytest.raises(
        TypeError,
        match=rf"^{path.name} has a field skshapley does not know, "
        rf"{re.escape(place)}\.tree_weights, "
        rf"written by XGBoost {version}; skshapley reads the model files of "
        r"XGBoost 2\.0 to 3\.4",
    ):
        read_xgboost_model(path)


def test_an_unknown_field_of_a_legacy_dart_booster_is_refused(tmp_path):
    path = next(p for p in DART_FILES if p.name.startswith("xgboost-3.2.0"))
    document = json.loads(path.read_text())
    document["learner"]["gradient_booster"]["gbtree"]["tree_weights"] = [1.0]
    with pytest.raises(
        TypeError, match=r"learner\.gradient_booster\.gbtree\.tree_weights, "
    ):
        read_xgboost_model(write_document(tmp_path, document, ".json"))


@pytest.mark.parametrize(
    ("version", "writer"),
    [
        ([3, 5, 0], "XGBoost 3.5.0"),
        (np.array([4, 0, 1], dtype=np.int32), "XGBoost 4.0.1"),  # typed UBJSON
        ("3.5", "an XGBoost release it does not name"),
        ([3, -1], "an XGBoost release it does not name"),
        (None, "an XGBoost release it does not name"),
    ],
)
def test_the_writer_is_named_from_the_version(files, tmp_path, version, writer):
    document = json.loads(files["regressor"][".json"].read_text())
    _forest(document)["trees"][0]["leaf_offsets"] = [0]
    document["version"] = version
    suffix = ".ubj" if isinstance(version, np.ndarray) else ".json"
    with pytest.raises(TypeError, match=rf", written by {writer}"):
        read_xgboost_model(write_document(tmp_path, document, suffix))


@pytest.mark.parametrize("suffix", [".json", ".ubj"])
@pytest.mark.parametrize("family", FAMILIES)
def test_files_of_the_installed_xgboost_pass(files, family, suffix):
    read_xgboost_model(files[family][suffix])


@pytest.mark.parametrize("path", DART_FILES, ids=lambda p: p.stem)
def test_files_of_every_known_release_pass(path):
    read_xgboost_model(path)


def test_the_command_refuses_an_unknown_field_in_one_line(files, tmp_path, capsys):
    document = json.loads(files["regressor"][".json"].read_text())
    _forest(document)["weight_scale"] = 2.0
    path = write_document(tmp_path, document, ".json")
    data = tmp_path / "rows.csv"
    pd.DataFrame(np.zeros((2, 4)), columns=["f0", "f1", "f2", "f3"]).to_csv(
        data, index=False
    )
    out = tmp_path / "phi.csv"
    status = main(["explain", "--model", str(path), "--data", str(data),
                   "--out", str(out), "-q"])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 1
    assert len(err.strip().splitlines()) == 1, err
    assert "learner.gradient_booster.model.weight_scale" in err
    assert not out.exists()
