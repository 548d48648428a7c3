"""What a skops file may make the command construct: only the trust list.

Each hostile file names a type outside the list whose construction leaves a
marker file; the marker must not appear. With ``--trust-pickle`` the same
file does construct it, which proves that each test can fail.
"""

import io
import json
import struct
import zipfile
import zlib

import numpy as np
import pandas as pd
import pytest
from numpy.lib import format as npy_format
from sklearn.tree import DecisionTreeRegressor

from skshapley.cli import main
from skshapley.cli._trust import TRUSTED_TYPES, is_trusted
from tests.limited import assert_clean_outcome, run_limited

sio = pytest.importorskip("skops.io")


@pytest.fixture
def model_and_data(tmp_path):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"])
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, X["a"])
    path = tmp_path / "model.skops"
    sio.dump(model, path)
    data = tmp_path / "rows.csv"
    X.to_csv(data, index=False)
    return model, path, data, X


def _rewrite_schema(path, edit):
    """Replace ``path``'s schema.json by ``edit(schema)``, keeping its arrays."""
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members["schema.json"] = json.dumps(edit(json.loads(members["schema.json"])))
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)


def _text(value):
    return {"__class__": "str", "__module__": "builtins", "__loader__": "JsonNode",
            "content": json.dumps(value), "is_json": True}  # fmt: skip


def _with_attribute(node):
    """Edit adding ``node`` to the model's attributes, as ``extra``."""

    def edit(schema):
        attributes = schema["content"]
        attributes["content"]["extra"] = node
        attributes["key_types"]["content"].append(
            {"__class__": "str", "__module__": "builtins", "__loader__": "TypeNode"}
        )
        return schema

    return edit


def _explain(path, data, tmp_path, capsys, *options):
    out = tmp_path / "phi.csv"
    status = main(["explain", "--model", str(path), "--data", str(data),
                   "--out", str(out), "-q", *options])  # fmt: skip
    return status, capsys.readouterr().err


def test_stdlib_class_imported_by_scikit_learn_is_not_constructed(
    model_and_data, tmp_path, capsys
):
    # sklearn.datasets._covtype.GzipFile is gzip.GzipFile: an attribute of a
    # scikit-learn module, constructed with a path it creates.
    _, path, data, _ = model_and_data
    marker = tmp_path / "marker.gz"
    gzip_file = {
        "__class__": "GzipFile", "__module__": "sklearn.datasets._covtype",
        "__loader__": "ConstructorFromReduceNode",
        "content": {"__class__": "tuple", "__module__": "builtins",
                    "__loader__": "TupleNode",
                    "content": [_text(str(marker)), _text("wb")]},
    }  # fmt: skip
    _rewrite_schema(path, _with_attribute(gzip_file))
    status, err = _explain(path, data, tmp_path, capsys)
    assert status == 1
    assert "sklearn.datasets._covtype.GzipFile" in err
    assert "does not trust" in err
    assert not marker.exists()
    # Trusted, the file does construct it: the marker is the test's witness.
    _explain(path, data, tmp_path, capsys, "--trust-pickle")
    assert marker.exists()


def test_class_from_a_module_on_the_path_is_not_constructed(
    model_and_data, tmp_path, capsys, monkeypatch
):
    _, path, data, _ = model_and_data
    marker = tmp_path / "marker.txt"
    (tmp_path / "skshapley_test_marker.py").write_text(
        "class Marker:\n"
        "    def __setstate__(self, state):\n"
        f"        open({str(marker)!r}, 'w').close()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    no_keys = {"__class__": "list", "__module__": "builtins",
               "__loader__": "ListNode", "content": []}  # fmt: skip
    node = {"__class__": "Marker", "__module__": "skshapley_test_marker",
            "__loader__": "ObjectNode",
            "content": {"__class__": "dict", "__module__": "builtins",
                        "__loader__": "DictNode", "content": {},
                        "key_types": no_keys}}  # fmt: skip
    _rewrite_schema(path, _with_attribute(node))
    status, err = _explain(path, data, tmp_path, capsys)
    assert status == 1
    assert "skshapley_test_marker.Marker" in err
    assert not marker.exists()
    _explain(path, data, tmp_path, capsys, "--trust-pickle")
    assert marker.exists()


def test_re_exported_name_is_refused(model_and_data, tmp_path, capsys):
    # sklearn.tree.DecisionTreeRegressor is the listed class, re-exported:
    # the list holds names by defining module only.
    model, path, data, X = model_and_data

    def edit(schema):
        schema["__module__"] = "sklearn.tree"
        return schema

    _rewrite_schema(path, edit)
    status, err = _explain(path, data, tmp_path, capsys)
    assert status == 1
    assert "sklearn.tree.DecisionTreeRegressor" in err
    status, err = _explain(path, data, tmp_path, capsys, "--trust-pickle")
    assert status == 0, err
    phi = pd.read_csv(tmp_path / "phi.csv", index_col="row")
    np.testing.assert_allclose(phi.sum(axis=1), model.predict(X), rtol=1e-12)


def test_listed_alias_is_still_refused(monkeypatch):
    # Were an alias ever listed, the defining-module check would refuse it.
    alias = "sklearn.datasets._covtype.GzipFile"
    monkeypatch.setattr("skshapley.cli._trust.TRUSTED_TYPES", TRUSTED_TYPES | {alias})
    is_trusted.cache_clear()
    try:
        assert not is_trusted(alias)
        assert is_trusted("sklearn.tree._tree.Tree")
    finally:
        is_trusted.cache_clear()


def test_method_loader_is_refused(model_and_data, tmp_path, capsys):
    # MethodNode looks an attribute up by a name in the file: never trusted,
    # even on a listed class.
    _, path, data, _ = model_and_data
    node = {"__class__": "DecisionTreeRegressor",
            "__module__": "sklearn.tree._classes", "__loader__": "MethodNode",
            "content": {"func": "fit", "obj": _text(0)}}  # fmt: skip
    _rewrite_schema(path, _with_attribute(node))
    status, err = _explain(path, data, tmp_path, capsys)
    assert status == 1
    assert "(skops MethodNode)" in err


def _deflate_bomb(path, n_bytes: int) -> None:
    """A zip whose one ``.npy`` member inflates to ``n_bytes`` (< 4 GiB).

    The deflate stream repeats one fully flushed block of 16 MiB of zeros,
    so that writing it costs no compression of gigabytes.
    """
    block = 2**24
    header = b"\x93NUMPY\x01\x00" + struct.pack("<H", 118)
    header += (
        f"{{'descr': '|u1', 'fortran_order': False, 'shape': ({n_bytes - 128},), }}"
    ).encode().ljust(117) + b"\n"
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = compressor.compress(header) + compressor.flush(zlib.Z_FULL_FLUSH)
    chunk = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = chunk.compress(bytes(block)) + chunk.flush(zlib.Z_FULL_FLUSH)
    data = first + zeros * ((n_bytes - 128) // block) + b"\x03\x00"
    name = b"bomb.npy"
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 0, 0,
                        len(data), n_bytes, len(name), 0)  # fmt: skip
    central = struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 8, 0, 0, 0,
                          len(data), n_bytes, len(name), 0, 0, 0, 0, 0, 0)  # fmt: skip
    offset = len(local) + len(name) + len(data)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1,
                      len(central) + len(name), offset, 0)  # fmt: skip
    path.write_bytes(local + name + data + central + name + end)


def test_zip_bomb_is_refused_within_a_memory_limit(model_and_data, tmp_path):
    _, _, data, _ = model_and_data
    bomb = tmp_path / "bomb.skops"
    _deflate_bomb(bomb, 3 * 2**30 + 128)  # 3 GiB from a few MB
    assert bomb.stat().st_size < 2**24
    status, _, err = run_limited(
        ["explain", "--model", bomb, "--data", data, "--out", tmp_path / "o.csv"],
        cwd=tmp_path,
    )
    assert_clean_outcome(status, err)
    assert status == 1
    assert "once uncompressed" in err


def test_array_header_claiming_more_than_its_member_is_refused(
    model_and_data, tmp_path, capsys
):
    _, path, data, _ = model_and_data
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    # One row more than the member holds: NumPy would allocate it first.
    name = next(name for name in members if name.endswith(".npy"))
    array = np.load(io.BytesIO(members[name]))
    header = io.BytesIO()
    npy_format.write_array_header_1_0(
        header,
        {"descr": npy_format.dtype_to_descr(array.dtype), "fortran_order": False,
         "shape": (array.shape[0] + 1, *array.shape[1:])},
    )  # fmt: skip
    members[name] = header.getvalue() + array.tobytes()
    with zipfile.ZipFile(path, "w") as archive:
        for member, content in members.items():
            archive.writestr(member, content)
    status, err = _explain(path, data, tmp_path, capsys)
    assert status == 1
    assert "claims" in err
