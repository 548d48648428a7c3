"""The build installs every module: each source file is listed in a meson.build."""

from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "src" / "skshapley"
FOLDERS = sorted(
    folder for folder in [PACKAGE, *PACKAGE.rglob("*")]
    if folder.is_dir() and any(folder.glob("*.py"))
)  # fmt: skip


@pytest.mark.parametrize(
    "folder", FOLDERS, ids=lambda folder: str(folder.relative_to(PACKAGE.parent))
)
def test_every_source_file_is_built(folder):
    listed = (folder / "meson.build").read_text()
    for source in [*folder.glob("*.py"), *folder.glob("*.pyx")]:
        assert f"'{source.name}'" in listed, f"{source.name} missing from meson.build"
    if folder != PACKAGE:
        parent = (folder.parent / "meson.build").read_text()
        assert f"subdir('{folder.name}')" in parent
