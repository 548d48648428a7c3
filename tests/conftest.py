"""Test-suite settings shared by every test module."""

import os

from hypothesis import settings

# CI runs a fixed set of examples (reproducible failures); locally hypothesis
# explores anew on each run.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
