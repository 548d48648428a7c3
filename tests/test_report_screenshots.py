"""The developer command ``tools/report_screenshots.py``, without a browser.

Its render step writes one report per kind of model, each with every
section; without Chromium on PATH it says so and succeeds, as on a CI
machine. The screenshots themselves are looked at by a developer.
"""

from html.parser import HTMLParser

import pytest

SECTIONS = [
    "summary", "model", "data", "importance", "global", "dependence",
    "waterfalls", "about",
]  # fmt: skip


class _Sections(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.rows = [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "h2":  # each section's heading carries its id
            self.ids.append(attrs.get("id"))
        if "data-row" in attrs:
            self.rows.append(attrs["data-row"])


@pytest.mark.slow  # six full reports, 10,000 rows among them
def test_without_a_browser_the_reports_are_written(tool, tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    # As on a machine without Chromium (PATH itself stays: an editable
    # install rebuilds with the tools on it).
    monkeypatch.setattr(tool, "BROWSERS", ("no-such-browser-skshapley",))
    out = tmp_path / "shots"
    assert tool.main(["--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "need Chromium (apt install chromium)" in err
    assert sorted(path.name for path in out.iterdir()) == sorted(
        f"{name}.html" for name in tool.CASES
    )
    for name in tool.CASES:
        page = _Sections()
        page.feed((out / f"{name}.html").read_text(encoding="utf-8"))
        assert page.ids == SECTIONS, name
        assert page.rows == [str(label) for label in tool.SHOWN[name]], name
        assert 'id="download"' in (out / f"{name}.html").read_text(encoding="utf-8")
    assert len(tool.LONG_NAME) == 50
    grouped = (out / "grouped.html").read_text(encoding="utf-8")
    assert tool.LONG_NAME in grouped


def test_a_folder_with_files_needs_force(tool, tmp_path, capsys):
    (tmp_path / "old.png").write_bytes(b"")
    with pytest.raises(SystemExit) as exit_info:
        tool.main(["--out", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "--force" in capsys.readouterr().err


@pytest.mark.parametrize("widths", ["700,wide", "100", ""])
def test_bad_widths_are_refused(tool, tmp_path, capsys, widths):
    with pytest.raises(SystemExit) as exit_info:
        tool.main(["--out", str(tmp_path / "new"), "--widths", widths])
    assert exit_info.value.code == 2
    assert "--widths" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()
