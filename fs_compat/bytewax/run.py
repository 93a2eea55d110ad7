"""Run a dataflow from the command line (``python -m bytewax.run``)::

    python -m fs_compat.bytewax.run my_flows.py                  # the module's `flow`
    python -m fs_compat.bytewax.run my_flows:other_flow
    python -m fs_compat.bytewax.run "my_flows:get_flow('in.txt', n=3)"
    python -m fs_compat.bytewax.run my_flows.py -r recovery/ -s 30 -b 60

The import string is Bytewax's: a module name or a ``.py`` file (its directory, outside any
package, goes on ``sys.path``), then ``:`` and a variable or a call of a function with literal
arguments (default ``flow``). Options, also taken from Bytewax's environment variables:

- ``-s/--snapshot-interval SECONDS`` (``BYTEWAX_SNAPSHOT_INTERVAL``): the epoch length (default 10 s);
- ``-r/--recovery-directory DIR`` (``BYTEWAX_RECOVERY_DIRECTORY``) and ``-b/--backup-interval
  SECONDS`` (``BYTEWAX_RECOVERY_BACKUP_INTERVAL``): resume from and snapshot to the recovery
  partitions in ``DIR`` (made with :func:`fs_compat.bytewax.recovery.init_db_dir`); with ``-r``,
  ``-s`` and ``-b`` are required, as in Bytewax. Recovery runs in-process, or on the
  ``spark-streaming`` target for ``TestingSource`` inputs (``migration_guide/bytewax.md``);
- ``-w/--workers-per-process N`` (``BYTEWAX_WORKERS_PER_PROCESS``): workers, as in
  :func:`fs_compat.bytewax.testing.cluster_main` (one worker in-process, N Spark tasks per step on
  Spark);
- ``-i/--process-id`` and ``-a/--addresses`` (``BYTEWAX_PROCESS_ID``, ``BYTEWAX_ADDRESSES``): accepted
  for one process only; a cluster of several processes raises ``NotImplementedError`` (on Spark,
  the executors are the cluster).

``python -m fs_compat.bytewax.testing`` (Bytewax's testing entry point) takes the same arguments with
``-p/--processes`` (``BYTEWAX_PROCESSES``) instead of ``-i/-a``: Bytewax starts that many processes
itself, each with ``-w`` workers, as one cluster; fs-compat runs the cluster's workers (processes x
workers) as the workers of this one process (``cluster_main``'s ``worker_count_per_proc``).

The flow runs in this process unless ``FS_COMPAT_TARGET=spark`` (then its steps run on Spark, as
``run_main``'s ``spark`` target).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import os
import sys
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from .dataflow import Dataflow as _Dataflow
from .recovery import RecoveryConfig as _RecoveryConfig
from .testing import cluster_main as _cluster_main

__all__ = ["cli_main", "main"]


def cli_main(
    flow: _Dataflow,
    *,
    workers_per_process: int = 1,
    process_id: int | None = None,
    addresses: list[str] | None = None,
    epoch_interval: timedelta | None = None,
    recovery_config: _RecoveryConfig | None = None,
) -> None:
    """Run ``flow`` as ``python -m fs_compat.bytewax.run`` does, with its parsed options."""
    _cluster_main(
        flow,
        list(addresses or []),
        0 if process_id is None else process_id,
        epoch_interval=epoch_interval,
        recovery_config=recovery_config,
        worker_count_per_proc=workers_per_process,
    )


def _prepare_import(import_str: str) -> tuple[str, str]:
    """``(module name, flow expression)`` of an import string; a file's top directory (the first
    one up that is not a package) goes first on ``sys.path``."""
    path, _, flow_name = import_str.partition(":")
    path = os.path.realpath(path)
    base, ext = os.path.splitext(path)
    if ext == ".py":
        path = base
    if os.path.basename(path) == "__init__":
        path = os.path.dirname(path)
    parts: list[str] = []
    while True:
        path, name = os.path.split(path)
        parts.append(name)
        if not os.path.exists(os.path.join(path, "__init__.py")):
            break
    if sys.path[0] != path:
        sys.path.insert(0, path)
    return ".".join(reversed(parts)), flow_name or "flow"


def _literal_call(expr: str) -> tuple[str, list[Any], dict[str, Any]]:
    """The name, and the literal arguments when ``expr`` is a call, of a flow expression."""
    try:
        node = ast.parse(expr.strip(), mode="eval").body
    except SyntaxError:
        raise SyntaxError(f"Failed to parse {expr!r} as an attribute name or function call") from None
    if isinstance(node, ast.Name):
        return node.id, [], {}
    if not isinstance(node, ast.Call):
        raise ValueError(f"Failed to parse {expr!r} as an attribute name or function call")
    if not isinstance(node.func, ast.Name):
        raise TypeError(f"Function reference must be a simple name: {expr!r}.")
    try:
        args = [ast.literal_eval(arg) for arg in node.args]
        kwargs = {str(kw.arg): ast.literal_eval(kw.value) for kw in node.keywords}
    except ValueError:
        raise ValueError(f"Failed to parse arguments as literal values: {expr!r}") from None
    return node.func.id, args, kwargs


def _locate_dataflow(module_name: str, expr: str) -> _Dataflow:
    """The Dataflow that ``expr`` (a variable, or a call of a function) gives in ``module_name``."""
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise  # the module was found; something it imports was not
        raise ImportError(f"Could not import {module_name!r}.") from None
    name, args, kwargs = _literal_call(expr)
    try:
        found = getattr(module, name)
    except AttributeError as exc:
        raise AttributeError(f"Failed to find attribute {name!r} in {module.__name__!r}.") from exc
    if inspect.isfunction(found):
        try:
            signature = inspect.signature(found)
            signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(
                f"The factory {expr!r} in module {module.__name__!r} could not be called with the "
                "specified arguments"
            ) from exc
        found = found(*args, **kwargs)
    if not isinstance(found, _Dataflow):
        raise RuntimeError(f"A valid Bytewax dataflow was not obtained from '{module.__name__}:{expr}'")
    return found


class _EnvDefault(argparse.Action):
    """An option whose default comes from an environment variable (named in the help)."""

    def __init__(self, envvar: str, default: Any = None, **kwargs: Any) -> None:
        kwargs["help"] = f"{kwargs.get('help', '')} [env: {envvar}]"
        super().__init__(default=os.environ.get(envvar, default), **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)


def _seconds(text: str) -> timedelta:
    return timedelta(seconds=int(text))


def _interval(value: str | timedelta | None) -> timedelta | None:
    """An interval option's value; one from the environment arrives as text."""
    return _seconds(value) if isinstance(value, str) else value


def _parser(testing: bool) -> argparse.ArgumentParser:
    module = "testing" if testing else "run"
    parser = argparse.ArgumentParser(
        prog=f"python -m fs_compat.bytewax.{module}",
        description="Run a Bytewax dataflow with fs-compat (on Spark with FS_COMPAT_TARGET=spark)",
    )
    parser.add_argument(
        "import_str",
        help="<module or file.py>[:<flow variable or factory call>], e.g. src.flows:get_flow('x'); "
        "default attribute: flow",
    )
    options: list[tuple[str, str, dict[str, Any], str, str]] = [
        ("-r", "--recovery-directory", {"type": Path}, "BYTEWAX_RECOVERY_DIRECTORY", "recovery partitions"),
        ("-s", "--snapshot-interval", {"type": _seconds}, "BYTEWAX_SNAPSHOT_INTERVAL", "epoch length (s)"),
        (
            "-b",
            "--backup-interval",
            {"type": _seconds},
            "BYTEWAX_RECOVERY_BACKUP_INTERVAL",
            "how long superseded snapshots are kept (s)",
        ),
        ("-w", "--workers-per-process", {"type": int}, "BYTEWAX_WORKERS_PER_PROCESS", "workers"),
    ]
    if testing:  # bytewax.testing's scaling options: processes it would start itself
        options.append(
            ("-p", "--processes", {"type": int}, "BYTEWAX_PROCESSES", "processes, run here as workers of one")
        )
    else:
        options += [
            (
                "-i",
                "--process-id",
                {"type": int},
                "BYTEWAX_PROCESS_ID",
                "this process' index (one only)",
            ),
            ("-a", "--addresses", {}, "BYTEWAX_ADDRESSES", "addresses of the processes, ';'-separated"),
        ]
    for short, long, kind, envvar, text in options:
        parser.add_argument(short, long, action=_EnvDefault, envvar=envvar, help=text, **kind)
    return parser


def main(argv: Sequence[str] | None = None, *, testing: bool = False) -> None:
    """The command line: parse ``argv`` (default ``sys.argv[1:]``), locate the flow and run it.
    ``testing``: ``python -m fs_compat.bytewax.testing``'s options (``-p`` instead of ``-i/-a``)."""
    parser = _parser(testing)
    args = parser.parse_args(argv)
    snapshot, backup = _interval(args.snapshot_interval), _interval(args.backup_interval)
    recovery = None
    if args.recovery_directory is not None:
        if snapshot is None or backup is None:
            parser.error(
                "when running with recovery, the `-s/--snapshot_interval` and `-b/--backup_interval` "
                "values must be set"
            )
        recovery = _RecoveryConfig(Path(args.recovery_directory), backup)
    elif snapshot is None:
        snapshot = timedelta(seconds=10)
    process_id: int | None = None
    addresses: list[str] | None = None
    workers = int(args.workers_per_process or 1)
    if testing:
        # Bytewax starts the processes itself, each with its workers, as one cluster: here, that
        # many workers of this process.
        processes = 1 if args.processes is None else int(args.processes)
        if processes < 1:
            parser.error(f"the processes option must be at least 1; got {processes}")
        workers *= processes
    else:
        if args.process_id is not None and args.addresses is None:
            parser.error("the addresses option is required if a process_id is passed")
        process_id = None if args.process_id is None else int(args.process_id)
        addresses = None if args.addresses is None else args.addresses.split(";")
    module_name, expr = _prepare_import(args.import_str)
    flow = _locate_dataflow(module_name, expr)
    cli_main(
        flow,
        workers_per_process=workers,
        process_id=process_id,
        addresses=addresses,
        epoch_interval=snapshot,
        recovery_config=recovery,
    )


if __name__ == "__main__":
    main()
