"""Exceptions that callers tell apart from others of their base class."""


class UnsupportedModelError(TypeError):
    """An explainer does not support this kind of model.

    A ``TypeError``, as scikit-learn raises for an estimator it cannot use;
    its own class lets a caller that tries several explainers (the
    ``skshapley`` command) move on to the next one for this error only, and
    not for a ``TypeError`` raised by a bug or by a model the explainer does
    support.
    """
