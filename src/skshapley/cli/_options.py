"""The command's options: the argument parser and its help texts."""

import argparse
import re
from pathlib import Path

from .. import __version__
from .._runtime.limits import DEFAULT_MAX_DATA_BYTES, MAX_PERMUTATIONS
from ._inputs import CSV_SUFFIXES, PARQUET_SUFFIXES, suffix
from ._rows import row_selection

ISSUES = "https://github.com/skshapley/skshapley/issues"

_DESCRIPTION = "Exact Shapley-value feature attributions of a fitted model."

_EPILOG = f"""\
Run 'skshapley report' alone for a demo: it fits a gradient-boosted model to
scikit-learn's diabetes data and writes skshapley-report.html.

Tree ensembles are explained by TreeExplainer; kernel models (kernel ridge,
SVMs, Gaussian processes) by ProductKernelExplainer. What is explained is the
model's raw output: the regression value, the margin (log-odds) of boosted
classifiers, the class probabilities of forests. Any other model (a logistic
regression, an MLP, a pipeline of them, ...) is explained model-agnostically,
against --background: by ExactExplainer, which evaluates the model on every
coalition of up to 16 features, else by PermutationExplainer, which samples
--permutations orders of the features (seeded by --seed, default 0; the
values still add up exactly). --method exact or --method permutation uses
them for any model, trees and kernels included. For those, the output
explained is predict_proba for classifiers, else decision_function or
predict.

Outputs are written to a temporary file and renamed when complete: an error
or Ctrl-C leaves any previous file as it was. An existing --out is replaced
only with --force, and never when it is the --model or --data file.

Progress is shown on stderr when it is a terminal.

With --background, tree and kernel models are explained interventionally:
against the rows of that file (the values compare each row with that
population, and the base value is the model's mean output over it), instead
of the training covers stored in the trees or the kernel's reference points.
--background-rows N keeps a random sample of N of its rows (seed 0, or
--seed S).
Model-agnostic explainers need one: a few hundred rows of the training data
are typical (their cost grows with the number of background rows). Before
they start, the command says how many model evaluations the run takes at
most, and above ten million suggests a --background-rows that keeps under.

Exit status: 0 success; 1 a problem with a file, the model or the data (one
line on stderr); 2 a usage error; 3 an internal error, a bug: please report
it, with the command you ran, at
{ISSUES}
(--debug shows its traceback); 130 interrupted (Ctrl-C).
"""

_REPORT_EPILOG = """\
Without --model and --data: fits a GradientBoostingRegressor to
scikit-learn's diabetes data (shipped with it: nothing is downloaded) and
reports on all 442 rows, in a few seconds.

The report is one HTML file (images embedded, no JavaScript, no network):
summary; with --target, the model's quality on the explained rows (R², MAE,
RMSE; or accuracy, balanced accuracy, log-loss, ROC AUC); the data (types,
missing values, ranges); importance table, importance and beeswarm plots,
a heatmap of rows by features, dependence plots; waterfalls of the highest,
median and lowest predictions (or of the --show-rows rows) and a decision
plot; with --interactions, the strongest pairs of interacting features and
a heatmap; with --leave-one-out (model-agnostic explainers), each feature's
leave-one-out value beside its Shapley value, and where they differ; with
--download, the attributions as a CSV file inside the report.
For a PDF, open the report in a browser and print it (it has a print
stylesheet). The report needs matplotlib: pip install "skshapley[plot]".

Examples:
  skshapley report --model model.json --data rows.csv --target label
  skshapley report --model model.skops --data rows.csv --target label \\
      --index id --show-rows id17,id42 --download --out report.html
  skshapley report --model model.txt --data rows.parquet --rows 0:1000 \\
      --output setosa
"""

_EXPLAIN_EPILOG = """\
The table has one row per explained row (first column "row": the data's row
number, 0 for the first; or the --index column), one column per feature
(or group), then "base_value": each row sums to the model's raw output. For
several outputs (classes) the columns are <output>__<feature> and
<output>__base_value, unless --output picks one. Without --model and --data,
explains the demo model of 'skshapley report'.

With --interactions, the table is long instead: columns row, feature, other,
value (output first, for several outputs unless --output picks one), one
line per row and pair of features: the Shapley interaction values in shap's
convention (value at feature = other: the main effect; otherwise half the
interaction index), which sum over "other" to the feature's Shapley value.

Examples:
  skshapley explain --model model.json --data rows.csv --target label
  skshapley explain --model model.txt --data rows.parquet --rows 5000:6000 \\
      --index id --out phi.parquet
"""

REPORT_SUFFIXES = (".html", ".htm")

_BYTE_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


class UsageError(Exception):
    """A usage error: exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but its errors are exceptions, reported in one line."""

    def error(self, message):
        raise UsageError(f"{message} (see '{self.prog} --help')")


def build_parser() -> argparse.ArgumentParser:
    """The ``skshapley`` command's parser; each subcommand sets ``run``."""
    parser = _Parser(
        prog="skshapley",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=__version__)
    commands = parser.add_subparsers(
        title="commands", dest="command", required=True, metavar="COMMAND"
    )
    report = _subcommand(
        commands,
        "report",
        "write an HTML report of a model's attributions",
        "Write a self-contained HTML report of a model's Shapley values.",
        _REPORT_EPILOG,
        type=_report_path,
        default=Path("skshapley-report.html"),
        help="the HTML file, .html or .htm (default: skshapley-report.html)",
    )
    report.add_argument(
        "--title", metavar="TEXT", help="the report's title (default: model and data)"
    )
    report.add_argument(
        "--interactions",
        action="store_true",
        help="add a section on the strongest interactions between features",
    )
    report.add_argument(
        "--leave-one-out",
        action="store_true",
        help="add a section comparing each feature's leave-one-out value with "
        "its Shapley value (needs a model-agnostic explainer: --background, "
        "and --method exact or permutation for trees and kernels)",
    )
    report.add_argument(
        "--show-rows",
        type=_labels,
        action="extend",
        metavar="LABEL[,LABEL...]",
        help="the rows whose waterfalls are shown (at most 12), by their --index "
        "labels, or their positions in the file (from 0) without --index "
        "(default: the highest, median and lowest predictions)",
    )
    report.add_argument(
        "--download",
        action="store_true",
        help="embed the attributions in the report as a CSV file to download "
        "(the table 'skshapley explain' writes; up to 5 MB)",
    )
    _add_options(report)
    explain = _subcommand(
        commands,
        "explain",
        "write the attributions to a CSV or Parquet file",
        "Write the Shapley values of each row to a CSV or Parquet file.",
        _EXPLAIN_EPILOG,
        type=_table_path,
        default=Path("attributions.csv"),
        help="the table to write: .csv, .csv.gz or .parquet (default: "
        "attributions.csv)",
    )
    explain.add_argument(
        "--interactions",
        action="store_true",
        help="write the Shapley interaction values, one line per row and pair "
        "of features, instead of the attributions",
    )
    _add_options(explain)
    return parser


def _subcommand(
    commands, name: str, summary: str, description: str, epilog: str, **out
) -> argparse.ArgumentParser:
    """A subcommand's parser with its inputs and its ``--out`` (``out``'s keywords)."""
    parser = commands.add_parser(
        name,
        help=summary,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_inputs(parser)
    parser.add_argument("--out", metavar="PATH", **out)
    return parser


def _add_inputs(parser: argparse.ArgumentParser) -> None:
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
    parser.add_argument(
        "--max-data-bytes",
        type=_byte_count,
        default=DEFAULT_MAX_DATA_BYTES,
        metavar="N",
        help="refuse --data holding more than N bytes of data (decompressed; "
        f"suffixes K, M, G: powers of 1024; default: {DEFAULT_MAX_DATA_BYTES >> 20}M)",
    )
    parser.add_argument(
        "--background",
        type=Path,
        metavar="PATH",
        help="explain the model against the rows of this file (.csv, .csv.gz "
        "or .parquet, the features' columns): interventional Shapley values; "
        "needed by the model-agnostic explainers, refused for kernel models",
    )
    parser.add_argument(
        "--background-rows",
        type=_positive_int,
        metavar="N",
        help="use N rows of --background drawn at random (without replacement) "
        "instead of all",
    )
    parser.add_argument(
        "--seed",
        type=_seed,
        metavar="S",
        help="the random seed of --background-rows and of the permutation "
        "explainer's orders (default: 0)",
    )
    parser.add_argument(
        "--method",
        choices=("auto", "exact", "permutation"),
        default="auto",
        help="auto (default): the exact explainer of tree and kernel models, "
        "else the model-agnostic one; exact: evaluate every coalition of "
        "features (ExactExplainer); permutation: sample orders of the "
        "features (PermutationExplainer); both need --background",
    )
    parser.add_argument(
        "--permutations",
        type=_permutation_count,
        metavar="N",
        help="orders of the features sampled per row by the permutation "
        "explainer, each also reversed (default: 10)",
    )


def _add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target",
        metavar="COL",
        help="the column of --data holding the true label, left out of the "
        "features (report: the model's quality is measured against it)",
    )
    parser.add_argument(
        "--index",
        metavar="COL",
        help="a column of --data that names the rows (not a feature)",
    )
    parser.add_argument(
        "--ignore-extra-columns",
        action="store_true",
        help="leave out the columns of --data and --background that the model "
        "does not know (named on stderr); the ones it reads must all be there",
    )
    parser.add_argument(
        "--rows",
        type=row_selection,
        metavar="N|START:STOP",
        help="explain N rows drawn at random (seed 0, without replacement, "
        "kept in file order), or the rows at positions START to STOP-1 of the "
        "file (from 0; either end may be left out; negative ends count from "
        "the end: --rows=-100: for the last 100), instead of all",
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
        "--force",
        action="store_true",
        help="replace --out if it exists (never an input file)",
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
    parser.add_argument(
        "--debug",
        action="store_true",
        help="on an internal error, show its traceback",
    )


def _int_at_least(minimum: int, kind: str, maximum: int | None = None):
    """An argument type: an integer from ``minimum`` (to ``maximum``), ``kind``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a {kind} integer, got {text!r}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(
                f"expected at most {maximum:,}, got {text!r:.30}"
            )
        return value

    return parse


_positive_int = _int_at_least(1, "positive")
_permutation_count = _int_at_least(1, "positive", MAX_PERMUTATIONS)
_seed = _int_at_least(0, "non-negative", 2**63 - 1)


def _byte_count(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+)\s*([kmgt]?)i?b?\s*", text.lower())
    if match is None or int(match[1]) == 0:
        raise argparse.ArgumentTypeError(
            f"expected a positive number of bytes such as 500M or 2G, got {text!r}"
        )
    return int(match[1]) * _BYTE_UNITS[match[2]]


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


def _report_path(text: str) -> Path:
    path = Path(text)
    if suffix(path) not in REPORT_SUFFIXES:
        raise argparse.ArgumentTypeError(
            f"expected an .html or .htm file, got {text!r}; for a PDF, open the "
            "HTML report in a browser and print it to PDF (the report has a "
            "print stylesheet)"
        )
    return path


def _labels(text: str) -> list[str]:
    labels = [label for label in text.split(",") if label.strip()]
    if not labels:
        raise argparse.ArgumentTypeError(
            f"expected row labels separated by commas, got {text!r}"
        )
    return labels
