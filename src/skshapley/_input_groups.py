"""Stand-in for the inputs part's module (replaced by it at merge).

Traces transformed columns to inputs by their names only: enough for the
pipelines tests of ColumnTransformers of encoders, scalers and imputers.
"""

from collections.abc import Sequence


def input_groups(preprocess, input_names: Sequence[str]) -> dict[str, list[str]]:
    """For each raw input column, the transformed columns that come from it."""
    groups = {name: [] for name in input_names}
    for out in preprocess.get_feature_names_out():
        bare = str(out).split("__")[-1].removeprefix("missingindicator_")
        owner = max((name for name in input_names if bare.startswith(name)), key=len)
        groups[owner].append(str(out))
    return groups
