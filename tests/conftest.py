"""Test-suite settings shared by every test module."""

import importlib.util
import os
from pathlib import Path

import pytest
from hypothesis import settings

from skshapley._runtime import threads

# CI runs a fixed set of examples (reproducible failures); locally hypothesis
# explores anew on each run.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True)
def every_thread_for_any_work(request):
    """Calls use all their threads however little their work.

    A call of less work than ``MIN_THREAD_WORK_NS`` per thread runs on fewer
    threads; the small models of the tests would then never reach the
    compiled code's parallel paths for a few rows, which the tests check
    bit for bit against one thread. Tests marked ``real_thread_cap`` keep
    the cap. (Its own patch, not the test's ``monkeypatch``: that one is
    undone after the test's other fixtures are torn down.)
    """
    with pytest.MonkeyPatch.context() as patch:
        if request.node.get_closest_marker("real_thread_cap") is None:
            patch.setattr(threads, "MIN_THREAD_WORK_NS", 1)  # a nanosecond
        yield


@pytest.fixture(scope="session")
def tool():
    """The developer command ``tools/report_screenshots.py``, as a module."""
    path = Path(__file__).resolve().parents[1] / "tools" / "report_screenshots.py"
    spec = importlib.util.spec_from_file_location("report_screenshots", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
