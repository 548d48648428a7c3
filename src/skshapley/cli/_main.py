"""The ``skshapley`` command: its two subcommands and its exit statuses."""

import dataclasses
import os
import sys
import traceback
import warnings
from dataclasses import dataclass

import pandas as pd

from .._contract.naming import model_name
from .._contract.tables import attributions_table, interactions_table
from .._entry import explainer_class
from .._errors import UnsupportedModelError
from .._runtime.optional import (
    MissingDependencyError,
    optional_import,
    require_matplotlib,
)
from .._runtime.progress import ProgressBar
from ._background import Background, background_of
from ._categories import as_model_categories, model_categories
from ._columns import column_hints, known_columns, matches_model, model_columns
from ._explaining import cost_note, make_explainer, output_name
from ._inputs import (
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
from ._options import ISSUES, UsageError, build_parser
from ._refusals import REFUSALS, refused_columns
from ._rows import row_labels, select_rows
from ._writing import atomic_output, check_output, writing


def main(argv: list[str] | None = None) -> int:
    """Run the ``skshapley`` command.

    Every error is reported as one line on stderr, ``skshapley: error: ...``,
    and told apart by the exit status.

    Parameters
    ----------
    argv : list of str, default=None
        The arguments after the command's name; ``None`` means
        ``sys.argv[1:]``.

    Returns
    -------
    status : int
        The exit status: 0 on success; 1 when a file, the model or the data
        is at fault; 2 for a usage error; 3 for an internal error (a bug in
        skshapley or a library it calls: the line asks to report it, and
        ``--debug`` shows its traceback); 130 when interrupted (Ctrl-C).

    Examples
    --------
    >>> from skshapley.cli import main
    >>> main(["explain", "--rows", "10", "--out", "phi.csv", "-q"])  # doctest: +SKIP
    0
    >>> main(["explain", "--model", "model.h5", "--data", "rows.csv"])
    1
    """
    args = None
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            args = build_parser().parse_args(argv)
            status = _run[args.command](args)
        if not args.quiet:  # after an error, only the error counts
            for message in dict.fromkeys(str(w.message) for w in caught):
                _print_error(message, "warning")
        return status
    except (CommandError, MissingDependencyError) as exc:
        _print_error(str(exc))
        return 1
    except UsageError as exc:
        hint = f" (see 'skshapley {args.command} --help')" if args else ""
        _print_error(f"{exc}{hint}")
        return 2
    except KeyboardInterrupt:
        if sys.stderr.isatty():  # end a progress line first
            print(file=sys.stderr)
        _print_error("interrupted")
        return 130
    # Raised on purpose by the explainers when a model's numbers make the
    # Shapley values overflow: the model is at fault.
    except FloatingPointError as exc:
        _print_error(str(exc))
        return 1
    except MemoryError as exc:  # the message, if any, says how much was asked
        _print_error(
            f"not enough memory{f' ({exc})' if str(exc) else ''}; explain fewer "
            "rows at once (--rows) or split the data"
        )
        return 1
    # Anything else is a bug: say so in one line, and where to report it.
    except Exception as exc:
        if args is not None and args.debug:
            traceback.print_exc()
        _print_error(
            f"internal error ({type(exc).__name__}: {exc}); please report it, "
            f"with the command you ran, at {ISSUES}"
            + ("" if args is not None and args.debug else " (--debug shows details)")
        )
        return 3


def _print_error(message: str, kind: str = "error") -> None:
    print(f"skshapley: {kind}: {' '.join(message.split())}", file=sys.stderr)


def _groups(args) -> dict | None:
    if not args.groups:
        return None
    groups = {}
    for name, members in args.groups:
        if name in groups:
            raise UsageError(f"argument --groups: group {name!r} is given twice")
        groups[name] = members
    return groups


def _check_arguments(args) -> None:
    """Usage and output checks, before anything is read."""
    if (args.model is None) != (args.data is None):
        raise UsageError("--model and --data go together")
    if args.model is None:
        for option in ("target", "index", "ignore_extra_columns"):
            if getattr(args, option) not in (None, False):
                flag = "--" + option.replace("_", "-")
                raise UsageError(f"{flag} needs --model and --data")
    elif args.target is not None and args.target == args.index:
        raise UsageError(
            f"--index and --target both name column {args.target!r}; the label "
            "and the rows' names are different columns"
        )
    if args.background is None:
        for option in ("background_rows", "seed"):
            if getattr(args, option) is not None:
                flag = "--" + option.replace("_", "-")
                raise UsageError(f"{flag} needs --background")
    elif args.seed is not None and args.background_rows is None:
        # With --method auto, the explainer chosen may be the permutation one.
        _check_seed(args, sampling=args.method != "exact")
    if args.permutations is not None and args.method == "exact":
        raise UsageError(
            "--permutations is for the permutation explainer; --method exact "
            "samples nothing"
        )
    if args.model is not None:  # every file before reading any: fail fast
        check_file(args.model, "model", MODEL_SUFFIXES)
        check_file(args.data, "data", DATA_SUFFIXES)
    inputs = (args.model, args.data) if args.model is not None else ()
    if args.background is not None:
        check_file(args.background, "background", DATA_SUFFIXES)
        inputs += (args.background,)
    check_output(args.out, inputs=inputs, force=args.force)


def _inputs(args, say):
    """The model, the rows to explain, their targets (or None), the data's name."""
    if args.model is None:
        model, data = demo()
        say(
            f"no --model: fitted {model_name(model)} to scikit-learn's diabetes "
            f"data ({len(data)} rows, {data.shape[1]} features)"
        )
        X, _ = select_rows(data, None, args.rows)
        return model, X, None, "scikit-learn's diabetes data"
    model = load_model(args.model, trust_pickle=args.trust_pickle)
    X, y = prepare_data(
        read_data(args.data, max_bytes=args.max_data_bytes),
        target=args.target,
        index=args.index,
    )
    X, y = select_rows(X, y, args.rows)
    return model, X, y, args.data.name


@dataclass(frozen=True)
class _Job:
    """What a subcommand works on, its options checked and its inputs read.

    ``y`` is the ``--target`` column of the rows ``X`` (or None);
    ``shown`` the labels of ``--show-rows`` (or None).
    """

    explainer: object
    X: pd.DataFrame
    y: pd.Series | None
    shown: list | None
    data_name: str
    output: object
    background: Background | None


def _setup(args) -> _Job:
    """The fitted explainer, the rows and what the options chose."""
    quiet = args.quiet

    def say(message):
        if not quiet:
            print(f"skshapley: {message}", file=sys.stderr)

    groups = _groups(args)
    _check_arguments(args)
    told = []  # said once the options are checked: an error is one line
    model, X, y, data_name = _inputs(args, told.append)
    show_rows = getattr(args, "show_rows", None)  # report's option only
    shown = (
        None if show_rows is None else row_labels(show_rows, X.index, rows=args.rows)
    )
    _check_choice(args, model, groups)
    for message in told:
        say(message)
    background = background_of(args)
    notes = []  # said once the data is checked: an error is one line
    if args.ignore_extra_columns:
        X, background, notes = _drop_extra_columns(
            model, groups, X, data_name, background
        )
    # Columns the model learned as pandas categories, as it reads them.
    categories = model_categories(model)
    X = as_model_categories(X, categories)
    if background is not None:
        background = dataclasses.replace(
            background, data=as_model_categories(background.data, categories)
        )
    explainer = make_explainer(
        model,
        groups,
        None if background is None else background.data,
        method=args.method,
        n_permutations=args.permutations,
        seed=args.seed,
    )
    output = output_name(explainer, args.output)
    _check_data(explainer, X, None if background is None else background.data)
    for note in notes:
        say(note)
    against = "" if background is None else f", {background.describe()}"
    say(
        f"explaining {len(X):,} rows of {data_name} with "
        f"{type(explainer).__name__} ({model_name(model)}, "
        f"output: {explainer.raw_output_}{against})"
    )
    cost = cost_note(explainer, len(X))
    if cost is not None:
        say(cost)
    return _Job(explainer, X, y, shown, data_name, output, background)


def _check_choice(args, model, groups) -> None:
    """The options that only some explainers take, before anything is fitted.

    The explainer is the one :func:`~skshapley.Explainer` would choose (or
    ``--method``'s); a model that none explains is left to
    :func:`make_explainer` to report.
    """
    seeded = args.seed is not None and args.background_rows is None
    leave_one_out = getattr(args, "leave_one_out", False)
    interactions = getattr(args, "interactions", False)
    if args.permutations is None and not (seeded or leave_one_out or interactions):
        return
    try:
        cls = explainer_class(model, {"groups": groups}, args.method)
    except UnsupportedModelError:
        return
    if interactions and not getattr(cls, "supports_interactions", False):
        raise UsageError(
            f"--interactions needs exact interaction values, which only the tree "
            f"and kernel explainers compute; the model is explained by "
            f"{cls.__name__} (--method {cls.method_}). Leave out --interactions "
            "(or, for a tree or kernel model, --method)"
        )
    sampling = cls.method_ == "permutation"
    if args.permutations is not None and not sampling:
        raise UsageError(
            f"--permutations is for the permutation explainer; the model is "
            f"explained by {cls.__name__} (choose the other with --method "
            "permutation)"
        )
    if seeded:
        _check_seed(args, sampling=sampling)
    if leave_one_out and not hasattr(cls, "leave_one_out"):
        raise CommandError(
            f"--leave-one-out needs a model-agnostic explainer, and the model "
            f"is explained by {cls.__name__}: use --method exact/permutation "
            "with --background"
        )


def _check_seed(args, *, sampling: bool) -> None:
    """``--seed`` without ``--background-rows`` seeds the permutations, if any."""
    if not sampling:
        raise UsageError(
            "--seed needs --background-rows or the permutation explainer (it "
            "seeds their random draws)"
        )


def _progress(args) -> ProgressBar:
    """The progress bar, on a terminal unless ``--quiet``; make it just before."""
    return ProgressBar(sys.stderr, enabled=not args.quiet and sys.stderr.isatty())


def _drop_extra_columns(model, groups, X, data_name, background):
    """The data and the background without the columns the model does not know.

    For ``--ignore-extra-columns``; also returns the notes that name them.
    """
    known = model_columns(model, groups)
    X, note = known_columns(X, known, data_name)
    notes = [note]
    if background is not None:
        data, note = known_columns(background.data, known, background.name)
        background = dataclasses.replace(background, data=data)
        notes.append(note)
    return X, background, [note for note in notes if note is not None]


def _report(args) -> int:
    os.environ.setdefault("MPLBACKEND", "Agg")  # never a GUI backend
    require_matplotlib("the report")  # after MPLBACKEND: importing reads it
    from ..report._report import write_report

    job = _setup(args)
    title = args.title or f"{model_name(job.explainer.model)} on {job.data_name}"
    notes = () if job.background is None else [job.background.note()]
    with writing(args.out):  # write_report writes atomically itself
        try:
            write_report(
                job.explainer, job.X, args.out, y=job.y, title=title, top_k=4,
                max_display=20, output=job.output, progress=_progress(args),
                show_rows=job.shown, download=args.download,
                interactions=args.interactions, option="--output NAME", notes=notes,
                leave_one_out=args.leave_one_out,
            )  # fmt: skip
        except ValueError as exc:  # the explainer's errors about the data
            raise CommandError(str(exc)) from exc
    if not args.quiet:
        print(args.out.resolve())
    return 0


def _explain(args) -> int:
    parquet = suffix(args.out) in PARQUET_SUFFIXES
    if parquet:
        optional_import("pyarrow", "writing Parquet files")
    job = _setup(args)
    explainer, X, output = job.explainer, job.X, job.output
    try:
        if args.interactions:
            values = explainer.explain_interactions(
                X, output=output, progress=_progress(args)
            )
        else:
            phi = explainer.explain(X, progress=_progress(args))
    except ValueError as exc:  # the explainer's errors about the data
        raise CommandError(str(exc)) from exc
    if args.interactions:  # a long table: its row numbers are a column
        table, index = interactions_table(values), False
    else:
        table, index = attributions_table(phi, explainer, output), True
    with atomic_output(args.out) as temporary:
        if parquet:
            table.to_parquet(temporary, index=index)
        else:  # the temporary name's suffix tells pandas nothing
            gzipped = suffix(args.out) == ".csv.gz"
            table.to_csv(
                temporary, index=index, compression="gzip" if gzipped else None
            )
    if not args.quiet:
        print(args.out.resolve())
    return 0


_run = {"report": _report, "explain": _explain}


def _check_data(explainer, X, background) -> None:
    """Fail, saying what is wrong, if the explainer or the model refuses ``X``.

    Every row is predicted once (a small part of an explanation's model
    calls), so that a refused value stops the command before a long run.
    Wrong columns get hints (``_columns.py``); a value that the model
    refuses, in an error that names no column (scikit-learn's), is traced
    to its columns with the help of the ``background`` rows, if any
    (``_refusals.py``). A ``TypeError`` traced to no column is raised as it
    is (an internal error).
    """
    try:
        explainer.raw_predict(X)
    except REFUSALS as exc:
        message = str(exc)
        matching = matches_model(explainer, X)
        named = any(repr(str(column)) in message for column in X.columns)
        if matching and not named:
            refused = refused_columns(explainer.raw_predict, X, background)
            if refused:
                raise CommandError(
                    "the model refuses the data: "
                    + "; ".join(refusal.describe() for refusal in refused)
                ) from exc
        if isinstance(exc, TypeError):
            raise
        hints = "" if matching else column_hints(explainer, X)
        raise CommandError(
            f"{message.rstrip('.')}{hints}" if hints else message
        ) from exc
