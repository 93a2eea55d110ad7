"""``fs-compat migrate``: the codemod that ports PyFlink and Bytewax code, and the report of what
does not carry over.

The rewrite is the porting rule of ``migration_guide/``: ``pyflink.`` becomes ``fs_compat.`` and
``bytewax.`` becomes ``fs_compat.bytewax.``, in every form of import and in attribute chains
that spell the full module (``pyflink.datastream.StreamExecutionEnvironment``). It is made with
libcst, so everything else (formatting, comments, line endings) stays byte for byte.

The report is computed, not guessed: every imported module and name, and every attribute read
through an imported module or class (``op.stateful_map``, ``ds.CheckpointingMode``), is looked
up in fs_compat itself with importlib. What is missing is a finding, with the advice of
:data:`MODULE_ADVICE` / :data:`NAME_ADVICE` when there is one, else where fs_compat has the name,
else a pointer to the guide. Calls of methods fs_compat does not support or accepts and ignores
(:data:`METHOD_ADVICE`) are findings too; the method names are PyFlink's and specific enough to
be matched by name.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from types import ModuleType
from typing import Any

import attrs
import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import (
    MetadataWrapper,
    PositionProvider,
    QualifiedNameProvider,
    QualifiedNameSource,
)

__all__ = [
    "METHOD_ADVICE",
    "MODULE_ADVICE",
    "NAME_ADVICE",
    "Finding",
    "MigrationResult",
    "migrate_source",
]

#: Framework prefix -> its fs_compat replacement, the porting rule.
_PREFIXES: tuple[tuple[str, str], ...] = (("pyflink", "fs_compat"), ("bytewax", "fs_compat.bytewax"))

_GUIDE = {"pyflink": "migration_guide/pyflink.md", "bytewax": "migration_guide/bytewax.md"}

_CHECKPOINTS = (
    "checkpoints are Spark Structured Streaming's: set checkpointLocation on the query "
    "(ds.to_dataframe().writeStream.option('checkpointLocation', ...)); state lives in Spark's state store"
)
_CONNECTORS = (
    "this Flink connector is not ported (file, Kafka and number-sequence connectors are): read with "
    "Spark (spark.read / spark.readStream) and env.from_dataframe(df); write with ds.to_dataframe() and "
    "Spark's writers (jdbc, foreachBatch)"
)
_ASYNC = (
    "async I/O is not ported: call the service in a map/flat_map, "
    "or join with Spark before env.from_dataframe(df)"
)
#: Modules that are not ported, by their framework name (a prefix match: the longest entry that
#: is the module or one of its parents wins), with what to use instead.
MODULE_ADVICE: Mapping[str, str] = {
    "pyflink.table": (
        "the Table API and SQL are not ported: use Spark DataFrames / Spark SQL via "
        "env.from_dataframe(df) and ds.to_dataframe()"
    ),
    **{
        f"pyflink.datastream.connectors.{name}": _CONNECTORS
        for name in (
            "cassandra",
            "dynamic_kafka",
            "elasticsearch",
            "hybrid_source",
            "jdbc",
            "kinesis",
            "pubsub",
            "pulsar",
            "rabbitmq",
        )
    },
    **{
        f"pyflink.datastream.formats.{name}": (
            "this Flink format is not ported (the JSON and CSV row schemas are): Spark's readers and "
            "writers handle it (spark.read.parquet/orc/format('avro')); then env.from_dataframe(df) / "
            "ds.to_dataframe()"
        )
        for name in ("avro", "orc", "parquet")
    },
    "pyflink.datastream.async_data_stream": _ASYNC,
    "pyflink.datastream.async_retry_predicates": _ASYNC,
    "pyflink.datastream.async_retry_strategies": _ASYNC,
}

#: Names that are not ported, by the framework module they come from, with what to use instead.
NAME_ADVICE: Mapping[str, str] = {
    **{
        f"pyflink.datastream.{name}": _ASYNC
        for name in ("AsyncDataStream", "AsyncFunction", "AsyncRetryPredicate", "AsyncRetryStrategy")
    },
}

#: Methods fs_compat does not support (they raise ``NotImplementedError`` or are not defined) or
#: accepts and ignores: method name -> (the PyFlink API, what to use instead). A call
#: ``<anything>.name(...)`` is a finding, unless ``<anything>`` is a module imported from outside
#: PyFlink/Bytewax/fs_compat.
METHOD_ADVICE: Mapping[str, tuple[str, str]] = {
    "add_source": (
        "StreamExecutionEnvironment.add_source",
        "source functions are not ported (FlinkKafkaConsumer is): use env.from_source(FileSource/"
        "KafkaSource ...), env.from_collection(...), or read with Spark and env.from_dataframe(df)",
    ),
    "enable_checkpointing": (
        "StreamExecutionEnvironment.enable_checkpointing",
        "accepted and ignored; " + _CHECKPOINTS,
    ),
    "set_default_savepoint_directory": (
        "StreamExecutionEnvironment.set_default_savepoint_directory",
        "not defined: a Spark streaming query resumes from its checkpointLocation",
    ),
    "get_execution_plan": (
        "StreamExecutionEnvironment.get_execution_plan",
        "there is no JVM job graph: ds.to_dataframe().explain() shows Spark's plan",
    ),
    "execute_async": ("StreamExecutionEnvironment.execute_async", "use execute()"),
    "add_jars": (
        "StreamExecutionEnvironment.add_jars",
        "JVM jars do not apply: pass them to Spark (spark-submit --jars)",
    ),
    "add_classpaths": (
        "StreamExecutionEnvironment.add_classpaths",
        "pass jars to Spark (spark-submit --jars)",
    ),
    "set_python_requirements": (
        "StreamExecutionEnvironment.set_python_requirements",
        "not defined: install the requirements into the Python that runs Spark's workers (PYSPARK_PYTHON)",
    ),
    "set_python_executable": (
        "StreamExecutionEnvironment.set_python_executable",
        "not defined: set PYSPARK_PYTHON (fs-compat uses the driver's interpreter when it is unset)",
    ),
    "add_python_archive": (
        "StreamExecutionEnvironment.add_python_archive",
        "not defined: ship archives with spark-submit --archives, modules with env.add_python_file(path)",
    ),
    "register_cached_file": (
        "StreamExecutionEnvironment.register_cached_file",
        "not defined: ship files with spark-submit --files and open them with SparkFiles.get(name)",
    ),
    "set_buffer_timeout": (
        "DataStream.set_buffer_timeout",
        "not defined: Spark has no buffer timeout; a streaming query's trigger interval "
        "(writeStream.trigger(processingTime=...)) sets its latency",
    ),
}


#: PyFlink's functions that reach the JVM, by their ported names: a call is a finding (they exist
#: in fs_compat and raise ``NotImplementedError`` naming the JVM when called).
JVM_FUNCTIONS = frozenset({"fs_compat.java_gateway.get_gateway", "fs_compat.java_gateway.launch_gateway"})
_JVM = (
    "fs-compat runs without a JVM (no py4j gateway, no Java classes or methods): the call raises "
    "NotImplementedError; write the Java function, watermark strategy or job-graph check in "
    "Python (migration_guide/pyflink.md)"
)


@attrs.frozen
class Finding:
    """One use of an API fs_compat does not provide: where, what, and what to use instead."""

    filename: str
    line: int
    name: str
    advice: str

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}: {self.name} — {self.advice}"


@attrs.frozen
class MigrationResult:
    """The rewritten source, the findings in line order, and whether the rewrite changed anything."""

    code: str
    findings: tuple[Finding, ...]
    changed: bool


def migrate_source(source: str, filename: str = "<string>") -> MigrationResult:
    """Port ``source`` (the text of a Python module) from PyFlink/Bytewax imports to fs_compat's.

    Raises Python's own :class:`SyntaxError` (with ``filename`` and the line) when ``source`` does
    not parse.
    """
    ast.parse(source, filename=filename)  # the error Python itself would report
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:  # valid Python that this libcst cannot parse
        err = SyntaxError(exc.message.splitlines()[0] if exc.message else "cannot parse")
        err.filename, err.lineno, err.offset = filename, exc.raw_line, exc.raw_column + 1
        raise err from None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    collector = _FindingCollector(filename)
    wrapper.visit(collector)
    rewritten = module.visit(_Rewriter(_binds_framework_root(module)))
    code = rewritten.code
    findings = sorted(collector.findings, key=lambda f: (f.line, f.name))
    return MigrationResult(code=code, findings=tuple(findings), changed=code != source)


# --- naming -----------------------------------------------------------------------------------


def _framework_of(dotted: str) -> str | None:
    """``"pyflink"`` / ``"bytewax"`` for a name of either (as written or already ported), else None."""
    root = dotted.split(".", 1)[0]
    if root in ("pyflink", "bytewax"):
        return root
    if root == "fs_compat":
        return (
            "bytewax"
            if dotted == "fs_compat.bytewax" or dotted.startswith("fs_compat.bytewax.")
            else "pyflink"
        )
    return None


def _ported(dotted: str) -> str | None:
    """The fs_compat spelling of a PyFlink/Bytewax dotted name; fs_compat names stay; else None."""
    for old, new in _PREFIXES:
        if dotted == old or dotted.startswith(old + "."):
            return new + dotted[len(old) :]
    if dotted == "fs_compat" or dotted.startswith("fs_compat."):
        return dotted
    return None


def _original(dotted: str) -> str:
    """The framework spelling of a (possibly ported) dotted name, for the advice tables."""
    if dotted == "fs_compat.bytewax" or dotted.startswith("fs_compat.bytewax."):
        return dotted[len("fs_compat.") :]
    if dotted == "fs_compat" or dotted.startswith("fs_compat."):
        return "pyflink" + dotted[len("fs_compat") :]
    return dotted


# --- resolution in fs_compat ------------------------------------------------------------------


def _import(name: str) -> ModuleType | None:
    """The fs_compat module ``name``, or None when there is no such module. A module that exists
    but fails to import is an fs_compat bug and raises."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            return None
        raise


def _missing_part(dotted: str) -> str | None:
    """Look ``dotted`` (an fs_compat name) up part by part, through modules and classes; the
    prefix that ends at the first missing part, or None when everything that can be checked exists
    (the walk stops at the first object that is neither a module nor a class)."""
    parts = dotted.split(".")
    obj: Any = _import(parts[0])
    if obj is None:
        return parts[0]
    for i, part in enumerate(parts[1:], start=1):
        prefix = ".".join(parts[: i + 1])
        if part == "__main__":
            return None  # importing it would run it
        if inspect.ismodule(obj):
            if hasattr(obj, part):
                obj = getattr(obj, part)
            else:
                obj = _import(prefix)
                if obj is None:
                    return prefix
        elif inspect.isclass(obj):
            if not hasattr(obj, part):
                return prefix
            obj = getattr(obj, part)
        else:
            return None
    return None


#: Where :func:`_relocated` looks for a name missing from the module it was imported from.
_HOMES = (
    "fs_compat.common",
    "fs_compat.datastream",
    "fs_compat.datastream.state",
    "fs_compat.datastream.functions",
    "fs_compat.datastream.window",
    "fs_compat.metrics",
    "fs_compat.bytewax.dataflow",
    "fs_compat.bytewax.operators",
    "fs_compat.bytewax.inputs",
    "fs_compat.bytewax.outputs",
    "fs_compat.bytewax.testing",
    "fs_compat.bytewax.errors",
)


def _relocated(module: str, name: str) -> str | None:
    """Another fs_compat module that has ``name``, when ``module`` lacks it."""
    for home in _HOMES:
        if home != module and _framework_of(home) == _framework_of(module):
            mod = _import(home)
            if mod is not None and hasattr(mod, name):
                return home
    return None


def _advice(full: str, missing: str) -> str:
    """What to use instead, for ``full`` (the fs_compat spelling of a dotted name that is used)
    whose part ``missing`` (a prefix of it) fs_compat does not have."""
    parts = _original(full).split(".")
    for end in range(len(parts), 0, -1):
        key = ".".join(parts[:end])
        advice = NAME_ADVICE.get(key) or MODULE_ADVICE.get(key)
        if advice is not None:
            return advice
    guide = _GUIDE[_framework_of(missing) or "pyflink"]
    parent, _, name = missing.rpartition(".")
    if inspect.ismodule(sys.modules.get(parent)):
        home = _relocated(parent, name)
        if home is not None:
            return f"{parent} has no {name}; import it from {home}"
    return f"{parent} has no {name}; see {guide} for what fs-compat supports"


# --- the report -------------------------------------------------------------------------------


def _pure_chain(node: cst.BaseExpression) -> bool:
    """``a.b.c``: names joined by attribute access only."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


class _FindingCollector(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider)

    def __init__(self, filename: str) -> None:
        super().__init__()
        self.filename = filename
        self.findings: list[Finding] = []
        self._seen: set[tuple[int, str]] = set()
        self._reported_at_import: set[str] = set()

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def _add(self, node: cst.CSTNode, name: str, advice: str) -> None:
        line = self._line(node)
        if (line, name) not in self._seen:
            self._seen.add((line, name))
            self.findings.append(Finding(self.filename, line, name, advice))

    def _check(self, node: cst.CSTNode, written: str, *, at_import: bool) -> None:
        """A finding when ``written`` (a dotted name as the file spells it, qualified) is missing."""
        ported = _ported(written)
        if ported is None:
            return
        missing = _missing_part(ported)
        if missing is None:
            return
        if at_import:
            self._reported_at_import.add(missing)
            name = written
        elif missing in self._reported_at_import:
            return  # reported where it was imported
        else:
            # Up to the missing part, as the file spells it (ported names have more parts).
            extra = ported.count(".") - missing.count(".")
            name = written.rsplit(".", extra)[0] if extra else written
        self._add(node, name, _advice(ported, missing))

    def visit_Import(self, node: cst.Import) -> bool:  # noqa: N802 - libcst's name
        for alias in node.names:
            self._check(alias, get_full_name_for_node(alias.name) or "", at_import=True)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:  # noqa: N802 - libcst's name
        if node.relative or node.module is None:
            return False
        module = get_full_name_for_node(node.module) or ""
        ported = _ported(module)
        if ported is None:
            return False
        if _missing_part(ported) is not None:
            self._check(node.module, module, at_import=True)
            return False
        if isinstance(node.names, cst.ImportStar):
            return False
        for alias in node.names:
            self._check(alias, f"{module}.{get_full_name_for_node(alias.name)}", at_import=True)
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:  # noqa: N802 - libcst's name
        if not _pure_chain(node):
            return True
        for qualified in self.get_metadata(QualifiedNameProvider, node, set()):
            if qualified.source is QualifiedNameSource.IMPORT:
                self._check(node, qualified.name, at_import=False)
        return False

    def visit_Call(self, node: cst.Call) -> bool:  # noqa: N802 - libcst's name
        func = node.func
        self._check_jvm(func)
        if isinstance(func, cst.Attribute) and func.attr.value in METHOD_ADVICE:
            # ``somelib.add_source(...)``: a module imported from elsewhere is not a PyFlink object.
            receiver = self.get_metadata(QualifiedNameProvider, func.value, set())
            foreign = bool(receiver) and all(
                q.source is QualifiedNameSource.IMPORT and _ported(q.name) is None for q in receiver
            )
            if not foreign:
                api, advice = METHOD_ADVICE[func.attr.value]
                self._add(func.attr, api, advice)
        return True

    def _check_jvm(self, func: cst.BaseExpression) -> None:
        """A call that needs the JVM: ``get_gateway()`` (and ``launch_gateway()``), or a Java
        method of a Java object PyFlink holds (``env._j_stream_execution_environment.getStreamGraph()``;
        passing the object on, as ``get_j_env_configuration(env._j_...)`` does, is fine)."""
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute):
            holder = func.value.attr.value
            if holder.startswith("_j_"):
                self._add(func.attr, f"{holder}.{func.attr.value}", _JVM)
                return
        for qualified in self.get_metadata(QualifiedNameProvider, func, set()):
            if qualified.source is not QualifiedNameSource.IMPORT:
                continue
            ported = _ported(qualified.name)
            if ported in JVM_FUNCTIONS:
                self._add(func, _original(ported), _JVM)
                return


# --- the rewrite ------------------------------------------------------------------------------


def _dotted(name: str) -> cst.Attribute | cst.Name:
    expr = cst.parse_expression(name)
    assert isinstance(expr, cst.Attribute | cst.Name)
    return expr


def _binds_framework_root(module: cst.Module) -> frozenset[str]:
    """``pyflink`` / ``bytewax`` when a plain ``import pyflink.x`` binds that name in the module, so
    attribute chains starting with it spell a module and are rewritten too."""
    roots: set[str] = set()
    for stmt in _imports(module):
        if isinstance(stmt, cst.Import):
            for alias in stmt.names:
                root = (get_full_name_for_node(alias.name) or "").split(".", 1)[0]
                if alias.asname is None and root in ("pyflink", "bytewax"):
                    roots.add(root)
    return frozenset(roots)


def _imports(module: cst.Module) -> Iterator[cst.Import | cst.ImportFrom]:
    found: list[cst.Import | cst.ImportFrom] = []

    class _Find(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> bool:  # noqa: N802 - libcst's name
            found.append(node)
            return False

        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:  # noqa: N802 - libcst's name
            found.append(node)
            return False

    module.visit(_Find())
    yield from found


def _rename(dotted: str) -> str | None:
    """The ported name of a PyFlink/Bytewax dotted name, else None (fs_compat names included)."""
    for old, new in _PREFIXES:
        if dotted == old or dotted.startswith(old + "."):
            return new + dotted[len(old) :]
    return None


#: ``-m bytewax.run`` in a command line written as one string: the module after ``-m``.
_DASH_M = re.compile(r"(?<![\w-])(-m\s+)((?:bytewax|pyflink)(?:\.\w+)*)(?!\w)")


def _runnable(module: str) -> str | None:
    """The ported name of ``module``, a framework module a command runs (``-m``), when fs_compat
    has it; else None (the command is left as it is)."""
    new = _rename(module)
    return new if new is not None and _missing_part(new) is None else None


def _port_dash_m(text: str) -> str:
    """``text`` with each framework module after ``-m`` that fs_compat has ported."""
    return _DASH_M.sub(lambda m: m.group(1) + (_runnable(m.group(2)) or m.group(2)), text)


def _module_string(node: cst.BaseExpression, new: str) -> cst.SimpleString:
    """``node`` (a string literal) spelling ``new`` instead, in its own quotes and prefix."""
    assert isinstance(node, cst.SimpleString)
    return node.with_changes(value=node.prefix + node.quote + new + node.quote)


def _after_dash_m(values: list[cst.BaseExpression]) -> dict[int, str]:
    """In a command's arguments (``[sys.executable, "-m", "bytewax.run", ...]``), the index and
    ported name of each framework module named right after ``"-m"``."""
    found: dict[int, str] = {}
    for i in range(1, len(values)):
        flag, module = values[i - 1], values[i]
        if not (isinstance(flag, cst.SimpleString) and isinstance(module, cst.SimpleString)):
            continue
        text = module.evaluated_value
        new = _runnable(text) if flag.evaluated_value == "-m" and isinstance(text, str) else None
        if new is not None:
            found[i] = new
    return found


class _Rewriter(cst.CSTTransformer):
    def __init__(self, roots: frozenset[str]) -> None:
        super().__init__()
        self._roots = roots

    def visit_Import(self, node: cst.Import) -> bool:  # noqa: N802 - libcst's name
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:  # noqa: N802 - libcst's name
        return False

    def leave_Import(self, original_node: cst.Import, updated_node: cst.Import) -> cst.Import:  # noqa: N802 - libcst's name
        names = []
        for alias in updated_node.names:
            new = _rename(get_full_name_for_node(alias.name) or "")
            names.append(alias if new is None else alias.with_changes(name=_dotted(new)))
        return updated_node.with_changes(names=names)

    def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom) -> cst.ImportFrom:  # noqa: N802 - libcst's name
        if updated_node.relative or updated_node.module is None:
            return updated_node
        new = _rename(get_full_name_for_node(updated_node.module) or "")
        return updated_node if new is None else updated_node.with_changes(module=_dotted(new))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:  # noqa: N802 - libcst's name
        """``patch("pyflink.common.time.get_gateway")`` (``unittest.mock.patch`` and its spellings):
        the target string names a module path, so it is ported as the imports are."""
        name = get_full_name_for_node(updated_node.func) or ""
        if name.rsplit(".", 1)[-1] != "patch" or not updated_node.args:
            return updated_node
        first = updated_node.args[0]
        if first.keyword is not None or not isinstance(first.value, cst.SimpleString):
            return updated_node
        text = first.value.evaluated_value
        new = _rename(text) if isinstance(text, str) else None
        if new is None:
            return updated_node
        literal = _module_string(first.value, new)
        return updated_node.with_changes(args=[first.with_changes(value=literal), *updated_node.args[1:]])

    def leave_List(self, original_node: cst.List, updated_node: cst.List) -> cst.List:  # noqa: N802 - libcst's name
        """``[sys.executable, "-m", "bytewax.run", ...]``: the module a command runs is ported."""
        return updated_node.with_changes(elements=self._commands(updated_node.elements))

    def leave_Tuple(self, original_node: cst.Tuple, updated_node: cst.Tuple) -> cst.Tuple:  # noqa: N802 - libcst's name
        return updated_node.with_changes(elements=self._commands(updated_node.elements))

    @staticmethod
    def _commands(elements: Sequence[cst.BaseElement]) -> list[cst.BaseElement]:
        found = _after_dash_m([e.value for e in elements])
        return [
            e.with_changes(value=_module_string(e.value, found[i])) if i in found else e
            for i, e in enumerate(elements)
        ]

    def leave_SimpleString(  # noqa: N802 - libcst's name
        self, original_node: cst.SimpleString, updated_node: cst.SimpleString
    ) -> cst.SimpleString:
        """``"python -m bytewax.run flow:flow"``: a command line in one string runs the ported module."""
        return updated_node.with_changes(value=_port_dash_m(updated_node.value))

    def leave_Expr(self, original_node: cst.Expr, updated_node: cst.Expr) -> cst.Expr:  # noqa: N802 - libcst's name
        """A string that is a statement (a docstring) is text about the code: left as it is."""
        if isinstance(original_node.value, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString):
            return updated_node.with_changes(value=original_node.value)
        return updated_node

    def leave_FormattedStringText(  # noqa: N802 - libcst's name
        self, original_node: cst.FormattedStringText, updated_node: cst.FormattedStringText
    ) -> cst.FormattedStringText:
        return updated_node.with_changes(value=_port_dash_m(updated_node.value))

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:  # noqa: N802 - libcst's name
        value = updated_node.value
        if isinstance(value, cst.Name) and value.value in self._roots:
            new = _rename(value.value)
            assert new is not None
            return updated_node.with_changes(
                value=_dotted(new).with_changes(lpar=value.lpar, rpar=value.rpar)
            )
        return updated_node
