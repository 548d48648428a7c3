"""What the command reads: models from files, data tables, the demo.

Model files are read from formats that hold data, not code: XGBoost JSON /
UBJSON and LightGBM text models (parsed and checked by skshapley itself,
never by the libraries' loaders), skops files (types from an explicit trust
list only, ``_trust.py``). Pickle and joblib files run code when they are
loaded, so they are read only when the user says they trust them.
"""

import contextlib
import csv
import gzip
import io
import json
import zipfile
from pathlib import Path

import pandas as pd

from .._errors import UnsupportedModelError
from .._runtime import limits
from .._runtime.limits import DEFAULT_MAX_DATA_BYTES
from .._runtime.optional import optional_import
from ..trees._readers.lightgbm.text import read_model_file
from ..trees._readers.xgboost.file import read_xgboost_model
from ._archive import check_skops_archive
from ._trust import schema_types, untrusted


class CommandError(Exception):
    """An expected failure: reported as one line, exit status 1."""


_XGBOOST = (".json", ".ubj")
_LIGHTGBM = (".txt",)
_SKOPS = (".skops",)
_PICKLE = (".pkl", ".pickle", ".joblib")
MODEL_SUFFIXES = (*_XGBOOST, *_LIGHTGBM, *_SKOPS, *_PICKLE)
CSV_SUFFIXES = (".csv", ".csv.gz")
PARQUET_SUFFIXES = (".parquet",)
DATA_SUFFIXES = (*CSV_SUFFIXES, *PARQUET_SUFFIXES)


def suffix(path: Path) -> str:
    """The file's type suffix, lower case: ``.csv.gz`` counts as one."""
    name = path.name.lower()
    return ".csv.gz" if name.endswith(".csv.gz") else path.suffix.lower()


def check_file(path: Path, what: str, suffixes: tuple[str, ...]) -> None:
    """Fail unless ``path`` is an existing file with one of ``suffixes``."""
    if suffix(path) not in suffixes:
        raise CommandError(
            f"{what} file {str(path)!r} has an unsupported extension; "
            f"supported: {', '.join(suffixes)}."
        )
    if not path.exists():
        raise CommandError(f"{what} file not found: {path}")
    if not path.is_file():
        raise CommandError(f"{what} path is not a file: {path}")


def load_model(path: Path, *, trust_pickle: bool):
    """The fitted model stored in ``path``, read by its extension."""
    check_file(path, "model", MODEL_SUFFIXES)
    kind = suffix(path)
    if kind in _XGBOOST or kind in _LIGHTGBM:
        # Read and checked by skshapley itself: the libraries' own loaders
        # trust the file (altered files crash them), and need not be installed.
        read = read_xgboost_model if kind in _XGBOOST else read_model_file
        try:
            return read(path)
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from exc
        except (ValueError, UnsupportedModelError) as exc:  # malformed, unsupported
            raise CommandError(f"cannot read {path}: {exc}") from exc
    if kind in _SKOPS:
        return _load_skops(path, trust_pickle=trust_pickle)
    if not trust_pickle:
        raise CommandError(
            f"refusing to load {path}: loading a pickle or joblib file runs code "
            "stored in it. Pass --trust-pickle if you trust the file, or save the "
            "model as a skops, XGBoost JSON or LightGBM text file."
        )
    import joblib  # a dependency of scikit-learn; it reads plain pickles too

    try:
        return joblib.load(path)
    # Unpickling runs the file's own code, which may raise anything at all.
    except Exception as exc:
        raise CommandError(f"cannot load {path}: {type(exc).__name__}: {exc}") from exc


def _load_skops(path: Path, *, trust_pickle: bool):
    """A skops file's model, if its sizes are bounded and its types trusted.

    The archive's sizes are checked first (``_archive.py``), then every type
    the file names must be in skshapley's trust list (``_trust.py``), by its
    defining module; ``--trust-pickle`` trusts every type, never the sizes.
    """
    sio = optional_import("skops.io", f"reading {path.name}")
    try:
        check_skops_archive(path, limits.MAX_MODEL_FILE_BYTES)
        with zipfile.ZipFile(path) as archive:
            schema = json.loads(archive.read("schema.json"))
        names = schema_types(schema)
        # Refused before skops reads the file: its reader validates some
        # nodes as it builds them.
        if not trust_pickle:
            _refuse_untrusted(path, names)
        # skops' own list adds what its loaders build from names inside
        # values (a random generator's bit generator).
        names |= set(sio.get_untrusted_types(file=path))
        if not trust_pickle:
            _refuse_untrusted(path, names)
        return sio.load(path, trusted=sorted(names))
    except CommandError:
        raise
    # A damaged or hostile file may fail anywhere in zipfile, json or skops'
    # reader, and a trusted file may run code that raises anything at all.
    except Exception as exc:
        raise CommandError(
            f"cannot read {path} as a skops file: {type(exc).__name__}: {exc}"
        ) from exc


def _refuse_untrusted(path: Path, names: set[str]) -> None:
    """Fail, naming them, if some of the file's type ``names`` are not trusted."""
    refused = untrusted(names)
    if refused:
        shown = ", ".join(refused[:5])
        more = f" and {len(refused) - 5} more" if len(refused) > 5 else ""
        raise CommandError(
            f"refusing to load {path}: it names types that skshapley does not "
            f"trust: {shown}{more}. Pass --trust-pickle if you trust the file."
        )


class _CappedReader(io.RawIOBase):
    """A binary stream that fails once more than ``limit`` bytes are read.

    It reads through a decompressing stream as well as a plain file, so that
    a small compressed file cannot expand into memory without bound.
    """

    def __init__(self, raw, limit: int, path: Path, what: str):
        self._raw, self._limit, self._path, self._what = raw, limit, path, what
        self._count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        count = self._raw.readinto(buffer)
        self._count += count
        if self._count > self._limit:
            raise _too_large(self._path, self._limit, "holds", self._what)
        return count


def _too_large(path: Path, limit: int, verb: str, what: str) -> CommandError:
    sampling = (
        " (--background-rows samples the rows only after the whole file is "
        "read), or a smaller background file"
        if what == "background"
        else ""
    )
    return CommandError(
        f"{what} file {path} {verb} more than {limit:,} bytes of data (the limit "
        "--max-data-bytes, for --data and --background; decompressed, for "
        ".csv.gz); pass a larger --max-data-bytes if you mean to read it"
        f"{sampling}"
    )


@contextlib.contextmanager
def _csv_stream(path: Path, limit: int, what: str):
    """The file's (decompressed) bytes, at most ``limit`` of them."""
    opener = gzip.open if suffix(path) == ".csv.gz" else open
    with opener(path, "rb") as raw:
        yield io.BufferedReader(_CappedReader(raw, limit, path, what))


def read_data(
    path: Path, *, max_bytes: int = DEFAULT_MAX_DATA_BYTES, what: str = "data"
) -> pd.DataFrame:
    """The table in a CSV or Parquet file, of at most ``max_bytes`` of data.

    Column names must be unique (pandas would rename a repeated CSV header
    ``x`` to ``x.1``, and explain a column under a name the file does not
    have). ``what`` names the file in errors ("data", "background").
    """
    check_file(path, what, DATA_SUFFIXES)
    try:
        if suffix(path) in PARQUET_SUFFIXES:
            columns, data = _read_parquet(path, max_bytes, what)
        else:
            with _csv_stream(path, max_bytes, what) as stream:  # the header
                text = io.TextIOWrapper(stream, encoding="utf-8-sig", newline="")
                # (pandas names empty names "Unnamed: k", all different.)
                columns = [name for name in next(csv.reader(text), []) if name]
            with _csv_stream(path, max_bytes, what) as stream:
                data = pd.read_csv(stream)
    # pandas' and pyarrow's parse errors, gzip's (BadGzipFile is an OSError),
    # and bytes that are not text (UnicodeDecodeError is a ValueError).
    except (OSError, ValueError, EOFError, csv.Error) as exc:
        raise CommandError(f"cannot read {what} file {path}: {exc}") from exc
    columns = pd.Index(columns)
    repeated = sorted(set(map(str, columns[columns.duplicated()])))
    if repeated:
        raise CommandError(
            f"{what} file {path} has repeated column names: {', '.join(repeated)}; "
            "each column needs its own name"
        )
    return data


def _read_parquet(path: Path, max_bytes: int, what: str):
    """A Parquet file's column names and table, if its data is small enough."""
    optional_import("pyarrow", "reading Parquet files")
    import pyarrow.parquet as pq

    metadata = pq.ParquetFile(path).metadata
    size = sum(
        metadata.row_group(k).total_byte_size for k in range(metadata.num_row_groups)
    )
    if size > max_bytes:
        raise _too_large(path, max_bytes, "has", what)
    return pq.read_schema(path).names, pd.read_parquet(path)


def prepare_data(
    data: pd.DataFrame, *, target=None, index=None
) -> tuple[pd.DataFrame, pd.Series | None]:
    """The rows to explain, indexed, and their ``target`` column (or None)."""
    for option, column in (("--target", target), ("--index", index)):
        if column is not None and column not in data.columns:
            raise CommandError(
                f"{option} column {column!r} is not in the data; its columns: "
                f"{', '.join(map(str, data.columns))}."
            )
    if index is not None:
        data = data.set_index(index)
    y = None if target is None else data.pop(target)
    if data.shape[1] == 0:
        raise CommandError("the data has no feature columns.")
    if len(data) == 0:
        raise CommandError("the data has no rows.")
    return data, y


def demo():
    """A gradient-boosted model of scikit-learn's diabetes data, and the data.

    The data ships with scikit-learn (nothing is downloaded); its features
    are unscaled (age in years, body mass index, ...) so that the report
    shows readable values.
    """
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import GradientBoostingRegressor

    X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
    # Not HistGradientBoosting: its OpenMP fit is 30 times slower (0.1 s ->
    # 3 s) when other processes keep the CPUs busy; this takes ~0.2 s.
    model = GradientBoostingRegressor(
        n_estimators=200, learning_rate=0.05, max_depth=3, random_state=0
    ).fit(X, y)
    return model, X
