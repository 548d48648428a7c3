"""One name for a model, in reports, the command and explainers' summaries."""

import pytest
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.kernel_ridge import KernelRidge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skshapley._contract.naming import model_name


class _FileModel:
    """A model read from a file by the command: it describes itself."""

    description = "XGBoost model file"


class _Numbered:
    """A class whose ``description`` is no text: it is not a name."""

    description = 3


def test_scikit_learn_models_by_class_name():
    assert model_name(GradientBoostingRegressor()) == "GradientBoostingRegressor"


def test_a_pipeline_names_its_steps():
    pipeline = make_pipeline(StandardScaler(), KernelRidge())
    assert model_name(pipeline) == "Pipeline(StandardScaler, KernelRidge)"


def test_other_libraries_are_prefixed():
    xgboost = pytest.importorskip("xgboost")
    assert model_name(xgboost.XGBRegressor()) == "xgboost.XGBRegressor"
    pipeline = make_pipeline(StandardScaler(), xgboost.XGBRegressor())
    assert model_name(pipeline) == "Pipeline(StandardScaler, xgboost.XGBRegressor)"


def test_a_model_read_from_a_file_describes_itself():
    assert model_name(_FileModel()) == "XGBoost model file"
    # Not a string: the class name, prefixed by its (non-sklearn) library.
    assert model_name(_Numbered()).endswith("._Numbered")


@pytest.mark.parametrize("steps", [[int, ("scaler", 1)], [("a", 1, 2)], "steps"])
def test_a_malformed_pipeline_is_named_by_its_class(steps):
    # A pipeline read from a file may hold anything as its steps; the
    # unsupported-model error names it without failing.
    pipeline = make_pipeline(StandardScaler())
    pipeline.steps = steps
    assert model_name(pipeline) == "Pipeline"
