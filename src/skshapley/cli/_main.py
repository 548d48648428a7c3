"""The ``skshapley`` command: its options, its two subcommands, its errors."""

import argparse
import importlib.util
import os
import sys
from pathlib import Path

from .. import __version__
from ._explaining import (
    Progress,
    attributions_table,
    explain_in_chunks,
    make_explainer,
    model_name,
    output_name,
    with_progress,
)
from ._inputs import (
    CSV_SUFFIXES,
    DATA_SUFFIXES,
    MODEL_SUFFIXES,
    PARQUET_SUFFIXES,
    CommandError,
    check_file,
    demo,
    load_model,
    prepare_data,
    read_data,
    suffix,
)

_DESCRIPTION = "Exact Shapley-value feature attributions of a fitted model."

_EPILOG = """\
Run 'skshapley report' alone for a demo: it fits a gradient-boosted model to
scikit-learn's diabetes data and writes skshapley-report.html.

Tree ensembles are explained by TreeExplainer; kernel models (kernel ridge,
SVMs, Gaussian processes) by ProductKernelExplainer. What is explained is the
model's raw output: the regression value, the margin (log-odds) of boosted
classifiers, the class probabilities of forests.

Progress is shown on stderr when it is a terminal. Exit status: 0 success,
1 failure (files, model, data), 2 usage error.
"""

_REPORT_EPILOG = """\
Without --model and --data: fits a GradientBoostingRegressor to
scikit-learn's diabetes data (shipped with it: nothing is downloaded) and
reports on all 442 rows, in a few seconds.

The report is one HTML file (images embedded, no JavaScript, no network):
summary, importance table, importance and beeswarm plots, dependence plots,
waterfalls of the highest, lowest and median predictions. The report needs
matplotlib: pip install 'skshapley[plot]'.
"""

_EXPLAIN_EPILOG = """\
The table has one row per explained row (first column "row": the data's row
number, 0 for the first; or the --index column), one column per feature
(or group), then "base_value": each row sums to the model's raw output. For
several outputs (classes) the columns are <output>__<feature> and
<output>__base_value, unless --output picks one. Without --model and --data,
explains the demo model of 'skshapley report'.
"""


def main(argv: list[str] | None = None) -> int:
    """Run the ``skshapley`` command.

    Parameters
    ----------
    argv : list of str, default=None
        The arguments after the command's name; ``None`` means
        ``sys.argv[1:]``.

    Returns
    -------
    status : int
        The exit status: 0 on success, 1 when a file, the model or the data
        is at fault, 2 for a usage error.

    Examples
    --------
    >>> from skshapley.cli import main
    >>> main(["explain", "--rows", "10", "--out", "phi.csv", "-q"])  # doctest: +SKIP
    0
    >>> main(["explain", "--model", "model.h5", "--data", "rows.csv"])
    1
    """
    try:
        args = _build_parser().parse_args(argv)
    except _UsageError as exc:
        _print_error(str(exc))
        return 2
    try:
        return args.run(args)
    except CommandError as exc:
        _print_error(str(exc))
        return 1
    except _UsageError as exc:
        _print_error(f"{exc} (see 'skshapley {args.command} --help')")
        return 2
    except KeyboardInterrupt:
        if sys.stderr.isatty():  # end a progress line first
            print(file=sys.stderr)
        _print_error("interrupted")
        return 130


class _UsageError(Exception):
    """A usage error: exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but its errors are exceptions, reported in one line."""

    def error(self, message):
        raise _UsageError(f"{message} (see '{self.prog} --help')")


def _print_error(message: str) -> None:
    print(f"skshapley: error: {' '.join(message.split())}", file=sys.stderr)


def _build_parser() -> _Parser:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = _Parser(
        prog="skshapley",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    parser.add_argument("--version", action="version", version=__version__)
    commands = parser.add_subparsers(
        title="commands", dest="command", required=True, metavar="COMMAND"
    )
    report = commands.add_parser(
        "report",
        help="write an HTML report of a model's attributions",
        description="Write a self-contained HTML report of a model's Shapley values.",
        epilog=_REPORT_EPILOG,
        formatter_class=formatter,
    )
    _add_inputs(report)
    report.add_argument(
        "--out",
        type=Path,
        default=Path("skshapley-report.html"),
        metavar="PATH",
        help="the HTML file (default: skshapley-report.html)",
    )
    report.add_argument(
        "--title", metavar="TEXT", help="the report's title (default: model and data)"
    )
    _add_options(report)
    report.set_defaults(run=_report)
    explain = commands.add_parser(
        "explain",
        help="write the attributions to a CSV or Parquet file",
        description="Write the Shapley values of each row to a CSV or Parquet file.",
        epilog=_EXPLAIN_EPILOG,
        formatter_class=formatter,
    )
    _add_inputs(explain)
    explain.add_argument(
        "--out",
        type=_table_path,
        default=Path("attributions.csv"),
        metavar="PATH",
        help="the table to write: .csv, .csv.gz or .parquet (default: "
        "attributions.csv)",
    )
    _add_options(explain)
    explain.set_defaults(run=_explain)
    return parser


def _add_inputs(parser: _Parser) -> None:
    parser.add_argument(
        "--model",
        type=Path,
        metavar="PATH",
        help="the fitted model: XGBoost .json/.ubj, LightGBM .txt, skops "
        ".skops; pickle .pkl/.pickle/.joblib only with --trust-pickle",
    )
    parser.add_argument(
        "--data",
        type=Path,
        metavar="PATH",
        help="the rows to explain: .csv, .csv.gz or .parquet, one column per "
        "feature, named as in training",
    )


def _add_options(parser: _Parser) -> None:
    parser.add_argument(
        "--target", metavar="COL", help="a column of --data to leave out (the label)"
    )
    parser.add_argument(
        "--index",
        metavar="COL",
        help="a column of --data that names the rows (not a feature)",
    )
    parser.add_argument(
        "--rows",
        type=_positive_int,
        metavar="N",
        help="explain N rows drawn at random (seed 0, without replacement, "
        "kept in file order) instead of all",
    )
    parser.add_argument(
        "--groups",
        type=_group,
        nargs="+",
        action="extend",
        metavar="NAME=COL,COL",
        help="explain these columns together, as one player named NAME",
    )
    parser.add_argument(
        "--output",
        metavar="NAME",
        help="for a model with several outputs (classes): the one to show "
        "(report: default the first) or write (explain: default all)",
    )
    parser.add_argument(
        "--trust-pickle",
        action="store_true",
        help="load pickle and joblib files, which runs code stored in them, and "
        "skops files holding types other than scikit-learn's and those skops "
        "trusts; only for files you trust",
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print nothing but errors",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _group(text: str) -> tuple[str, list[str]]:
    name, _, columns = text.partition("=")
    members = columns.split(",")
    if not name or not all(members):
        raise argparse.ArgumentTypeError(f"expected NAME=COL,COL,..., got {text!r}")
    return name, members


def _table_path(text: str) -> Path:
    path = Path(text)
    if suffix(path) not in (*CSV_SUFFIXES, *PARQUET_SUFFIXES):
        raise argparse.ArgumentTypeError(
            f"expected a .csv, .csv.gz or .parquet file, got {text!r}"
        )
    return path


def _groups(args) -> dict | None:
    if not args.groups:
        return None
    groups = {}
    for name, members in args.groups:
        if name in groups:
            raise _UsageError(f"argument --groups: group {name!r} is given twice")
        groups[name] = members
    return groups


def _inputs(args, say):
    """The model, the rows to explain and a description of the data."""
    if (args.model is None) != (args.data is None):
        raise _UsageError("--model and --data go together")
    if args.model is None:
        for option in ("target", "index"):
            if getattr(args, option) is not None:
                raise _UsageError(f"--{option} needs --model and --data")
        model, data = demo()
        say(
            f"no --model: fitted {model_name(model)} to scikit-learn's diabetes "
            f"data ({len(data)} rows, {data.shape[1]} features)"
        )
        return model, prepare_data(data, rows=args.rows), "scikit-learn's diabetes data"
    # Check both files before reading either: fail fast.
    check_file(args.model, "model", MODEL_SUFFIXES)
    check_file(args.data, "data", DATA_SUFFIXES)
    model = load_model(args.model, trust_pickle=args.trust_pickle)
    data = prepare_data(
        read_data(args.data), target=args.target, index=args.index, rows=args.rows
    )
    return model, data, args.data.name


def _setup(args):
    """The fitted explainer, the rows, the data's name, the output, messages."""
    quiet = args.quiet

    def say(message):
        if not quiet:
            print(f"skshapley: {message}", file=sys.stderr)

    groups = _groups(args)
    folder = args.out.parent
    if not folder.is_dir():  # before a long explanation
        raise CommandError(f"cannot write {args.out}: no folder {folder}")
    model, X, data_name = _inputs(args, say)
    explainer = make_explainer(model, groups)
    output = output_name(explainer, args.output)
    try:  # the data's columns and types, before a long explanation
        explainer.raw_predict(X.iloc[:1])
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    say(
        f"explaining {len(X):,} rows of {data_name} with "
        f"{type(explainer).__name__} ({model_name(model)}, "
        f"output: {explainer.raw_output_})"
    )
    progress = Progress(sys.stderr, enabled=not quiet and sys.stderr.isatty())
    return explainer, X, data_name, output, progress


def _report(args) -> int:
    if importlib.util.find_spec("matplotlib") is None:
        raise CommandError(
            "the report needs matplotlib, which is not installed: "
            "pip install 'skshapley[plot]'"
        )
    os.environ.setdefault("MPLBACKEND", "Agg")  # never a GUI backend
    from ..report import report

    explainer, X, data_name, output, progress = _setup(args)
    title = args.title or f"{model_name(explainer.model)} on {data_name}"
    try:
        path = report(
            with_progress(explainer, progress), X, args.out, title=title, output=output
        )
    except ValueError as exc:  # the explainer's errors about the data
        raise CommandError(str(exc)) from exc
    except OSError as exc:
        raise CommandError(f"cannot write {args.out}: {exc}") from exc
    if not args.quiet:
        print(Path(path).resolve())
    return 0


def _explain(args) -> int:
    parquet = suffix(args.out) in PARQUET_SUFFIXES
    if parquet and importlib.util.find_spec("pyarrow") is None:
        raise CommandError(
            "writing Parquet files needs pyarrow, which is not installed: "
            "pip install pyarrow"
        )
    explainer, X, _, output, progress = _setup(args)
    try:
        phi = explain_in_chunks(explainer.explain, X, progress)
    except ValueError as exc:  # the explainer's errors about the data
        raise CommandError(str(exc)) from exc
    table = attributions_table(phi, explainer, output)
    try:
        if parquet:
            table.to_parquet(args.out, index=True)
        else:
            table.to_csv(args.out)
    except OSError as exc:
        raise CommandError(f"cannot write {args.out}: {exc}") from exc
    if not args.quiet:
        print(args.out.resolve())
    return 0
