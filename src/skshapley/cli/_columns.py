"""The data's columns against the model's: extra columns, identifiers, hints.

A table exported for a model often has more columns than the model read:
the label, a row identifier, notes. ``--ignore-extra-columns`` leaves out
the columns the model does not know, and says which; without it, the
explainer's error about unknown columns gets hints: ``--index`` for a
column that looks like row identifiers, ``--target`` for a single column
left, ``--ignore-extra-columns`` for several.
"""

import re

import pandas as pd

from ._explaining import make_explainer
from ._inputs import CommandError

# Names of identifier columns: "id", "patient_id", "row-key", "uuid",
# "patientId", "PatientID", and "Unnamed: 0", pandas' name for the index
# column that DataFrame.to_csv writes.
_ID_NAME = re.compile(
    r"(?i:(?:^|[\W_])(?:id|key|uuid|guid|index)$)|[a-z0-9](?:Id|ID)$|^Unnamed: \d+$"
)


def model_columns(model, groups) -> list[str]:
    """The names of the columns ``model`` reads, for ``--ignore-extra-columns``.

    A scikit-learn model's ``feature_names_in_``; else (XGBoost and LightGBM
    files) those of its explainer, fitted without background data. A model
    that reads its columns by position is refused: its extra columns cannot
    be told apart.
    """
    names = getattr(model, "feature_names_in_", None)
    if names is None:
        try:
            explainer = make_explainer(model, groups)
        except CommandError:  # needs --background: its names were the model's
            explainer = None
        if explainer is not None and explainer.columns_by_name_:
            names = explainer.feature_names_in_
    if names is None:
        raise CommandError(
            "--ignore-extra-columns needs a model that knows its columns' names; "
            "this one reads them by position (it was fitted on an array), so "
            "leave out the extra columns from the file instead"
        )
    return [str(name) for name in names]


def known_columns(
    data: pd.DataFrame, known: list[str], what: str
) -> tuple[pd.DataFrame, str | None]:
    """``data`` without the columns not in ``known``, and a note naming them.

    The note (None if no column is left out) says ``what`` they came from.
    Columns of ``known`` that ``data`` lacks stay missing: the explainer
    names them.
    """
    extra = [column for column in data.columns if str(column) not in set(known)]
    if not extra:
        return data, None
    shown = ", ".join(repr(str(column)) for column in extra)
    plural = "s" if len(extra) > 1 else ""
    return data.drop(columns=extra), (
        f"--ignore-extra-columns: left out {len(extra)} column{plural} of "
        f"{what} that the model does not know: {shown}"
    )


def matches_model(explainer, X: pd.DataFrame) -> bool:
    """Whether ``X`` has the columns the explainer reads (by name or number)."""
    if not explainer.columns_by_name_:
        return X.shape[1] == explainer.n_features_in_
    return sorted(map(str, X.columns)) == sorted(explainer.feature_names_in_)


def column_hints(explainer, X: pd.DataFrame) -> str:
    """Hints for an error about ``X``'s columns: ``"; hint; hint"`` or ``""``.

    A column the model does not know that looks like row identifiers (by
    its name, or text with a different value in each row) gets
    ``--index``; when no column is missing, the one unknown column left
    gets ``--target``, and several get ``--ignore-extra-columns``.
    """
    if not explainer.columns_by_name_:
        return ""
    features = {str(name) for name in explainer.feature_names_in_}
    columns = [str(column) for column in X.columns]
    unknown = [column for column in columns if column not in features]
    missing = features.difference(columns)
    hints = []
    reasons = {column: _id_reason(X[column]) for column in unknown}
    identifiers = [column for column in unknown if reasons[column] is not None]
    if identifiers:
        name = identifiers[0]
        hints.append(
            f"{name!r} looks like a column of row identifiers ({reasons[name]}): "
            f"pass --index {name} to name the rows by it"
        )
    others = [column for column in unknown if column not in identifiers[:1]]
    if not missing and len(others) == 1:
        hints.append(f"if {others[0]!r} is the label, pass --target {others[0]}")
    elif not missing and others:
        hints.append(
            "--ignore-extra-columns leaves out the columns the model does not know"
        )
    return "".join(f"; {hint}" for hint in hints)


def _id_reason(column: pd.Series) -> str | None:
    """Why ``column`` looks like row identifiers, or None if it does not.

    By its name, or by its values: text that is not numbers, a different
    one in each row.
    """
    if _ID_NAME.search(str(column.name)):
        return "by its name"
    values = column.to_numpy()
    if len(values) < 2 or not all(isinstance(value, str) for value in values):
        return None
    if column.is_unique and pd.to_numeric(column, errors="coerce").isna().any():
        return "a different text in each row"
    return None
