"""The house rules: short modules and classes, a root of entry points, and
explainers reached from outside through their public API only.

Read from the source (``ast``), so that a change that breaks a rule fails
here, not in a review.
"""

import ast
import inspect
from pathlib import Path

import pytest

import skshapley
from skshapley._base import BaseExplainer

PACKAGE = Path(skshapley.__file__).parent
MODULES = sorted(PACKAGE.rglob("*.py"))


def _parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _name(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_modules_and_classes_are_short(path):
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") <= 600, "a module of more than 600 lines: split it"
    for node in ast.walk(_parsed(path)):
        if isinstance(node, ast.ClassDef):
            lines = node.end_lineno - node.lineno + 1
            assert lines <= 400, f"class {node.name} has {lines} lines: split it"


def test_the_root_holds_the_entry_points_and_the_protocol():
    modules = {path.name for path in PACKAGE.glob("*.py")}
    assert modules == {"__init__.py", "_entry.py", "_base.py", "_errors.py"}


def _explainer_classes() -> set[type]:
    """Every explainer class, and the classes they inherit within skshapley."""
    found, pending = set(), [BaseExplainer]
    while pending:
        cls = pending.pop()
        if cls in found:
            continue
        found.add(cls)
        pending.extend(cls.__subclasses__())
    return {
        base
        for cls in found
        for base in cls.__mro__
        if base.__module__.startswith("skshapley")
    }


def test_explainers_are_reached_through_their_public_api():
    """Outside an explainer's own modules, nothing reads a private member of
    an explainer (``explainer._frame(...)``, ``cls._refusal(model)``)."""
    classes = _explainer_classes()
    private = {
        name
        for cls in classes
        for name in vars(cls)
        if name.startswith("_") and not name.startswith("__")
    }
    own = {Path(inspect.getfile(cls)).resolve() for cls in classes}
    found = []
    for path in MODULES:
        if path.resolve() in own:
            continue
        for node in ast.walk(_parsed(path)):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in private
                and not (isinstance(node.value, ast.Name) and node.value.id == "self")
            ):
                found.append(f"{_name(path)}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "\n".join(found)
