"""The ``migrate`` codemod: every import form rewritten, nothing else touched, idempotent, and a
report of every use of an API fs_compat does not provide, computed against fs_compat itself."""

from __future__ import annotations

import inspect

import pytest

import fs_compat.datastream as fd
from fs_compat.cli._migrate import (
    METHOD_ADVICE,
    MODULE_ADVICE,
    NAME_ADVICE,
    Finding,
    migrate_source,
)
from fs_compat.common import Configuration


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("import pyflink\n", "import fs_compat\n"),
        ("import pyflink.datastream\n", "import fs_compat.datastream\n"),
        ("import pyflink.datastream as ds\n", "import fs_compat.datastream as ds\n"),
        ("import pyflink.datastream.state as st, os\n", "import fs_compat.datastream.state as st, os\n"),
        (
            "from pyflink.datastream import StreamExecutionEnvironment\n",
            "from fs_compat.datastream import StreamExecutionEnvironment\n",
        ),
        (
            "from pyflink.datastream import StreamExecutionEnvironment as Env\n",
            "from fs_compat.datastream import StreamExecutionEnvironment as Env\n",
        ),
        (
            "from pyflink.datastream.state import (ValueStateDescriptor, ListStateDescriptor)\n",
            "from fs_compat.datastream.state import (ValueStateDescriptor, ListStateDescriptor)\n",
        ),
        ("from pyflink import datastream\n", "from fs_compat import datastream\n"),
        ("from pyflink.common import *\n", "from fs_compat.common import *\n"),
        ("import bytewax\n", "import fs_compat.bytewax\n"),
        ("import bytewax.operators as op\n", "import fs_compat.bytewax.operators as op\n"),
        (
            "import bytewax.operators.windowing as win\n",
            "import fs_compat.bytewax.operators.windowing as win\n",
        ),
        ("from bytewax.dataflow import Dataflow\n", "from fs_compat.bytewax.dataflow import Dataflow\n"),
        ("from bytewax import operators as op\n", "from fs_compat.bytewax import operators as op\n"),
        (
            "from bytewax.testing import TestingSink, TestingSource, run_main\n",
            "from fs_compat.bytewax.testing import TestingSink, TestingSource, run_main\n",
        ),
    ],
)
def test_every_import_form_is_rewritten(before: str, after: str) -> None:
    result = migrate_source(before)
    assert result.code == after
    assert result.changed
    assert result.findings == ()


@pytest.mark.parametrize(
    "source",
    [
        "import os\nfrom collections import abc\n",
        "from . import pyflink\nfrom .bytewax import dataflow\n",  # relative imports are the project's own
        "import pyflinkish\nimport bytewax_extra as bx\nfrom pyflinkx import y\n",  # other packages
        "x = obj.pyflink.datastream\n",  # not the module
        "pyflink.datastream.X\n",  # `pyflink` is not bound by an import here
    ],
)
def test_other_code_is_left_alone(source: str) -> None:
    result = migrate_source(source)
    assert result.code == source
    assert not result.changed


def test_formatting_comments_and_line_endings_are_preserved() -> None:
    before = (
        "#!/usr/bin/env python\r\n"
        "# -*- coding: utf-8 -*-\r\n"
        '"""A job. It mentions pyflink.datastream in its docstring."""\r\n'
        "from pyflink.datastream.state import (  # the state API\r\n"
        "    ValueStateDescriptor,   # odd  spacing  stays\r\n"
        "    ListStateDescriptor ,\r\n"
        ")\r\n"
        "import  pyflink.common   as  common  # two spaces\r\n"
        "from   bytewax.dataflow import   Dataflow\r\n"
        "\r\n"
        "s = 'from pyflink.datastream import X'  # strings are not code\r\n"
        "def f( a ,b ):\r\n"
        "    return  a+b\r\n"
    )
    after = (
        "#!/usr/bin/env python\r\n"
        "# -*- coding: utf-8 -*-\r\n"
        '"""A job. It mentions pyflink.datastream in its docstring."""\r\n'
        "from fs_compat.datastream.state import (  # the state API\r\n"
        "    ValueStateDescriptor,   # odd  spacing  stays\r\n"
        "    ListStateDescriptor ,\r\n"
        ")\r\n"
        "import  fs_compat.common   as  common  # two spaces\r\n"
        "from   fs_compat.bytewax.dataflow import   Dataflow\r\n"
        "\r\n"
        "s = 'from pyflink.datastream import X'  # strings are not code\r\n"
        "def f( a ,b ):\r\n"
        "    return  a+b\r\n"
    )
    assert migrate_source(before).code == after


def test_attribute_chains_that_spell_the_module_are_rewritten() -> None:
    before = (
        "import pyflink.datastream\n"
        "import pyflink.common.typeinfo\n"
        "import bytewax.operators\n"
        "env = pyflink.datastream.StreamExecutionEnvironment.get_execution_environment()\n"
        "t = pyflink.common.typeinfo.Types.STRING()\n"
        "m = bytewax.operators.map\n"
        "f = (pyflink).datastream.KeyedProcessFunction\n"
    )
    after = (
        "import fs_compat.datastream\n"
        "import fs_compat.common.typeinfo\n"
        "import fs_compat.bytewax.operators\n"
        "env = fs_compat.datastream.StreamExecutionEnvironment.get_execution_environment()\n"
        "t = fs_compat.common.typeinfo.Types.STRING()\n"
        "m = fs_compat.bytewax.operators.map\n"
        "f = (fs_compat).datastream.KeyedProcessFunction\n"
    )
    result = migrate_source(before)
    assert result.code == after
    assert result.findings == ()


def test_aliases_keep_their_names() -> None:
    before = "import pyflink.datastream as ds\nimport bytewax.operators as op\nds.DataStream\nop.map\n"
    after = (
        "import fs_compat.datastream as ds\nimport fs_compat.bytewax.operators as op\nds.DataStream\nop.map\n"
    )
    result = migrate_source(before)
    assert result.code == after
    assert result.findings == ()


@pytest.mark.parametrize(
    "source",
    [
        "import pyflink.datastream\nimport bytewax\nx = pyflink.datastream.DataStream\ny = bytewax.inputs\n",
        "from pyflink.datastream.state import (\n    ValueStateDescriptor,  # c\n)\nimport bytewax.errors\n",
        "from pyflink.table import StreamTableEnvironment\nenv.add_source(x)\n",
    ],
)
def test_migration_is_idempotent(source: str) -> None:
    once = migrate_source(source, "job.py")
    twice = migrate_source(once.code, "job.py")
    assert once.changed
    assert twice.code == once.code
    assert not twice.changed
    assert [(f.line, f.advice) for f in twice.findings] == [(f.line, f.advice) for f in once.findings]


def test_finding_str() -> None:
    finding = Finding("jobs/a.py", 7, "pyflink.table", "use Spark SQL")
    assert str(finding) == "jobs/a.py:7: pyflink.table — use Spark SQL"


def test_unknown_name_is_a_finding_on_its_import_line() -> None:
    source = "from pyflink.datastream import (\n    DataStream,\n    NoSuchThing,\n)\n"
    result = migrate_source(source, "job.py")
    assert [str(f) for f in result.findings] == [
        "job.py:3: pyflink.datastream.NoSuchThing — fs_compat.datastream has no NoSuchThing; "
        "see migration_guide/pyflink.md for what fs-compat supports"
    ]


def test_name_fs_compat_has_elsewhere_says_where() -> None:
    result = migrate_source("from pyflink.common import OutputTag, Types\n", "job.py")
    assert [str(f) for f in result.findings] == [
        "job.py:1: pyflink.common.OutputTag — fs_compat.common has no OutputTag; "
        "import it from fs_compat.datastream"
    ]


def test_table_api_is_a_finding_once() -> None:
    source = (
        "from pyflink.datastream import StreamExecutionEnvironment\n"
        "from pyflink.table import StreamTableEnvironment\n"
        "env = StreamExecutionEnvironment.get_execution_environment()\n"
        "t_env = StreamTableEnvironment.create(env)\n"
    )
    result = migrate_source(source, "job.py")
    assert [str(f) for f in result.findings] == [
        "job.py:2: pyflink.table — the Table API and SQL are not ported: "
        "use Spark DataFrames / Spark SQL via env.from_dataframe(df) and ds.to_dataframe()"
    ]


def test_missing_module_gets_the_advice_of_its_closest_table_entry() -> None:
    source = (
        "import pyflink.table.expressions as expr\n"
        "from pyflink.datastream.connectors.jdbc import JdbcSink\n"
        "from pyflink.datastream.connectors.pulsar.source import PulsarSource\n"
    )
    findings = migrate_source(source, "job.py").findings
    assert [(f.line, f.name, f.advice) for f in findings] == [
        (1, "pyflink.table.expressions", MODULE_ADVICE["pyflink.table"]),
        (2, "pyflink.datastream.connectors.jdbc", MODULE_ADVICE["pyflink.datastream.connectors.jdbc"]),
        (
            3,
            "pyflink.datastream.connectors.pulsar.source",
            MODULE_ADVICE["pyflink.datastream.connectors.pulsar"],
        ),
    ]
    assert "env.from_dataframe(df)" in findings[1].advice


def test_bytewax_tracing_is_ported_and_no_finding() -> None:
    source = "from bytewax.tracing import JaegerConfig, OtlpTracingConfig, setup_tracing\n"
    assert migrate_source(source, "flow.py").findings == ()


def test_known_unsupported_method_calls_are_findings_with_their_advice() -> None:
    source = (
        "from pyflink.datastream import StreamExecutionEnvironment\n"
        "env = StreamExecutionEnvironment.get_execution_environment()\n"
        "env.enable_checkpointing(1000)\n"
        "ds = env.add_source(MySource())\n"
        "env \\\n"
        "    .execute_async('job')\n"
        "ds.add_sink(MySinkFunction())\n"  # supported: no finding
        "ds.sink_to(my_sink)\n"  # supported (connector sinks): no finding
    )
    findings = migrate_source(source, "job.py").findings
    assert [str(f) for f in findings] == [
        "job.py:3: StreamExecutionEnvironment.enable_checkpointing — accepted and ignored; checkpoints are "
        "Spark Structured Streaming's: set checkpointLocation on the query "
        "(ds.to_dataframe().writeStream.option('checkpointLocation', ...)); "
        "state lives in Spark's state store",
        "job.py:4: StreamExecutionEnvironment.add_source — source functions are not ported "
        "(FlinkKafkaConsumer is): use env.from_source(FileSource/KafkaSource ...), "
        "env.from_collection(...), or read with Spark and env.from_dataframe(df)",
        "job.py:6: StreamExecutionEnvironment.execute_async — use execute()",
    ]


def test_calls_that_need_the_jvm_are_findings() -> None:
    source = (
        "from pyflink.java_gateway import get_gateway\n"
        "import pyflink.java_gateway as gateway\n"
        "from pyflink.util.java_utils import get_j_env_configuration\n"
        "conf = get_j_env_configuration(env._j_stream_execution_environment)\n"  # passed on: fine
        "conf.setString('pekko.ask.timeout', '20 s')\n"
        "jvm = get_gateway().jvm\n"
        "gateway.launch_gateway()\n"
        "graph = env._j_stream_execution_environment.getStreamGraph(True)\n"
        "ds._j_data_stream.getTransformation()\n"
    )
    findings = migrate_source(source, "test_jvm.py").findings
    assert [(f.line, f.name) for f in findings] == [
        (6, "pyflink.java_gateway.get_gateway"),
        (7, "pyflink.java_gateway.launch_gateway"),
        (8, "_j_stream_execution_environment.getStreamGraph"),
        (9, "_j_data_stream.getTransformation"),
    ]
    assert all(f.advice.startswith("fs-compat runs without a JVM") for f in findings)
    # What the findings say holds: each of these calls raises, naming the JVM.
    from fs_compat.java_gateway import get_gateway, launch_gateway

    env = fd.StreamExecutionEnvironment.get_execution_environment()
    for call in (
        get_gateway,
        launch_gateway,
        lambda: env._j_stream_execution_environment.getStreamGraph(True),
        lambda: env.from_collection([1])._j_data_stream.getTransformation(),
    ):
        with pytest.raises(NotImplementedError, match="without a JVM"):
            call()


def test_methods_of_other_imported_modules_are_not_findings() -> None:
    source = "import mylib\nmylib.add_source(1)\nmylib.conn.sink_to(2)\n"
    assert migrate_source(source).findings == ()


def test_attributes_read_through_imported_modules_and_classes_are_checked() -> None:
    source = (
        "import bytewax.operators as op\n"
        "from pyflink.common import Types\n"
        "import pyflink.datastream\n"
        "s = op.stateful_map('count', s, f)\n"  # exists
        "s = op.no_such_operator('x', s)\n"
        "t = Types.STRING()\n"
        "u = Types.NO_SUCH_TYPE()\n"
        "m = pyflink.datastream.AsyncDataStream.unordered_wait\n"
        "def step(op):\n"
        "    return op.anything\n"  # a parameter, not the module
    )
    findings = migrate_source(source, "job.py").findings
    assert [str(f) for f in findings] == [
        "job.py:5: bytewax.operators.no_such_operator — fs_compat.bytewax.operators has no no_such_operator; "
        "see migration_guide/bytewax.md for what fs-compat supports",
        "job.py:7: pyflink.common.Types.NO_SUCH_TYPE — fs_compat.common.Types has no NO_SUCH_TYPE; "
        "see migration_guide/pyflink.md for what fs-compat supports",
        "job.py:8: pyflink.datastream.AsyncDataStream — " + NAME_ADVICE["pyflink.datastream.AsyncDataStream"],
    ]


def test_findings_are_in_line_order_and_name_already_migrated_code_as_written() -> None:
    source = (
        "from fs_compat.datastream import StreamExecutionEnvironment\n"
        "env = StreamExecutionEnvironment.get_execution_environment()\n"
        "env.execute_async('job')\n"
        "from fs_compat.table import TableEnvironment\n"
        "env.add_jars('file:///x.jar')\n"
    )
    result = migrate_source(source, "job.py")
    assert not result.changed
    assert [(f.line, f.name) for f in result.findings] == [
        (3, "StreamExecutionEnvironment.execute_async"),
        (4, "fs_compat.table"),
        (5, "StreamExecutionEnvironment.add_jars"),
    ]
    assert result.findings[1].advice == MODULE_ADVICE["pyflink.table"]


def test_syntax_error_names_the_file_and_line() -> None:
    with pytest.raises(SyntaxError) as info:
        migrate_source("import pyflink\ndef f(:\n    pass\n", "job.py")
    assert (info.value.filename, info.value.lineno, info.value.msg) == ("job.py", 2, "invalid syntax")


# --- the advice tables are honest: what they call unsupported really is --------------------


@pytest.mark.parametrize("name", sorted({**MODULE_ADVICE, **NAME_ADVICE}))
def test_every_table_entry_is_really_missing_and_reported(name: str) -> None:
    module, _, attr = name.rpartition(".")
    source = f"import {name}\n" if name in MODULE_ADVICE else f"from {module} import {attr}\n"
    findings = migrate_source(source, "job.py").findings
    assert len(findings) == 1, f"{name} is in the advice table, but fs_compat has it"
    assert findings[0].advice == {**MODULE_ADVICE, **NAME_ADVICE}[name]


def _public_classes() -> list[type]:
    return [getattr(fd, name) for name in fd.__all__ if inspect.isclass(getattr(fd, name))]


@pytest.mark.parametrize("method", sorted(METHOD_ADVICE))
def test_every_method_in_the_table_is_unsupported_or_a_no_op(method: str) -> None:
    config = Configuration()
    config.set_string("execution.target", "local")
    env = fd.StreamExecutionEnvironment.get_execution_environment(config)
    ds = env.from_collection([1, 2])
    instances: dict[type, object] = {
        fd.StreamExecutionEnvironment: env,
        fd.DataStream: ds,
        fd.KeyedStream: ds.key_by(lambda v: v),
    }
    owners = [cls for cls in _public_classes() if hasattr(cls, method)]
    if method == "enable_checkpointing":  # the one accepted no-op: returns the env, the job runs as before
        assert owners == [fd.StreamExecutionEnvironment]
        assert env.enable_checkpointing(1000) is env
        assert env.from_collection([1, 2]).map(lambda v: v * 10).execute_and_collect(limit=5) == [10, 20]
        return
    for owner in owners:
        bound = getattr(instances[owner], method)
        required = [
            p
            for p in inspect.signature(bound).parameters.values()
            if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        expected = (NotImplementedError, f"{method}.* is not supported by fs-compat")
        with pytest.raises(expected[0], match=expected[1]):
            bound(*[object()] * len(required))


def test_mock_patch_targets_are_ported_like_imports() -> None:
    source = (
        "from unittest.mock import patch\n"
        "import unittest.mock\n"
        "with patch('pyflink.common.time.get_gateway', side_effect=AssertionError()):\n"
        "    pass\n"
        'with unittest.mock.patch("bytewax.testing.run_main"):\n'
        "    pass\n"
        "patch('os.getcwd')\n"
        "print('pyflink.common')\n"
    )
    code = migrate_source(source).code
    assert "patch('fs_compat.common.time.get_gateway', side_effect=AssertionError())" in code
    assert 'unittest.mock.patch("fs_compat.bytewax.testing.run_main")' in code
    assert "patch('os.getcwd')" in code
    assert "print('pyflink.common')" in code  # only patch targets name a module


def test_the_module_a_command_runs_with_dash_m_is_ported() -> None:
    source = (
        '"""Run as ``python -m bytewax.run flows.py``."""\n'  # a docstring: text, left alone
        "import subprocess, sys\n"
        "subprocess.run([sys.executable, '-m', 'bytewax.run', 'flow:flow', '-w', '2'])\n"
        'args = (sys.executable, "-m", "bytewax.testing", "flows.py", "-m", "other.module")\n'
        "os.system('python -m bytewax.visualize flows.py')\n"
        "os.system(f'{sys.executable} -m bytewax.run {path}')\n"
        # Left alone: not after -m, not a framework module, not one fs_compat has.
        "names = ['bytewax.run', '--m bytewax.run', '-m bytewaxy', '-m pyflink.no_such_module']\n"
    )
    ported = migrate_source(source).code
    assert ported.splitlines() == [
        '"""Run as ``python -m bytewax.run flows.py``."""',
        "import subprocess, sys",
        "subprocess.run([sys.executable, '-m', 'fs_compat.bytewax.run', 'flow:flow', '-w', '2'])",
        'args = (sys.executable, "-m", "fs_compat.bytewax.testing", "flows.py", "-m", "other.module")',
        "os.system('python -m fs_compat.bytewax.visualize flows.py')",
        "os.system(f'{sys.executable} -m fs_compat.bytewax.run {path}')",
        "names = ['bytewax.run', '--m bytewax.run', '-m bytewaxy', '-m pyflink.no_such_module']",
    ]
    assert migrate_source(ported).code == ported  # idempotent
